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
        Quantities are put in canonical form once, on the copy, before anything is derived
        (engine/vm_fields.normalize_vm).

The VM's shape is not checked up front (that costs as much as the expansion): a VM whose
fields have the wrong JSON types fails somewhere in the pipeline and is then run through
engine/vm_decode.load_vm for Go's decode error naming the field.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from instancetype.engine.apply import apply_normalised, conflict_message
from instancetype.engine.defaults import set_default_network_interface, set_default_volume_disk
from instancetype.engine.find import find_instancetype, find_preference, index_for
from instancetype.engine.guard import public
from instancetype.engine.jsondata import copy_json
from instancetype.engine.spec import NormalisedSpec, instancetype_spec, preference_spec
from instancetype.engine.virt_config import cluster_config
from instancetype.engine.vm_fields import normalize_vm
from instancetype.engine.vmi_defaults import set_vmi_spec_defaults
from instancetype.errors import ConflictError, DecodeError

ROOT = "spec.template.spec"


def _child(parent: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    v = parent.get(key)
    if v is None:
        v = parent[key] = {}
    elif type(v) is not dict:
        raise DecodeError(f"{where}: must be an object")
    return v


@public("expand VirtualMachine")
def expand(vm: dict[str, Any], *, instancetype: Any = None, preference: Any = None,
           objects: Iterable[dict[str, Any]] = (), config: Any = None) -> dict[str, Any]:
    if not isinstance(vm, dict):
        from instancetype.engine.vm_decode import load_vm  # (its error; a VM that is a dict never needs it here)

        load_vm(vm)
    spec = vm.get("spec") or {}
    has_it = spec.get("instancetype") is not None
    has_pref = spec.get("preference") is not None
    if not has_it and not has_pref:
        return normalize_vm(copy_json(vm))

    cfg = cluster_config(config)
    index = None
    it: NormalisedSpec | None = None
    pref: NormalisedSpec | None = None
    if has_it:
        if instancetype is not None:
            it = instancetype_spec(instancetype)
        else:
            index = index_for(vm, objects)
            it = cast("NormalisedSpec | None", find_instancetype(vm, index))   # (find normalises)
    if has_pref:
        if preference is not None:
            pref = preference_spec(preference)
        else:
            if index is None:   # (an ObjectIndex over the store is empty, hence falsy)
                index = index_for(vm, objects)
            pref = cast("NormalisedSpec | None", find_preference(vm, index))

    out = copy_json(vm)
    # Canonical form exactly once, before anything is derived: canonical text does not always
    # read back in its format ("1953.125Ki" prints "2000000", which reads as DecimalSI and
    # would print "2M"), while Go keeps the Quantity object (and its format) when it copies
    # a value (guest memory from requests, the instancetype's guest, ...).
    normalize_vm(out)
    ospec = out["spec"]
    template = ospec.get("template")
    tspec = metadata = None
    if type(template) is dict:
        tspec, metadata = template.get("spec"), template.get("metadata")
    if type(tspec) is not dict or type(metadata) is not dict:     # (absent, or the wrong shape)
        template = _child(ospec, "template", "spec.template")
        tspec = _child(template, "spec", ROOT)
        metadata = _child(template, "metadata", "spec.template.metadata")

    set_default_volume_disk(tspec)
    set_default_network_interface(tspec, cfg)
    conflicts = apply_normalised(tspec, metadata, it, pref, ROOT)
    if conflicts:
        raise ConflictError(conflict_message(conflicts), fields=conflicts)
    set_vmi_spec_defaults(tspec, cfg, network_and_disks_done=True)

    ospec.pop("instancetype", None)
    ospec.pop("preference", None)
    status = out.get("status")
    if type(status) is dict:
        status.pop("instancetypeRef", None)
        status.pop("preferenceRef", None)
    return out
