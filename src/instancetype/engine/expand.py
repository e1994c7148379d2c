"""Expand a VirtualMachine: the instancetype and preference written into its template.

Public (stable):

    expand(vm, *, instancetype=None, preference=None, objects=(), config=None) -> dict
        What `virtctl expand` / the `expand-vm-spec` API returns (pkg/instancetype/expand):
        1. a VM without `spec.instancetype` and `spec.preference` comes back unchanged (with its
           quantities in canonical form, as KubeVirt prints them);
        2. the instancetype spec, then the preference spec: a given `instancetype`/`preference`
           (bare spec or whole object) is the one found for the VM's matcher; otherwise the
           matcher is resolved against `objects` (engine/find.py). A given spec without the
           matching matcher in the VM is ignored (KubeVirt looks nothing up then);
        3. on a copy of the template: default disks, default pod network, the core applier
           (root `spec.template.spec`), KubeVirt's VMI spec defaults;
        4. `spec.instancetype`, `spec.preference`, `status.instancetypeRef`,
           `status.preferenceRef` removed.
        Errors: ConflictError(fields=[...]) with KubeVirt's conflict text, NotFoundError,
        UnexpectedKindError, DefaultsError (pod network configuration), DecodeError,
        QuantityError. The argument is never mutated.
    canonical_quantities(vm) / canonical_spec_quantities(spec, root="spec.template.spec")
        Rewrite in place every quantity field of a VirtualMachine / of a VMI spec or template
        spec in Kubernetes canonical form ("1.5Gi" -> "1536Mi", "2000m" -> "2"); the fields
        are kv_types' `quantity`/`map:quantity` ones (as engine/vm_fields.normalize_vm, but
        field paths are only built for a bad value: this is on the hot path). Run it ONCE,
        before apply/defaults copy values around: canonical text is not always a fixed point
        ("1953.125Ki" -> "2000000" (BinarySI) -> "2M").

The VM's shape is not checked up front (that costs as much as the expansion): a VM whose
fields have the wrong JSON types fails somewhere in the pipeline and is then run through
engine/vm_decode.load_vm for Go's decode error naming the field.
"""
from __future__ import annotations

from typing import Any, Iterable

import msgspec

from instancetype.engine.apply import apply_to_spec, conflict_message
from instancetype.engine.defaults import set_default_network_interface, set_default_volume_disk
from instancetype.engine.guard import public
from instancetype.engine.find import find_instancetype, find_preference, index_for
from instancetype.engine.spec import _canonical_str, canonical_quantity, instancetype_spec, preference_spec
from instancetype.engine.vm_decode import load_vm
from instancetype.engine.vmi_defaults import cluster_config, set_vmi_spec_defaults
from instancetype.errors import ConflictError, DecodeError
from instancetype.jsonutil import clone

ROOT = "spec.template.spec"

_PACK = msgspec.msgpack.Encoder().encode
_UNPACK = msgspec.msgpack.Decoder().decode


def _copy(vm: dict) -> dict:
    """A deep copy of JSON data; a msgpack round trip is ~3x faster than jsonutil.clone.

    Falls back to clone for what msgpack cannot carry (e.g. integers beyond 64 bits).
    """
    try:
        return _UNPACK(_PACK(vm))
    except (TypeError, ValueError, OverflowError, msgspec.MsgspecError):
        return clone(vm)


def _q(node: dict, key: str, where) -> None:
    """node[key] in canonical form; `where()` names the field, only for a badly typed value."""
    v = node.get(key)
    if v is None:
        return
    node[key] = _canonical_str(v) if type(v) is str else canonical_quantity(v, f"{where()}.{key}")


def _qmap(m: Any, where) -> None:
    if type(m) is dict:
        for k, v in m.items():
            if v is not None:
                m[k] = _canonical_str(v) if type(v) is str else canonical_quantity(v, f"{where()}.{k}")


def canonical_spec_quantities(spec: dict, root: str = ROOT) -> None:
    """The quantity fields of a VMI spec / VM template spec (kv_types `quantity`, `map:quantity`)."""
    dom = spec.get("domain")
    if type(dom) is dict:
        mem = dom.get("memory")
        if type(mem) is dict:
            _q(mem, "guest", lambda: f"{root}.domain.memory")
            _q(mem, "maxGuest", lambda: f"{root}.domain.memory")
            ro = mem.get("reservedOverhead")
            if type(ro) is dict:
                _q(ro, "addedOverhead", lambda: f"{root}.domain.memory.reservedOverhead")
        res = dom.get("resources")
        if type(res) is dict:
            _qmap(res.get("requests"), lambda: f"{root}.domain.resources.requests")
            _qmap(res.get("limits"), lambda: f"{root}.domain.resources.limits")
    vols = spec.get("volumes")
    if type(vols) is list:
        for i, vol in enumerate(vols):
            if type(vol) is not dict:
                continue
            for src in ("emptyDisk", "hostDisk"):
                d = vol.get(src)
                if type(d) is dict:
                    _q(d, "capacity", lambda: f"{root}.volumes[{i}].{src}")
            dapi = vol.get("downwardAPI")
            if type(dapi) is dict and type(dapi.get("fields")) is list:
                for j, f in enumerate(dapi["fields"]):
                    ref = f.get("resourceFieldRef") if type(f) is dict else None
                    if type(ref) is dict:
                        _q(ref, "divisor", lambda: f"{root}.volumes[{i}].downwardAPI.fields[{j}].resourceFieldRef")


def canonical_quantities(vm: dict) -> None:
    """The quantity fields of a VirtualMachine: data volume templates and the template spec."""
    spec = vm.get("spec")
    if type(spec) is not dict:
        return
    dvts = spec.get("dataVolumeTemplates")
    if type(dvts) is list:
        for i, dvt in enumerate(dvts):
            dspec = dvt.get("spec") if type(dvt) is dict else None
            if type(dspec) is not dict:
                continue
            for claim in ("pvc", "storage"):
                c = dspec.get(claim)
                res = c.get("resources") if type(c) is dict else None
                if type(res) is dict:
                    base = f"spec.dataVolumeTemplates[{i}].spec.{claim}.resources"
                    _qmap(res.get("requests"), lambda: f"{base}.requests")
                    _qmap(res.get("limits"), lambda: f"{base}.limits")
    template = spec.get("template")
    tspec = template.get("spec") if type(template) is dict else None
    if type(tspec) is dict:
        canonical_spec_quantities(tspec)


def _child(parent: dict, key: str, where: str) -> dict:
    v = parent.get(key)
    if v is None:
        v = parent[key] = {}
    elif type(v) is not dict:
        raise DecodeError(f"{where}: must be an object")
    return v


@public("expand VirtualMachine")
def expand(vm: dict, *, instancetype: Any = None, preference: Any = None,
           objects: Iterable[dict] = (), config: Any = None) -> dict:
    return _expand(vm, instancetype, preference, objects, config)


def _expand(vm: dict, instancetype: Any, preference: Any, objects: Iterable[dict], config: Any) -> dict:
    if not isinstance(vm, dict):
        load_vm(vm)
    spec = vm.get("spec") or {}
    has_it = spec.get("instancetype") is not None
    has_pref = spec.get("preference") is not None
    if not has_it and not has_pref:
        out = _copy(vm)
        canonical_quantities(out)
        return out

    cfg = cluster_config(config)
    index = None
    it = None
    pref = None
    if has_it:
        if instancetype is not None:
            it = instancetype_spec(instancetype)
        else:
            index = index_for(vm, objects)
            it = find_instancetype(vm, index)
    if has_pref:
        if preference is not None:
            pref = preference_spec(preference)
        else:
            index = index or index_for(vm, objects)
            pref = find_preference(vm, index)

    out = _copy(vm)
    # Canonical form exactly once, before anything is derived: canonical text does not always
    # read back in its format ("1953.125Ki" prints "2000000", which reads as DecimalSI and
    # would print "2M"), while Go keeps the Quantity object (and its format) when it copies
    # a value (guest memory from requests, the instancetype's guest, ...).
    canonical_quantities(out)
    ospec = out["spec"]
    template = _child(ospec, "template", "spec.template")
    tspec = _child(template, "spec", ROOT)
    metadata = _child(template, "metadata", "spec.template.metadata")

    set_default_volume_disk(tspec)
    set_default_network_interface(tspec, cfg)
    conflicts = apply_to_spec(tspec, metadata, it, pref, root=ROOT)
    if conflicts:
        raise ConflictError(conflict_message(conflicts), fields=conflicts)
    set_vmi_spec_defaults(tspec, cfg)

    ospec.pop("instancetype", None)
    ospec.pop("preference", None)
    status = out.get("status")
    if type(status) is dict:
        status.pop("instancetypeRef", None)
        status.pop("preferenceRef", None)
    return out
