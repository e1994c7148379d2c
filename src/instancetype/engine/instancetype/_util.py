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

    Unlike jsondata.child, a present value of the wrong type is returned as is: expand does
    not check the VM's shape up front, so the handler trips over it and the guard
    (engine/guard.py) reports Go's decode error naming the field, instead of replacing it."""
    v = parent.get(key)
    if v is None:
        v = parent[key] = {}
    return v


def resource_lists(spec: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """domain.resources' (requests, limits), each None unless it is an object."""
    domain: dict[str, Any] = spec.get("domain") or {}
    res: dict[str, Any] | None = domain.get("resources")
    if not res:
        return None, None
    requests, limits = res.get("requests"), res.get("limits")
    return (requests if isinstance(requests, dict) else None), (limits if isinstance(limits, dict) else None)
