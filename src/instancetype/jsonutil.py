"""Small helpers for JSON-shaped data (dicts, lists, scalars), used by every layer."""
from __future__ import annotations

from typing import Any

import msgspec

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder().decode


def clone(v: Any) -> Any:
    """A deep copy of JSON-shaped data: a msgpack round trip in C (about 3x faster than walking it
    in Python, 10x faster than copy.deepcopy); data msgpack cannot hold is walked instead."""
    try:
        return _decode(_encode(v))
    except (TypeError, ValueError, OverflowError, msgspec.MsgspecError):
        return _clone_walk(v)


def _clone_walk(v: Any) -> Any:
    if type(v) is dict:
        return {k: _clone_walk(x) if type(x) in (dict, list) else x for k, x in v.items()}
    if type(v) is list:
        return [_clone_walk(x) if type(x) in (dict, list) else x for x in v]
    if isinstance(v, dict):
        return {k: _clone_walk(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clone_walk(x) for x in v]
    return v


def child(parent: dict, key: str) -> dict:
    """parent[key] as a dict, created (or replaced, when it is not a dict) in place: Go's
    `if x.Field == nil { x.Field = &T{} }` on a plain dict."""
    v = parent.get(key)
    if not isinstance(v, dict):
        v = parent[key] = {}
    return v


def dict_items(v: Any) -> list:
    """The dict entries of a JSON list (anything that is not a list yields nothing)."""
    if type(v) is not list:
        return []
    return [x for x in v if type(x) is dict]


def dig(obj: Any, *path: str, default: Any = None) -> Any:
    """obj[p0][p1]... or `default` where a step is missing or not a mapping."""
    for p in path:
        if not isinstance(obj, dict):
            return default
        obj = obj.get(p)
        if obj is None:
            return default
    return obj


def sorted_keys(v: Any) -> Any:
    """A copy with every map's keys in alphabetical order, at every level (as Go's encoders print
    maps, and kubectl prints unstructured objects)."""
    if isinstance(v, dict):
        return {k: sorted_keys(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [sorted_keys(x) for x in v]
    return v
