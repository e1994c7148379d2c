"""schedulerName (pkg/instancetype/apply/scheduler.go): only a non-empty name counts."""
from __future__ import annotations

from typing import Any


def apply(it: dict[str, Any], spec: dict[str, Any], metadata: dict[str, Any], root: str, preference: dict[str, Any] | None = None) -> list[str]:
    name = it.get("schedulerName")
    if not name:
        return []
    if spec.get("schedulerName"):
        return [f"{root}.schedulerName"]
    spec["schedulerName"] = name
    return []
