"""`get --sort-by=JSONPATH`: kubectl's `RuntimeSort` (k8s.io/kubectl/pkg/cmd/get/sorter.go).

The expression is relaxed as kubectl relaxes it (`.a.b`, `a.b` and `{.a.b}` are one path); the
first value found orders the objects: numbers by value, strings in natural order (`vm2` before
`vm10`, sortorder.NaturalLess), booleans false first; an object without the field comes first.
A path found in no object at all is kubectl's error.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .kubectl import CommandError

_DIGITS = re.compile(r"(\d+)")
_MISSING = object()


def relaxed(expr: str) -> str:
    """kubectl `RelaxedJSONPathExpression`."""
    expr = expr.strip()
    if expr.startswith("{") and expr.endswith("}"):
        return expr
    return "{" + ("" if expr.startswith(".") else ".") + expr + "}"


def _natural(s: str) -> tuple:
    return tuple((0, int(p), p) if p.isdigit() else (1, 0, p) for p in _DIGITS.split(s) if p != "")


def _key(v: Any) -> tuple:
    if v is _MISSING or v is None:
        return (0,)
    if isinstance(v, bool):
        return (1, v)
    if isinstance(v, (int, float)):
        return (2, v)
    if isinstance(v, str):
        return (3, _natural(v))
    from .kubectl import go_json

    return (4, go_json(v))


class Sorter:
    def __init__(self, expr: str):
        from .jsonpath import JSONPath, JSONPathError

        self.expr = relaxed(expr)
        try:
            self.path = JSONPath(self.expr)
        except JSONPathError as e:
            raise CommandError(f"error: {e}") from None

    def value(self, obj: Any) -> Any:
        try:
            found = self.path.values(obj)
        except Exception:      # a step that does not apply to this object's shape
            return _MISSING
        return found[0] if found else _MISSING

    def sort(self, items: Iterable[Any], of=lambda x: x) -> list:
        """`items` ordered by the value of each one's object (`of(item)`)."""
        keyed = [(self.value(of(item)), item) for item in items]
        if keyed and all(v is _MISSING for v, _ in keyed):
            raise CommandError(f'error: couldn\'t find any field with path "{self.expr}" in the list of objects')
        keyed.sort(key=lambda p: _key(p[0]))
        return [item for _, item in keyed]
