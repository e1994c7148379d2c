"""Tiny helpers shared by the preference appliers (plain-dict VMI specs).

Go's VMI types distinguish pointers (nil = absent) from plain values (zero =
empty); on JSON-shaped dicts both "key missing" and `null` mean nil/zero, so
`is None` tests a pointer field and falsiness tests a plain string/bool.
"""
from __future__ import annotations

from typing import Any

from instancetype.engine.jsondata import child, copy_json, dict_items

__all__ = ["child", "copy_value", "devices", "dict_items", "domain"]     # (child, dict_items: shared by the appliers)


def domain(spec: dict[str, Any]) -> dict[str, Any]:
    return child(spec, "domain")


def devices(spec: dict[str, Any]) -> dict[str, Any]:
    return child(child(spec, "domain"), "devices")


def copy_value(v: Any) -> Any:
    """A value taken from the preference, detached so later defaulting cannot alter the preference."""
    return copy_json(v) if type(v) in (dict, list) else v

