"""nodeSelector (pkg/instancetype/apply/nodeselector.go): a present map, even `{}`, is set."""
from __future__ import annotations

from typing import Any


def apply(it: dict[str, Any], spec: dict[str, Any], metadata: dict[str, Any], root: str, preference: dict[str, Any] | None = None) -> list[str]:
    sel = it.get("nodeSelector")
    if sel is None:
        return []
    if spec.get("nodeSelector") is not None:
        return [f"{root}.nodeSelector"]
    spec["nodeSelector"] = dict(sel)
    return []
