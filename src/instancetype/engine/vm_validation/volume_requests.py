"""The VM's status volume requests (KubeVirt vms-admitter.go validateVolumeRequests with
storage admitters ValidateHotplugDiskConfiguration), without a running VMI to compare with."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from instancetype.engine.vm_validation.spec import Context

from typing import Any

from instancetype.engine.vm_validation._common import _E, INVALID, cause

FIELD = "Status.volumeRequests"


def hotplug_disk(disk: Any, name: str, prefix: str = "AddVolume request", field: str = FIELD) -> list[Any]:
    """ValidateHotplugDiskConfiguration (pkg/storage/admitters): `prefix` and `field` name the caller
    (a volume request; the VMI update validator's "Hotplug configuration", no field)."""
    if disk is None:
        return [cause(INVALID, f"{prefix} for [{name}] requires the disk field to be set.", field)]
    disk = (disk or _E)
    bus = ""
    for kind in ("disk", "lun", "cdrom"):
        if disk.get(kind) is not None:
            bus = ((disk[kind] or _E).get("bus") or "")
            break
    if disk.get("disk") is not None:
        if bus not in ("scsi", "virtio"):
            return [cause(INVALID, f"{prefix} for disk [{name}] requires bus to be 'scsi' or 'virtio'. [{bus}] is not "
                          f"permitted.", field)]
    elif disk.get("lun") is not None:
        if bus != "scsi":
            return [cause(INVALID, f"{prefix} for LUN [{name}] requires bus to be 'scsi'. [{bus}] is not permitted.",
                          field)]
    else:
        return [cause(INVALID, f"{prefix} for [{name}] requires diskDevice of type 'disk' or 'lun' to be used.", field)]
    if disk.get("dedicatedIOThread") is True and bus != "virtio":
        return [cause(INVALID, f"{prefix} for [{name}] requires virtio bus for IOThreads.", field)]
    boot = disk.get("bootOrder")
    if boot is not None and boot < 1:
        return [cause(INVALID, "spec.domain.devices.disks[1] must have a boot order > 0, if supplied",
                      "spec.domain.devices.disks[1].bootOrder")]
    return []


def validate_volume_requests(vm: dict[str, Any], ctx: Context,
                             validate_vmi_spec: Callable[[str, dict[str, Any], Context], list[Any]]) -> list[Any]:
    requests = ((vm.get("status") or _E).get("volumeRequests") or ())
    if not requests:
        return []
    tspec = (((vm.get("spec") or _E).get("template") or _E).get("spec") or _E)
    vm_volumes = {(v.get("name") or ""): v for v in (tspec.get("volumes") or ())}
    added: set[Any] = set()
    removed: set[Any] = set()
    new_volumes = [dict(v) for v in (tspec.get("volumes") or ())]
    new_disks = [dict(x) for x in (((tspec.get("domain") or _E).get("devices") or _E).get("disks") or ())]
    for req in requests:
        add, rem = req.get("addVolumeOptions"), req.get("removeVolumeOptions")
        if add is not None and rem is not None:
            return [cause(INVALID, "VolumeRequests require either addVolumeOptions or removeVolumeOptions to be set, "
                          "not both", FIELD)]
        if add is not None:
            add = (add or _E)
            name = (add.get("name") or "")
            if name in added:
                return [cause(INVALID, f"AddVolume request for [{name}] aleady exists", FIELD)]
            problem = hotplug_disk(add.get("disk"), name)
            if problem:
                return problem
            source = (add.get("volumeSource") or _E)
            new_volume = {"name": name}
            if source.get("persistentVolumeClaim") is not None:
                new_volume["persistentVolumeClaim"] = source["persistentVolumeClaim"]
            elif source.get("dataVolume") is not None:
                new_volume["dataVolume"] = source["dataVolume"]
            if name in vm_volumes and vm_volumes[name] != new_volume:
                return [cause(INVALID, f"AddVolume request for [{name}] conflicts with an existing volume of the same "
                              f"name on the vmi template.", FIELD)]
            added.add(name)
            if name not in {(v.get("name") or "") for v in new_volumes}:
                new_volumes.append(new_volume)
                disk = dict(add.get("disk") or _E)
                disk["name"] = name
                new_disks.append(disk)
        elif rem is not None:
            name = ((rem or _E).get("name") or "")
            if name in removed:
                return [cause(INVALID, f"RemoveVolume request for [{name}] aleady exists", FIELD)]
            removed.add(name)
            new_volumes = [v for v in new_volumes if (v.get("name") or "") != name]
            new_disks = [x for x in new_disks if (x.get("name") or "") != name]
        else:
            return [cause(INVALID, "VolumeRequests require one of either addVolumeOptions or removeVolumeOptions to be "
                          "set", FIELD)]
    new_spec = dict(tspec)
    new_spec["volumes"] = new_volumes
    domain = dict(tspec.get("domain") or _E)
    domain["devices"] = {**(domain.get("devices") or _E), "disks": new_disks}
    new_spec["domain"] = domain
    return validate_vmi_spec("spec.template.spec", new_spec, ctx)
