"""RFC 6902 JSON Patch applied as the API server applies a `--type json` patch (evanphx/json-patch):
add, remove, replace, move, copy, test; RFC 6901 pointers (`~0`, `~1`), list indexes and `-`.

A patch that cannot be applied raises `PatchError`; the API server answers it with 422 and the
text kubectl prints as `The request is invalid: the server rejected our request due to an error
in our request`.
"""
from __future__ import annotations

from typing import Any

from instancetype.jsonutil import clone


class PatchError(Exception):
    """The patch does not apply to the document."""


class PatchFormatError(Exception):
    """The patch is not a JSON Patch document (the API server's 400 when decoding it)."""


def _tokens(path: Any) -> list[str]:
    if not isinstance(path, str):
        raise PatchFormatError("json: cannot unmarshal path: not a string")
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid pointer {path!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in path.split("/")[1:]]


def _index(token: str, size: int, *, insert: bool) -> int:
    if token == "-" and insert:
        return size
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f"invalid list index {token!r}")
    i = int(token)
    if i > size or (i == size and not insert):
        raise PatchError(f"list index {i} out of range")
    return i


def _parent(doc: Any, tokens: list[str]) -> Any:
    node = doc
    for t in tokens[:-1]:
        if isinstance(node, dict):
            if t not in node:
                raise PatchError(f"missing path element {t!r}")
            node = node[t]
        elif isinstance(node, list):
            node = node[_index(t, len(node), insert=False)]
        else:
            raise PatchError(f"cannot descend into {t!r}")
    return node


def _get(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        return doc
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"missing value at {last!r}")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(last, len(parent), insert=False)]
    raise PatchError("not a container")


def _remove(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"missing value at {last!r}")
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(last, len(parent), insert=False))
    raise PatchError("not a container")


def _add(doc: Any, tokens: list[str], value: Any, *, replace: bool = False) -> Any:
    if not tokens:
        return value
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise PatchError(f"replace operation does not apply: doc is missing key: {last}")
        parent[last] = value
    elif isinstance(parent, list):
        if replace:
            parent[_index(last, len(parent), insert=False)] = value
        else:
            parent.insert(_index(last, len(parent), insert=True), value)
    else:
        raise PatchError("not a container")
    return doc


def apply_patch(doc: Any, ops: Any) -> Any:
    """The document after the operations (the input is not changed)."""
    if not isinstance(ops, list):
        raise PatchFormatError(f"json: cannot unmarshal {_go_type(ops)} into Go value of type jsonpatch.Patch")
    doc = clone(doc)
    for op in ops:
        if not isinstance(op, dict):
            raise PatchFormatError(f"json: cannot unmarshal {_go_type(op)} into Go value of type jsonpatch.Operation")
        kind = op.get("op")
        tokens = _tokens(op.get("path"))
        if kind in ("add", "replace", "test") and "value" not in op:
            raise PatchError(f"{kind} operation has no value")
        if kind == "add":
            doc = _add(doc, tokens, clone(op["value"]))
        elif kind == "replace":
            doc = _add(doc, tokens, clone(op["value"]), replace=True)
        elif kind == "remove":
            _remove(doc, tokens)
        elif kind in ("move", "copy"):
            source = _tokens(op.get("from"))
            value = _remove(doc, source) if kind == "move" else clone(_get(doc, source))
            doc = _add(doc, tokens, value)
        elif kind == "test":
            if _get(doc, tokens) != op["value"]:
                raise PatchError("testing value failed")
        else:
            raise PatchError(f"Unexpected kind: {kind}")
    return doc


def _go_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(v), "null")
