"""Disk preferences, applied to every `domain.devices.disks` entry.

KubeVirt: pkg/instancetype/preference/apply/disk.go (applyDiskPreferences).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._util import copy_value


def apply_disks(pref_devices: dict[str, Any], devs: dict[str, Any]) -> None:
    disk_applier(pref_devices)(devs)


def disk_applier(pref_devices: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """apply_disks with the preference read once (engine/preference/plan.py): fn(devs)."""
    bus = pref_devices.get("preferredDiskBus")
    block_size = pref_devices.get("preferredDiskBlockSize")
    cache = pref_devices.get("preferredDiskCache")
    io = pref_devices.get("preferredDiskIO")
    dedicated = pref_devices.get("preferredDiskDedicatedIoThread")
    cdrom_bus = pref_devices.get("preferredCdromBus")
    lun_bus = pref_devices.get("preferredLunBus")

    def apply(devs: dict[str, Any]) -> None:
        disks = devs.get("disks")
        if type(disks) is not list:
            return
        for d in disks:
            if type(d) is not dict:
                continue
            target = d.get("disk")
            if target is None and d.get("cdrom") is None and d.get("lun") is None:
                # A disk without a target becomes a plain disk so preferences can apply
                # (happens whenever the preference has a devices block at all).
                target = d["disk"] = {}
            if target is not None:
                if type(target) is not dict:
                    continue
                if bus and not target.get("bus"):
                    target["bus"] = bus
                if block_size is not None and d.get("blockSize") is None:
                    d["blockSize"] = copy_value(block_size)
                if cache and not d.get("cache"):
                    d["cache"] = cache
                if io and not d.get("io"):
                    d["io"] = io
                if dedicated is not None and d.get("dedicatedIOThread") is None and target.get("bus") == "virtio":
                    d["dedicatedIOThread"] = dedicated
            elif d.get("cdrom") is not None:
                cd = d["cdrom"]
                if cdrom_bus and type(cd) is dict and not cd.get("bus"):
                    cd["bus"] = cdrom_bus
            else:
                lun = d["lun"]
                if lun_bus and type(lun) is dict and not lun.get("bus"):
                    lun["bus"] = lun_bus

    return apply
