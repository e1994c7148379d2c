"""gpus (pkg/instancetype/apply/gpu.go): an empty list on either side counts as unset."""
from __future__ import annotations

from typing import Any

from instancetype.engine.jsondata import copy_json

from ._util import child, domain


def apply(it: dict[str, Any], spec: dict[str, Any], metadata: dict[str, Any], root: str, preference: dict[str, Any] | None = None) -> list[str]:
    want = it.get("gpus")
    if not want:
        return []
    devices = child(domain(spec), "devices")
    if devices.get("gpus"):
        return [f"{root}.domain.devices.gpus"]
    devices["gpus"] = copy_json(want)
    return []
