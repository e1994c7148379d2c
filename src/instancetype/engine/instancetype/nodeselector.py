"""nodeSelector (pkg/instancetype/apply/nodeselector.go): a present map, even `{}`, is set."""
from __future__ import annotations


def apply(it: dict, spec: dict, metadata: dict, root: str, preference: dict | None = None) -> list[str]:
    sel = it.get("nodeSelector")
    if sel is None:
        return []
    if spec.get("nodeSelector") is not None:
        return [f"{root}.nodeSelector"]
    spec["nodeSelector"] = dict(sel)
    return []
