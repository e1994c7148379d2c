"""RFC 6902 JSON Patch: the operations that turn one JSON value into another, and applying them.

A mutating webhook answers with a JSONPatch; `diff` gives the smallest patch of `add` /
`remove` / `replace` operations that an object diff needs (objects recursively, a list that
changed is replaced whole, as the lists of a KubeVirt spec are replaced by its webhooks).
`apply` is for tests and the embedded checks: what the API server does with the answer.
"""
from __future__ import annotations

from typing import Any

from instancetype.jsonutil import clone


def pointer(parts: list[str]) -> str:
    """An RFC 6901 JSON pointer (`~` as `~0`, `/` as `~1`)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def diff(old: Any, new: Any, path: list[str] | None = None) -> list[dict]:
    """The operations turning `old` into `new`. Iterative, and linear in the size of the objects
    (each path is built only for an operation): an object may nest as deep as the API server
    allows (10,000 levels), deeper than Python's recursion goes."""
    ops: list[dict] = []
    # (old, new, path): a path is a linked (parent, key) pair, turned into a pointer only for an op
    stack: list[tuple[Any, Any, Any]] = [(old, new, _root(path))]
    while stack:
        a, b, at = stack.pop()
        if isinstance(a, dict) and isinstance(b, dict):
            found: list[tuple[Any, Any, Any]] = []
            for key in a:
                if key not in b:
                    ops.append({"op": "remove", "path": _pointer(at, key)})
            for key, value in b.items():
                if key not in a:
                    ops.append({"op": "add", "path": _pointer(at, key), "value": clone(value)})
                elif a[key] is not value:
                    found.append((a[key], value, (at, key)))
            stack.extend(reversed(found))      # depth first, in key order, as the recursion was
            continue
        if type(a) is type(b) and _equal(a, b):
            continue
        ops.append({"op": "replace", "path": _pointer(at), "value": clone(b)})
    return ops


def _root(path: list[str] | None) -> Any:
    at: Any = None
    for p in path or ():
        at = (at, p)
    return at


def _pointer(at: Any, key: Any = None) -> str:
    parts = [] if key is None else [key]
    while at is not None:
        at, part = at
        parts.append(part)
    return pointer(parts[::-1])


def _equal(a: Any, b: Any) -> bool:
    """`a == b` without recursion (Python's own `==` recurses in C, once per level)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        if isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((v, y[k]) for k, v in x.items())
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif isinstance(x, (dict, list)) or isinstance(y, (dict, list)) or x != y:
            return False
    return True


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def apply(doc: Any, ops: list[dict]) -> Any:
    """The document after `ops` (add, remove, replace; list indexes and `-`). Pure."""
    doc = clone(doc)
    for op in ops:
        tokens = [_unescape(t) for t in op["path"].split("/")[1:]]
        if not tokens:
            doc = clone(op.get("value"))
            continue
        parent = doc
        for t in tokens[:-1]:
            parent = parent[int(t)] if isinstance(parent, list) else parent[t]
        last = tokens[-1]
        kind = op["op"]
        if isinstance(parent, list):
            index = len(parent) if last == "-" else int(last)
            if kind == "add":
                parent.insert(index, clone(op["value"]))
            elif kind == "remove":
                del parent[index]
            elif kind == "replace":
                parent[index] = clone(op["value"])
            else:
                raise ValueError(f"unsupported JSON patch operation {kind!r}")
        else:
            if kind in ("add", "replace"):
                if kind == "replace" and last not in parent:
                    raise KeyError(op["path"])
                parent[last] = clone(op["value"])
            elif kind == "remove":
                del parent[last]
            else:
                raise ValueError(f"unsupported JSON patch operation {kind!r}")
    return doc
