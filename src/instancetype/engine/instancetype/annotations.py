"""Instancetype annotations (pkg/instancetype/apply/annotations.go).

KubeVirt always makes sure the target metadata has an annotations map; an empty one is
omitted when printed, so we only create it when there is something to add. A key already present with a different value conflicts as `annotations.<key>`
(no root prefix) and keeps the target's value. Go walks the map in random order; we report
several conflicts in the instancetype's key order (stable).
"""
from __future__ import annotations

from typing import Any


def apply(it: dict[str, Any], spec: dict[str, Any], metadata: dict[str, Any], root: str, preference: dict[str, Any] | None = None) -> list[str]:
    wanted = it.get("annotations")
    if not wanted:
        return []
    ann = metadata.get("annotations")
    if ann is None:
        ann = metadata["annotations"] = {}
    conflicts = []
    for key, value in wanted.items():
        if key not in ann:
            ann[key] = value
        elif ann[key] != value:
            conflicts.append(f"annotations.{key}")
    return conflicts
