"""schedulerName (pkg/instancetype/apply/scheduler.go): only a non-empty name counts."""
from __future__ import annotations


def apply(it: dict, spec: dict, metadata: dict, root: str, preference: dict | None = None) -> list[str]:
    name = it.get("schedulerName")
    if not name:
        return []
    if spec.get("schedulerName"):
        return [f"{root}.schedulerName"]
    spec["schedulerName"] = name
    return []
