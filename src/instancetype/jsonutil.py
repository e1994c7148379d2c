"""Small helpers for JSON-shaped data (dicts, lists, scalars), used by every layer."""
from __future__ import annotations

from typing import Any


def clone(v: Any) -> Any:
    """A deep copy of JSON-shaped data; several times faster than copy.deepcopy."""
    if type(v) is dict:
        return {k: clone(x) if type(x) in (dict, list) else x for k, x in v.items()}
    if type(v) is list:
        return [clone(x) if type(x) in (dict, list) else x for x in v]
    if isinstance(v, dict):
        return {k: clone(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [clone(x) for x in v]
    return v


def dig(obj: Any, *path: str, default: Any = None) -> Any:
    """obj[p0][p1]... or `default` where a step is missing or not a mapping."""
    for p in path:
        if not isinstance(obj, dict):
            return default
        obj = obj.get(p)
        if obj is None:
            return default
    return obj
