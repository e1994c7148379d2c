"""Default disks and the default pod network, as KubeVirt adds them around apply.

Public (stable) functions, both mutate `spec` (a VMI spec / VM template spec dict) in place:

    set_default_volume_disk(spec) -> None
        SetDefaultVolumeDisk (pkg/storage/vmispec): every volume whose name has no entry in
        `domain.devices.disks` or `domain.devices.filesystems` gets a disk `{"name": <volume>}`.
    set_default_network_interface(spec, config=None) -> None
        SetDefaultNetworkInterface (pkg/network/vmispec/defaults.go). `config` is the KubeVirt
        CR's `spec.configuration` dict (or a `ClusterConfig` from engine/virt_config.py).
        Raises `DefaultsError` with `bridge interface is not enabled in kubevirt-config` or
        `slirp interface is deprecated as of v1.3`.
"""
from __future__ import annotations

from typing import Any

from instancetype.engine.virt_config import cluster_config
from instancetype.errors import DefaultsError


def _devices(spec: dict[str, Any]) -> dict[str, Any]:
    # (Typed as what they must be: compiled, a dict's own lookups; a value of another JSON type
    # fails here as it would at `.get`, and the guard reports it as Go's decoder does.)
    domain: dict[str, Any] | None = spec.get("domain")
    if domain is None:
        domain = spec["domain"] = {}
    devices: dict[str, Any] | None = domain.get("devices")
    if devices is None:
        devices = domain["devices"] = {}
    return devices


def _name(item: Any) -> str:
    return item.get("name", "") if isinstance(item, dict) else ""


def set_default_volume_disk(spec: dict[str, Any]) -> None:
    volumes = spec.get("volumes")
    if not volumes:
        return
    devices = _devices(spec)
    disks = devices.get("disks") or []
    # A null list item decodes as Go's zero struct: its name is "".
    taken = {d.get("name", "") if isinstance(d, dict) else "" for d in disks}
    filesystems = devices.get("filesystems")
    if filesystems:
        taken.update(_name(f) for f in filesystems)
    added = False
    for vol in volumes:
        name = vol.get("name", "") if isinstance(vol, dict) else ""
        if name not in taken:
            if not added:
                disks = list(disks)
                added = True
            disks.append({"name": name})
    if added:
        devices["disks"] = disks


def set_default_network_interface(spec: dict[str, Any], config: Any = None) -> None:
    domain = spec.get("domain") or {}
    devices = domain.get("devices") or {}
    if devices.get("autoattachPodInterface") is False:
        return
    # Only when nothing is specified.
    if spec.get("networks") or devices.get("interfaces"):
        return
    cfg = cluster_config(config)     # a raw configuration dict (or None), or one already read
    kind = cfg.default_network_interface
    if kind == "bridge":
        if not cfg.permit_bridge_on_pod_network:
            raise DefaultsError("bridge interface is not enabled in kubevirt-config")
        _devices(spec)["interfaces"] = [{"name": "default", "bridge": {}}]
    elif kind == "masquerade":
        _devices(spec)["interfaces"] = [{"name": "default", "masquerade": {}}]
    elif kind == "slirp":
        raise DefaultsError("slirp interface is deprecated as of v1.3")
    spec["networks"] = [{"name": "default", "pod": {}}]
