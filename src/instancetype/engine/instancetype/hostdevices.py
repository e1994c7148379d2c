"""hostDevices (pkg/instancetype/apply/hostdevices.go): an empty list on either side counts as unset."""
from __future__ import annotations

from instancetype.jsonutil import clone

from ._util import child, domain


def apply(it: dict, spec: dict, metadata: dict, root: str, preference: dict | None = None) -> list[str]:
    want = it.get("hostDevices")
    if not want:
        return []
    devices = child(domain(spec), "devices")
    if devices.get("hostDevices"):
        return [f"{root}.domain.devices.hostDevices"]
    devices["hostDevices"] = clone(want)
    return []
