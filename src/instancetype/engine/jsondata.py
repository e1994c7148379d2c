"""The engine's helpers for JSON-shaped data, compiled with it (a call from compiled code into an
interpreted helper costs a Python frame per field):

    child(parent, key) -> dict       parent[key] as a dict, made in place when missing
    dict_items(v) -> list            the dicts of a JSON list
    copy_json(v) -> same shape       a deep copy, the same answer as jsonutil.clone

copy_json:

Interpreted, it *is* jsonutil.clone: a msgpack round trip in C, about 3x faster than a walk in
Python. Compiled (mypyc, setup.py), a walk is the faster one: it copies only the dicts and
lists and shares the strings and numbers, which are immutable, where the round trip makes every
string anew (typical VM: 2.6 against 7.4 µs, a third of Go's whole expand). Which one runs is
decided once, at import, by whether this module was compiled.

The walk takes only exact dicts and lists of exact str, int, float, bool and None, at most
`_MAX_DEPTH` levels deep; anything else (a tuple, a Mapping that is not a dict, an object, deeper
nesting) is copied by jsonutil.clone instead, whole, so the two never answer differently: a
compiled walk does not check Python's recursion limit (DESIGN.md, the compiled engine), which
is why its depth is bounded here rather than left to the interpreter.
"""
from __future__ import annotations

import types
from typing import Any, TypeVar, cast

from instancetype.jsonutil import clone

T = TypeVar("T")

# Deeper than any KubeVirt object (a VM's deepest field is about 15 levels); deeper input goes
# to the round trip, whose depth msgspec bounds.
_MAX_DEPTH = 48


class _NotPlain(Exception):
    """The value holds something the walk does not copy as jsonutil.clone would."""


def _copy_dict(v: dict[Any, Any], depth: int) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for k, x in v.items():
        t = type(x)
        if t is str or t is int or t is bool or t is float or x is None:
            out[k] = x
        elif t is dict and depth < _MAX_DEPTH:
            out[k] = _copy_dict(x, depth + 1)
        elif t is list and depth < _MAX_DEPTH:
            out[k] = _copy_list(x, depth + 1)
        else:
            raise _NotPlain
    return out


def _copy_list(v: list[Any], depth: int) -> list[Any]:
    out: list[Any] = []
    for x in v:
        t = type(x)
        if t is str or t is int or t is bool or t is float or x is None:
            out.append(x)
        elif t is dict and depth < _MAX_DEPTH:
            out.append(_copy_dict(x, depth + 1))
        elif t is list and depth < _MAX_DEPTH:
            out.append(_copy_list(x, depth + 1))
        else:
            raise _NotPlain
    return out


def _walk_copy(v: T) -> T:
    x: Any = v
    try:
        if type(x) is dict:
            return cast("T", _copy_dict(x, 0))
        if type(x) is list:
            return cast("T", _copy_list(x, 0))
    except _NotPlain:
        pass
    return clone(v)


def child(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """parent[key] as a dict, created (or replaced, when it is not a dict) in place: Go's
    `if x.Field == nil { x.Field = &T{} }` on a plain dict."""
    v = parent.get(key)
    if not isinstance(v, dict):
        v = parent[key] = {}
    return v


def dict_items(v: Any) -> list[dict[str, Any]]:
    """The dict entries of a JSON list (anything that is not a list yields nothing)."""
    if type(v) is not list:
        return []
    return [x for x in v if type(x) is dict]



COMPILED = not isinstance(_copy_dict, types.FunctionType)
"""Whether mypyc compiled this module (a compiled function is not a Python function object)."""

copy_json = _walk_copy if COMPILED else clone
"""A deep copy of JSON-shaped data: dicts and lists new, everything else as jsonutil.clone
leaves it. The argument is never changed."""
