"""A loaded VM's fields as the engine reads them, and its quantities in canonical form.

    namespace(vm) -> str                the VM's namespace ("default" when unset)
    template_spec(vm_spec, create=False) / volumes(vm_spec) / data_volume_templates(vm_spec)
    domain(vm_spec)                     the parts of `spec` the rules read, wrong shapes skipped
    normalize_vm(vm) / normalize_vmi_spec(spec)
                                        quantities in Kubernetes canonical form, in place

The VM is one `vm_decode.load_vm` returned: a private copy whose read fields have Go's shapes.
"""
from __future__ import annotations

from typing import Any

from instancetype.engine.spec import canonical_quantity


# --- the parts of a loaded VM ----------------------------------------------------------------
def namespace(vm: dict) -> str:
    meta = vm.get("metadata")
    ns = meta.get("namespace") if isinstance(meta, dict) else None
    return ns or "default"


def template_spec(vm_spec: dict, *, create: bool = False) -> dict | None:
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


def volumes(vm_spec: dict) -> list[dict]:
    tspec = template_spec(vm_spec)
    vols = tspec.get("volumes") if tspec else None
    return [v for v in vols if isinstance(v, dict)] if isinstance(vols, list) else []


def data_volume_templates(vm_spec: dict) -> list[dict]:
    dvts = vm_spec.get("dataVolumeTemplates")
    return [d for d in dvts if isinstance(d, dict)] if isinstance(dvts, list) else []


def domain(vm_spec: dict) -> dict | None:
    tspec = template_spec(vm_spec)
    dom = tspec.get("domain") if tspec else None
    return dom if isinstance(dom, dict) else None


# --- quantities in canonical form (as KubeVirt prints a decoded VM) ---------------------------
def _canon_map(m: Any, path: str) -> None:
    if isinstance(m, dict):
        for k, v in m.items():
            if v is not None:
                m[k] = canonical_quantity(v, f"{path}.{k}")


def _canon_key(obj: Any, key: str, path: str) -> None:
    if isinstance(obj, dict) and obj.get(key) is not None:
        obj[key] = canonical_quantity(obj[key], f"{path}.{key}")


def normalize_vmi_spec(spec: Any, path: str = "spec") -> None:
    """Rewrite the quantities of a VMI spec (or a VM template spec) in canonical form, in place."""
    if not isinstance(spec, dict):
        return
    dom = spec.get("domain")
    if isinstance(dom, dict):
        mem = dom.get("memory")
        if isinstance(mem, dict):
            _canon_key(mem, "guest", f"{path}.domain.memory")
            _canon_key(mem, "maxGuest", f"{path}.domain.memory")
            _canon_key(mem.get("reservedOverhead"), "addedOverhead", f"{path}.domain.memory.reservedOverhead")
        res = dom.get("resources")
        if isinstance(res, dict):
            _canon_map(res.get("requests"), f"{path}.domain.resources.requests")
            _canon_map(res.get("limits"), f"{path}.domain.resources.limits")
    vols = spec.get("volumes")
    if isinstance(vols, list):
        for vol in vols:
            if not isinstance(vol, dict):
                continue
            _canon_key(vol.get("emptyDisk"), "capacity", f"{path}.volumes.emptyDisk")
            _canon_key(vol.get("hostDisk"), "capacity", f"{path}.volumes.hostDisk")
            fields = (vol.get("downwardAPI") or {}).get("fields") if isinstance(vol.get("downwardAPI"), dict) else None
            if isinstance(fields, list):
                for f in fields:
                    if isinstance(f, dict):
                        _canon_key(f.get("resourceFieldRef"), "divisor", f"{path}.volumes.downwardAPI.fields")


def normalize_vm(vm: dict) -> dict:
    """Rewrite the quantities of a loaded VM in canonical form, in place; returns `vm`."""
    spec = vm.get("spec")
    if not isinstance(spec, dict):
        return vm
    for i, dvt in enumerate(data_volume_templates(spec)):
        dspec = dvt.get("spec")
        if not isinstance(dspec, dict):
            continue
        for claim in ("pvc", "storage"):
            res = dspec.get(claim, {}).get("resources") if isinstance(dspec.get(claim), dict) else None
            if isinstance(res, dict):
                base = f"spec.dataVolumeTemplates[{i}].spec.{claim}.resources"
                _canon_map(res.get("requests"), f"{base}.requests")
                _canon_map(res.get("limits"), f"{base}.limits")
    normalize_vmi_spec(template_spec(spec), "spec.template.spec")
    return vm
