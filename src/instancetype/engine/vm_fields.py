"""A loaded VM's fields as the engine reads them, and its quantities in canonical form.

    namespace(vm) -> str                the VM's namespace ("default" when unset)
    template_spec(vm_spec, create=False) / volumes(vm_spec) / data_volume_templates(vm_spec)
    domain(vm_spec)                     the parts of `spec` the rules read, wrong shapes skipped
    normalize_vm(vm) / normalize_vmi_spec(spec)
                                        quantities in Kubernetes canonical form, in place

The VM is one `vm_decode.load_vm` returned: a private copy whose read fields have Go's shapes
(expand runs `normalize_vm` on its own unchecked copy: wrong shapes are skipped there too).
"""
from __future__ import annotations

from typing import Any, Literal, overload

from instancetype.api.kinds import DEFAULT_NAMESPACE
from instancetype.engine.jsondata import dict_items
from instancetype.engine.spec import _canonical_str, canonical_quantity


# --- the parts of a loaded VM ----------------------------------------------------------------
def namespace(vm: dict[str, Any]) -> str:
    meta = vm.get("metadata")
    ns = meta.get("namespace") if isinstance(meta, dict) else None
    return ns or DEFAULT_NAMESPACE


@overload
def template_spec(vm_spec: dict[str, Any], *, create: Literal[True]) -> dict[str, Any]: ...
@overload
def template_spec(vm_spec: dict[str, Any], *, create: bool = False) -> dict[str, Any] | None: ...


def template_spec(vm_spec: dict[str, Any], *, create: bool = False) -> dict[str, Any] | None:
    """`spec.template.spec` of a loaded VM's spec; created (empty) when asked."""
    template = vm_spec.get("template")
    if not isinstance(template, dict):
        if not create:
            return None
        template = vm_spec["template"] = {}
    spec = template.get("spec")
    if not isinstance(spec, dict):
        if not create:
            return None
        spec = template["spec"] = {}
    return spec


def volumes(vm_spec: dict[str, Any]) -> list[dict[str, Any]]:
    tspec = template_spec(vm_spec)
    vols = tspec.get("volumes") if tspec else None
    return dict_items(vols)


def data_volume_templates(vm_spec: dict[str, Any]) -> list[dict[str, Any]]:
    return dict_items(vm_spec.get("dataVolumeTemplates"))


def domain(vm_spec: dict[str, Any]) -> dict[str, Any] | None:
    tspec = template_spec(vm_spec)
    dom = tspec.get("domain") if tspec else None
    return dom if isinstance(dom, dict) else None


# --- quantities in canonical form (as KubeVirt prints a decoded VM) ---------------------------
# On the hot path (every expand): field paths are only built for a badly typed value (`where`
# is called then). Run ONCE per VM, before apply/defaults copy values around: canonical text is
# not always a fixed point ("1953.125Ki" -> "2000000" (BinarySI) -> "2M").
def _canon_key(node: dict[str, Any], key: str, path: str, at: str) -> None:
    """node[key] in canonical form; `path` + `at` is node's field path (joined on error only)."""
    v = node.get(key)
    if v is not None:
        node[key] = _canonical_str(v) if type(v) is str else canonical_quantity(v, f"{path}{at}.{key}")


def _canon_map(m: Any, path: str, at: str) -> None:
    if type(m) is dict:
        for k, v in m.items():
            if v is not None:
                m[k] = _canonical_str(v) if type(v) is str else canonical_quantity(v, f"{path}{at}.{k}")


def normalize_vmi_spec(spec: Any, path: str = "spec") -> None:
    """Rewrite the quantities of a VMI spec (or a VM template spec) in canonical form, in place:
    kv_types' `quantity` / `map:quantity` fields. `path` is the field path of `spec`."""
    if type(spec) is not dict:
        return
    dom = spec.get("domain")
    if type(dom) is dict:
        mem = dom.get("memory")
        if type(mem) is dict:
            _canon_key(mem, "guest", path, ".domain.memory")
            _canon_key(mem, "maxGuest", path, ".domain.memory")
            ro = mem.get("reservedOverhead")
            if type(ro) is dict:
                _canon_key(ro, "addedOverhead", path, ".domain.memory.reservedOverhead")
        res = dom.get("resources")
        if type(res) is dict:
            _canon_map(res.get("requests"), path, ".domain.resources.requests")
            _canon_map(res.get("limits"), path, ".domain.resources.limits")
    vols = spec.get("volumes")
    if type(vols) is list:
        for i, vol in enumerate(vols):
            if type(vol) is not dict:
                continue
            d = vol.get("emptyDisk")
            if type(d) is dict:
                _canon_key(d, "capacity", path, f".volumes[{i}].emptyDisk")
            d = vol.get("hostDisk")
            if type(d) is dict:
                _canon_key(d, "capacity", path, f".volumes[{i}].hostDisk")
            dapi = vol.get("downwardAPI")
            if dapi is not None and type(dapi) is dict and type(dapi.get("fields")) is list:
                for j, f in enumerate(dapi["fields"]):
                    ref = f.get("resourceFieldRef") if type(f) is dict else None
                    if type(ref) is dict:
                        _canon_key(ref, "divisor", path, f".volumes[{i}].downwardAPI.fields[{j}].resourceFieldRef")


def normalize_vm(vm: dict[str, Any]) -> dict[str, Any]:
    """Rewrite the quantities of a VM (data volume templates, template spec) in canonical form,
    in place; returns `vm`. The VM's shape need not be checked first: wrong shapes are skipped."""
    spec = vm.get("spec")
    if type(spec) is not dict:
        return vm
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
                    for group in ("requests", "limits"):
                        m = res.get(group)
                        if type(m) is dict:
                            for k, v in m.items():
                                if v is not None:
                                    m[k] = _canonical_str(v) if type(v) is str else canonical_quantity(
                                        v, f"spec.dataVolumeTemplates[{i}].spec.{claim}.resources.{group}.{k}")
    template = spec.get("template")
    normalize_vmi_spec(template.get("spec") if type(template) is dict else None, "spec.template.spec")
    return vm
