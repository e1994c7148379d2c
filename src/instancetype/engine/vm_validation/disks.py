"""Disks, volumes and boot order of a VMI spec (KubeVirt pkg/storage/admitters/vmi.go:
ValidateDisks, validateBootOrder with validateInterfaceBootOrder, validateVolumes,
ValidateContainerDisks / ValidatePath).

`field` is the path of the VMI spec (`spec.template.spec` for a VM). Where KubeVirt builds a
path from an already nested one (`disks.domain.devices.disks[0].name`), so do we: those paths
are part of its answer.
"""
from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from instancetype.engine.vm_validation import cloudinit
from instancetype.engine.vm_validation._common import (
    _E,
    INVALID,
    NOT_FOUND,
    NOT_FOUND_FMT,
    NOT_SUPPORTED,
    REQUIRED,
    Gates,
    cause,
    dns1123_label_errors,
    pci_address_ok,
    quantity,
)

_SERIAL_RE = re.compile(r"^[A-Za-z0-9_.+-]+$")
_BUSES = ("virtio", "scsi", "sata", "usb")
_ERROR_POLICIES = ("stop", "ignore", "report", "enospace")
_VOLUME_SOURCES = ("persistentVolumeClaim", "sysprep", "cloudInitNoCloud", "cloudInitConfigDrive",
                   "containerDisk", "ephemeral", "emptyDisk", "hostDisk", "dataVolume", "configMap",
                   "secret", "downwardAPI", "serviceAccount", "downwardMetrics", "memoryDump")
_SOURCE_SET = frozenset(_VOLUME_SOURCES)
_CLOUD_INIT = frozenset(("cloudInitNoCloud", "cloudInitConfigDrive"))
_PLAIN_SOURCES = frozenset(("persistentVolumeClaim", "sysprep", "containerDisk", "ephemeral", "emptyDisk",
                            "dataVolume", "downwardAPI"))


def _target(disk: dict[str, Any]) -> tuple[str, str]:
    """getDiskType / getDiskBus: the first device target set, and its bus."""
    for kind in ("disk", "lun", "cdrom"):
        t = disk.get(kind)
        if t is not None:
            return kind, ((t or _E).get("bus") or "")
    return "", ""


_PLAIN_DISK_KEYS = frozenset(("name", "disk", "cdrom", "lun", "bootOrder"))
_PLAIN_TARGET_KEYS = frozenset(("bus", "readonly"))


@lru_cache(maxsize=4096)
def _name_errors(name: str) -> tuple[Any, ...]:
    return tuple(dns1123_label_errors(name))


def _plain(disk: dict[str, Any]) -> bool:
    """A disk no rule of ValidateDisks but the name ones can refuse: only a name, at most one
    target (a known bus, no read-only SATA disk) and a positive boot order."""
    if not _PLAIN_DISK_KEYS.issuperset(disk):
        return False
    target = None
    for kind in ("disk", "cdrom", "lun"):
        t = disk.get(kind)
        if t is not None:
            if target is not None or type(t) is not dict or not _PLAIN_TARGET_KEYS.issuperset(t):
                return False
            target = (kind, t)
    if target is not None:
        kind, t = target
        bus = t.get("bus") or ""
        if bus and (bus not in ("virtio", "scsi", "sata", "usb") or (kind == "cdrom" and bus == "virtio")
                    or (bus == "sata" and kind == "disk" and t.get("readonly") is True)):
            return False
    boot = disk.get("bootOrder")
    return boot is None or boot >= 1


def validate_disks(field: str, disks: Sequence[Any]) -> list[Any]:
    """ValidateDisks: `field` is `<spec>.domain.devices.disks`."""
    causes = []
    nested = f"{field}.domain.devices.disks"
    names: dict[str, Any] = {}
    for idx, disk in enumerate(disks):
        name = disk.get("name") or ""
        if name not in names and _plain(disk):
            names[name] = idx
            for err in _name_errors(name):
                causes.append(cause(INVALID, err, f"{nested}[{idx}].name"))
            continue
        names.setdefault(name, idx)
        causes.extend(_validate_disk(field, nested, disks, idx, disk, name))
    return causes


def _validate_disk(field: str, nested: str, disks: Sequence[Any], idx: int, disk: dict[str, Any], name: str) -> list[Any]:
    causes = []
    at = f"{field}[{idx}]"
    for other in range(idx):     # validateDiskName
        if (disks[other].get("name") or "") == name:
            causes.append(cause(INVALID, f"{at} and {field}[{other}] must not have the same Name.", f"{at}.name"))
    targets = sum(1 for k in ("disk", "lun", "cdrom") if disk.get(k) is not None)
    if targets > 1:         # validateDeviceTarget
        causes.append(cause(INVALID, f"{at} can only have a single target type defined", at))
    target = disk.get("disk")
    pci = ((target or _E).get("pciAddress") or "")
    if target is not None and pci:     # validatePciAddress
        where = f"{nested}.disk[{idx}]"
        if (target.get("bus") or "") != "virtio":
            causes.append(cause(INVALID, f"disk {where}.name - setting a PCI address is only possible with bus "
                                f"type virtio.", f"{where}.pciAddress"))
        if not pci_address_ok(pci):
            causes.append(cause(INVALID, f"disk {where}.name has malformed PCI address ({pci}).",
                                f"{where}.pciAddress"))
    boot = disk.get("bootOrder")
    if boot is not None and boot < 1:    # validateBootOrderValue
        causes.append(cause(INVALID, f"{at} must have a boot order > 0, if supplied", f"{at}.bootOrder"))
    causes.extend(_bus_support(field, nested, idx, disk))
    serial = (disk.get("serial") or "")
    if serial and not _SERIAL_RE.match(serial):
        causes.append(cause(INVALID, f"{at} must be made up of the following characters [A-Za-z0-9_.+-], "
                            f"if specified", f"{at}.serial"))
    if serial and len(serial) > 256:
        causes.append(cause(INVALID, f"{at} must be less than or equal to 256 in length, if specified",
                            f"{at}.serial"))
    cache = (disk.get("cache") or "")
    if cache and cache not in ("none", "writethrough", "writeback"):
        causes.append(cause(INVALID, f"{at}.cache has invalid value {cache}", f"{at}.cache"))
    io = (disk.get("io") or "")
    if io and io not in ("native", "threads"):
        causes.append(cause(NOT_SUPPORTED, f"Disk IO mode for {field} is not supported. Supported modes are: "
                            f"native, threads.", f"{nested}[{idx}].io"))
    policy = disk.get("errorPolicy")
    if policy is not None and policy not in _ERROR_POLICIES:
        causes.append(cause(INVALID, f'{at}.errorPolicy has invalid value "{policy}"', f"{at}.errorPolicy"))
    for err in _name_errors(name):     # validateDiskNameAsContainerName
        causes.append(cause(INVALID, err, f"{nested}[{idx}].name"))
    causes.extend(_block_size(at, disk))
    return causes


def _bus_support(field: str, nested: str, idx: int, disk: dict[str, Any]) -> list[Any]:
    """validateBusSupport."""
    kind, bus = _target(disk)
    if not bus:
        return []
    at = f"{field}[{idx}]"
    causes = []
    if bus == "ide":
        causes.append(cause(INVALID, "IDE bus is not supported", f"{at}.{kind}.bus"))
    elif bus == "virtio":
        if kind == "cdrom":
            causes.append(cause(INVALID, "Bus type virtio is invalid for CD-ROM device", f"{at}.cdrom.bus"))
    elif bus == "sata":
        if disk.get("disk") is not None and (disk["disk"] or _E).get("readonly") is True:
            causes.append(cause(INVALID, "sata hard-disks do not support read-only.", f"{at}.disk.bus"))
    elif bus not in ("scsi", "usb"):
        causes.append(cause(INVALID, f"{at} is set with an unrecognized bus {bus}, must be one of: "
                            f"[{' '.join(_BUSES)}]", f"{at}.{kind}.bus"))
    if disk.get("dedicatedIOThread") is True and bus != "virtio":
        causes.append(cause(NOT_SUPPORTED, f"IOThreads are not supported for disks on a {bus} bus", f"{nested}[{idx}]"))
    return causes


def _block_size(at: str, disk: dict[str, Any]) -> list[Any]:
    """validateBlockSize."""
    bs = disk.get("blockSize")
    custom = (bs or _E).get("custom")
    if bs is None or custom is None:
        return []
    match = (bs or _E).get("matchVolume")
    if match is not None and (match or _E).get("enabled") is not False:
        return [cause(INVALID, "Block size matching can't be enabled together with a custom value", f"{at}.blockSize")]
    logical = (custom or _E).get("logical") or 0
    physical = (custom or _E).get("physical") or 0
    if logical > physical:
        return [cause(INVALID, f"Logical size {logical} must be the same or less than the physical size of {physical}",
                      f"{at}.blockSize.custom.logical")]
    causes = []
    for kind, size in (("logical", logical), ("physical", physical)):
        where = f"{at}.blockSize.custom.{kind}"
        if size < 512:
            causes.append(cause(INVALID, f"Provided size of {size} is less than the supported minimum size of 512", where))
        elif size > 2097152:
            causes.append(cause(INVALID, f"Provided size of {size} is greater than the supported maximum size of "
                                f"2097152", where))
        elif size & (size - 1):
            causes.append(cause(INVALID, f"Provided size of {size} is not a power of 2", where))
    return causes


def validate_boot_order(field: str, spec: dict[str, Any], gates: Gates) -> list[Any]:
    """validateBootOrder with validateInterfaceBootOrder: disks name volumes, LUNs and downward
    metrics map to the right volumes, and boot orders are unique across disks and interfaces."""
    causes = []
    devices = ((spec.get("domain") or _E).get("devices") or _E)
    volumes = {}
    for vol in (spec.get("volumes") or ()):
        volumes[(vol.get("name") or "")] = vol
    seen: set[Any] = set()
    disks_at = f"{field}.domain.devices.disks"
    for idx, disk in enumerate(devices.get("disks") or ()):
        name = (disk.get("name") or "")
        vol = volumes.get(name)
        if vol is None:
            if disk.get("cdrom") is None:
                causes.append(cause(INVALID, NOT_FOUND_FMT.format(f"{disks_at}[{idx}].Name", name),
                                    f"{disks_at}[{idx}].name"))
            elif not gates.beta("DeclarativeHotplugVolumes"):
                causes.append(cause(INVALID, "DeclarativeHotplugVolumes feature gate not enabled, cannot define an "
                                    "empty CD-ROM disk", f"{disks_at}[{idx}].name"))
        if disk.get("lun") is not None and vol is not None and vol.get("persistentVolumeClaim") is None \
                and vol.get("dataVolume") is None:
            causes.append(cause(INVALID, f"{disks_at}[{idx}].lun can only be mapped to a DataVolume or "
                                f"PersistentVolumeClaim volume.", f"{disks_at}[{idx}].lun"))
        if vol is not None and vol.get("downwardMetrics") is not None:
            target = disk.get("disk")
            if target is None:
                causes.append(cause(REQUIRED, f"DownwardMetrics volume must be mapped to a disk, but disk is not set "
                                    f"on {disks_at}[{idx}].disk.", f"{disks_at}[{idx}].disk"))
            elif ((target or _E).get("bus") or "") not in ("virtio", ""):
                causes.append(cause(INVALID, f"DownwardMetrics volume must be mapped to virtio bus, but "
                                    f"{disks_at}[{idx}].disk.bus is set to {target['bus']}", f"{disks_at}[{idx}].disk.bus"))
        order = disk.get("bootOrder")
        if order is not None:
            if order in seen:
                causes.append(cause(INVALID, f"Boot order for {disks_at}[{idx}].bootOrder already set for a different "
                                    f"device.", f"{disks_at}[{idx}].bootOrder"))
            seen.add(order)
    ifaces_at = f"{field}.domain.devices.interfaces"
    for idx, iface in enumerate(devices.get("interfaces") or ()):
        order = iface.get("bootOrder")
        if order is None:
            continue
        if order < 1:
            # KubeVirt names this one from the spec path, without domain.devices.interfaces.
            causes.append(cause(INVALID, f"{field}[{idx}] must have a boot order > 0, if supplied",
                                f"{field}[{idx}].bootOrder"))
        else:
            if order in seen:
                causes.append(cause(INVALID, f"Boot order for {ifaces_at}[{idx}].bootOrder already set for a "
                                    f"different device.", f"{ifaces_at}[{idx}].bootOrder"))
            seen.add(order)
    return causes


def validate_volumes(field: str, volumes: Sequence[Any], gates: Gates) -> list[Any]:
    """validateVolumes: `field` is `<spec>.volumes`."""
    causes = []
    names: dict[str, Any] = {}
    counts = {"serviceAccount": 0, "downwardMetrics": 0, "memoryDump": 0}
    for idx, vol in enumerate(volumes):
        name = (vol.get("name") or "")
        if len(vol) == 2 and "name" in vol and name not in names:
            # a name and one source that no rule looks into (or plain cloud-init user data, all
            # its rule reads): nothing to refuse
            items = iter(vol.items())
            src, x = next(items)
            if src == "name":
                src, x = next(items)
            if x is not None and (src in _PLAIN_SOURCES and (src != "dataVolume" or x.get("name"))
                                  or src in _CLOUD_INIT and cloudinit.plain_user_data(vol)):
                names[name] = idx
                continue
        at = f"{field}[{idx}]"
        if name in names:
            causes.append(cause(INVALID, f"{at} and {field}[{names[name]}] must not have the same Name.", f"{at}.name"))
        else:
            names[name] = idx
        sources = 0
        for src, x in vol.items():
            if x is not None and src in _SOURCE_SET:
                sources += 1
                if src in counts:
                    counts[src] += 1
        dv = vol.get("dataVolume")
        if dv is not None and not ((dv or _E).get("name") or ""):
            causes.append(cause(REQUIRED, "DataVolume 'name' must be set", f"{at}.name"))
        if sources != 1:
            causes.append(cause(INVALID, f"{at} must have exactly one source type set", at))
        if "cloudInitNoCloud" in vol or "cloudInitConfigDrive" in vol:
            if not cloudinit.plain_user_data(vol):
                causes.extend(cloudinit.validate_cloud_init_volume(at, vol))
        if vol.get("downwardMetrics") is not None and "DownwardMetrics" not in gates:
            causes.append(cause(INVALID, "downwardMetrics disks are not allowed: DownwardMetrics feature gate is not "
                                "enabled.", at))
        host_disk = vol.get("hostDisk")
        if host_disk is not None:
            host_disk = (host_disk or _E)
            if "HostDisk" not in gates:
                causes.append(cause(INVALID, "HostDisk feature gate is not enabled", at))
            if not (host_disk.get("path") or ""):
                causes.append(cause(NOT_FOUND, f"{at}.hostDisk.path is required for hostDisk volume", f"{at}.hostDisk.path"))
            kind = (host_disk.get("type") or "")
            if kind not in ("Disk", "DiskOrCreate"):
                causes.append(cause(INVALID, f"{at}.hostDisk.type has invalid value '{kind}', allowed are 'Disk' or "
                                    f"'DiskOrCreate'", f"{at}.hostDisk.type"))
            capacity = quantity(host_disk.get("capacity"))
            if kind == "Disk" and capacity is not None and not capacity.is_zero():
                causes.append(cause(INVALID, f"{at}.hostDisk.capacity is allowed to pass only with {at}.hostDisk.type "
                                    f"equal to 'DiskOrCreate'", f"{at}.hostDisk.capacity"))
        for src, key in (("configMap", "name"), ("secret", "secretName"), ("serviceAccount", "serviceAccountName")):
            if vol.get(src) is not None and not ((vol[src] or _E).get(key) or ""):
                causes.append(cause(INVALID, f"{at}.{src}.{key} is a required field", f"{at}.{src}.{key}"))
    for src, what in (("serviceAccount", "serviceAccount"), ("downwardMetrics", "downwardMetric"),
                      ("memoryDump", "memory dump")):
        if counts[src] > 1:
            causes.append(cause(INVALID, f"{field} must have max one {what} volume set", field))
    return causes


def validate_path(field: str, path: str) -> list[Any]:
    """ValidatePath: an absolute path to a file, without relative components."""
    if path == "/":
        return [cause(INVALID, f"{field} must not point to root", field)]
    # Go's filepath.Join("/", path) cleans the path (a leading "//" becomes "/")
    cleaned = "/" + posixpath.normpath("/" + path).lstrip("/")
    provided = path[:-1] if path.endswith("/") else path
    if cleaned != provided:
        return [cause(INVALID, f"{field} must be an absolute path to a file without relative components", field)]
    return []


def validate_container_disks(field: str, spec: dict[str, Any]) -> list[Any]:
    """ValidateContainerDisks."""
    causes = []
    for idx, vol in enumerate(spec.get("volumes") or ()):
        path = ((vol.get("containerDisk") or _E).get("path") or "")
        if vol.get("containerDisk") is not None and path:
            causes.extend(validate_path(f"{field}.volumes[{idx}].containerDisk", path))
    return causes


__all__ = ["validate_disks", "validate_boot_order", "validate_volumes", "validate_container_disks",
           "validate_path"]
