"""Small helpers shared by the instancetype handlers."""
from __future__ import annotations

from typing import Any


def domain(spec: dict[str, Any]) -> dict[str, Any]:
    d = spec.get("domain")
    if d is None:
        d = spec["domain"] = {}
    return d


def child(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """parent[key], created as {} when absent (Go's `if x == nil { x = &T{} }`).

    Unlike jsonutil.child, a present value of the wrong type is returned as is: expand does
    not check the VM's shape up front, so the handler trips over it and the guard
    (engine/guard.py) reports Go's decode error naming the field, instead of replacing it."""
    v = parent.get(key)
    if v is None:
        v = parent[key] = {}
    return v


def resources_has(spec: dict[str, Any], group: str, name: str) -> bool:
    """Whether domain.resources.<group> (a ResourceList) has the key `name`."""
    res = (spec.get("domain") or {}).get("resources") or {}
    lst = res.get(group)
    return isinstance(lst, dict) and name in lst
