"""The volume hotplug rules virt-api's subresources (controller/volume_hotplug.py) and the VM
controller's step (controller/vmsync/volumes.py) share: the feature gates (featuregate.IsEnabled of
`HotplugVolumes`, deprecated, and `DeclarativeHotplugVolumes`, Beta), verifyVolumeOption,
`controller.ApplyVolumeRequestOnVMISpec` (pkg/controller/controller.go), storagetypes'
IsDeclarativeHotplugVolume, vmiVolumePatch (pkg/virt-api/rest/volumes.go) with the VMI update
validator's hotplug checks (pkg/storage/admitters AdmitHotplugStorage), and the simulated node's
report of what it attached (`node.volume_status`) written with the patched VMI.
"""
from __future__ import annotations

from typing import Any

from instancetype.engine.vm_validation import Gates
from instancetype.jsonutil import clone
from instancetype.store.base import APIError, BadRequest, Conflict, Invalid, NotFound, Store, internal_error

from . import node

VMI_RESOURCE = "virtualmachineinstance.kubevirt.io"
HOTPLUG_GATE, DECLARATIVE_GATE = "HotplugVolumes", "DeclarativeHotplugVolumes"
NOT_ENABLED = "Enable DeclarativeHotplugVolumes or HotplugVolumes feature gate to use this API."
VMI_NOT_RUNNING = "VMI is not running"


def hotplug_gate(config: dict | None) -> bool:
    """HotplugVolumesEnabled: the deprecated gate, off unless listed."""
    return HOTPLUG_GATE in Gates(config)


def declarative_gate(config: dict | None) -> bool:
    """DeclarativeHotplugVolumesEnabled: Beta in v1.9, on unless disabled."""
    return Gates(config).beta(DECLARATIVE_GATE)


def check_enabled(config: dict | None) -> None:
    if not (hotplug_gate(config) or declarative_gate(config)):
        raise BadRequest(NOT_ENABLED)


def _source_name(volume: dict) -> str:
    """The DataVolume's or claim's name a volume (or HotplugVolumeSource) refers to, else ""."""
    dv, pvc = volume.get("dataVolume"), volume.get("persistentVolumeClaim")
    if isinstance(dv, dict):
        return dv.get("name") or ""
    if isinstance(pvc, dict):
        return pvc.get("claimName") or ""
    return ""


def hotpluggable(volume: dict) -> bool:
    """storagetypes.IsDeclarativeHotplugVolume: a DataVolume or claim marked hotpluggable."""
    return any(isinstance(volume.get(k), dict) and volume[k].get("hotpluggable") is True
               for k in ("dataVolume", "persistentVolumeClaim"))


def verify(volumes: list, request: dict) -> str | None:
    """verifyVolumeOption: why the request cannot apply to `volumes`, or None."""
    add, remove = request.get("addVolumeOptions"), request.get("removeVolumeOptions")
    for volume in volumes:
        if not isinstance(volume, dict):
            continue
        if add is not None:
            source = _source_name(add.get("volumeSource") or {})
            if volume.get("name") == add.get("name"):
                return f"Unable to add volume [{add.get('name')}] because volume with that name already exists"
            if source and _source_name(volume) == source:
                return f"Unable to add volume source [{source}] because it already exists"
        elif remove is not None and remove.get("name") in (volume.get("name"), _source_name(volume) or None):
            if not hotpluggable(volume):
                return f"Unable to remove volume [{volume.get('name')}] because it is not hotpluggable"
            return None
    if remove is not None:
        return f"Unable to remove volume [{remove.get('name')}] because it does not exist"
    return None


def apply_request(spec: dict, request: dict) -> dict:
    """ApplyVolumeRequestOnVMISpec: `spec` (a VMI spec, changed in place and returned) with the
    volume and disk added, or both removed."""
    add, remove = request.get("addVolumeOptions"), request.get("removeVolumeOptions")
    devices = spec.setdefault("domain", {}).setdefault("devices", {})
    volumes = [v for v in spec.get("volumes") or () if isinstance(v, dict)]
    disks = [d for d in devices.get("disks") or () if isinstance(d, dict)]
    if add is not None:
        name = add.get("name")
        if any(v.get("name") == name for v in volumes):
            return spec
        volume: dict[str, Any] = {"name": name}
        source = add.get("volumeSource") or {}
        for kind in ("persistentVolumeClaim", "dataVolume"):
            if source.get(kind) is not None:
                volume[kind] = {**source[kind], "hotpluggable": True}
                break
        spec["volumes"] = volumes + [volume]
        if add.get("disk") is not None:
            devices["disks"] = disks + [{**clone(add["disk"]), "name": name}]
    elif remove is not None:
        name = remove.get("name")
        spec["volumes"] = [v for v in volumes if v.get("name") != name]
        devices["disks"] = [d for d in disks if d.get("name") != name]
    return spec


def conflict(resource: str, name: str, detail: str) -> Conflict:
    return Conflict(f'Operation cannot be fulfilled on {resource} "{name}": {detail}', kind=resource, name=name)


def patch_failed(what: str, e: APIError) -> APIError:
    """virt-api's answer when its patch fails: an Invalid error as the API server gave it, a
    Conflict to retry (the read is stale), anything else `unable to patch ...`."""
    if isinstance(e, (Invalid, Conflict)):
        return e
    return internal_error(f"unable to patch {what}: {e}")


def owned_by_vm(vmi: dict) -> bool:
    """ownedByVirtualMachine: the VMI's controller is a kubevirt.io/v1 VirtualMachine."""
    return any(isinstance(r, dict) and r.get("controller") and r.get("kind") == "VirtualMachine"
               and r.get("apiVersion") == "kubevirt.io/v1"
               for r in (vmi.get("metadata") or {}).get("ownerReferences") or ())


def vmi_patch(store: Store, vmi: dict, request: dict, config: dict | None) -> dict:
    """vmiVolumePatch on the VMI as read: owned by a VM only with HotplugVolumes; Running; the
    volume and disk patched into its spec; then the simulated node's report of the volume
    (`node.volume_status`), in the same write."""
    check_vmi(vmi, request, config)
    changed = clone(vmi)
    apply_request(changed.setdefault("spec", {}), request)
    try:
        return hotplugged(store, vmi, changed)
    except APIError as e:
        raise patch_failed("vmi", e) from None


def hotplugged(store: Store, vmi: dict, changed: dict) -> dict:
    """Write `changed` (the VMI with its volumes patched) with the volume status the simulated
    node reports for it; KubeVirt's VMI CRD has no status subresource, a store that serves one
    gets the status through it."""
    _admit_vmi_update(vmi, changed)
    changed["status"] = node.volume_status(changed, lambda kind, n: lookup(store, kind, n, changed))
    written = store.update(changed)
    if written.get("status") != changed["status"]:
        written = store.update({**written, "status": changed["status"]}, subresource="status")
    return written


VMI_UPDATE_VALIDATOR = "virtualmachineinstances-update-validator.kubevirt.io"


def _admit_vmi_update(old: dict, new: dict) -> None:
    """The VMI update validator's verifyHotplugVolumes for the volumes added (AdmitHotplugStorage):
    a claim or DataVolume, with a disk whose configuration a hotplug allows."""
    from instancetype.engine.vm_validation.volume_requests import hotplug_disk

    before = {v.get("name") for v in (old.get("spec") or {}).get("volumes") or () if isinstance(v, dict)}
    spec = new.get("spec") or {}
    disks = {d.get("name"): d for d in ((spec.get("domain") or {}).get("devices") or {}).get("disks") or ()
             if isinstance(d, dict)}
    for volume in spec.get("volumes") or ():
        name = volume.get("name") if isinstance(volume, dict) else None
        if name is None or name in before:
            continue
        if volume.get("dataVolume") is None and volume.get("persistentVolumeClaim") is None:
            message = f"volume {name} is not a PVC or DataVolume"
        elif name not in disks:
            message = f"disk {name} does not exist"
        else:
            causes = hotplug_disk(disks[name], name, "Hotplug configuration", "")
            message = ", ".join(c.message for c in causes)
        if message:
            raise Invalid(f'admission webhook "{VMI_UPDATE_VALIDATOR}" denied the request: {message}')


def lookup(store: Store, kind: str, name: str, vmi: dict) -> dict | None:
    try:
        return store.get(kind, name, (vmi.get("metadata") or {}).get("namespace"))
    except NotFound:
        return None


def check_vmi(vmi: dict, request: dict, config: dict | None) -> None:
    """vmiVolumePatch's checks, in its order."""
    name = (vmi.get("metadata") or {}).get("name") or ""
    namespace = (vmi.get("metadata") or {}).get("namespace") or "default"
    if owned_by_vm(vmi) and not hotplug_gate(config):
        raise BadRequest(f"VMI {namespace}/{name} is owned by a VM")
    if (vmi.get("status") or {}).get("phase") != "Running":
        raise conflict(VMI_RESOURCE, name, VMI_NOT_RUNNING)
    problem = verify((vmi.get("spec") or {}).get("volumes") or [], request)
    if problem:
        raise conflict(VMI_RESOURCE, name, problem)
