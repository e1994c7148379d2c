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
    path = path or []
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[dict] = []
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": pointer(path + [key])})
        for key, value in new.items():
            if key not in old:
                ops.append({"op": "add", "path": pointer(path + [key]), "value": clone(value)})
            else:
                ops.extend(diff(old[key], value, path + [key]))
        return ops
    if old == new and type(old) is type(new):
        return []
    return [{"op": "replace", "path": pointer(path), "value": clone(new)}]


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
