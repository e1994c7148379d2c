"""The last line of the public entry points: bad input ends as an `instancetype.Error`.

The hot paths read plain dicts without checking every type up front (that check would cost as
much as the work). When one of them trips over a badly typed value, the inputs are decoded the
way KubeVirt's Go types decode them, so the error names the field as Go would; only if that finds
nothing is a generic `DecodeError` raised.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Iterable

from instancetype.api import kinds
from instancetype.errors import DecodeError, Error

_UNEXPECTED = (AttributeError, TypeError, KeyError, IndexError, ValueError, RecursionError)


def _decode_given(instancetype: Any, preference: Any, objects: Any) -> None:
    from instancetype.api import v1beta1
    from instancetype.engine.spec import unwrap

    if instancetype is not None:
        v1beta1.decode_instancetype_spec(unwrap(instancetype))
    if preference is not None:
        v1beta1.decode_preference_spec(unwrap(preference))
    if isinstance(objects, Iterable) and not isinstance(objects, (str, bytes, dict)) \
            and not hasattr(objects, "lookup"):
        for i, obj in enumerate(objects):
            if not isinstance(obj, dict):
                raise DecodeError(f"objects[{i}]: not an object")
            try:
                if obj.get("kind") in kinds.INSTANCETYPE_KINDS:
                    v1beta1.decode_instancetype_spec(obj.get("spec") or {})
                elif obj.get("kind") in kinds.PREFERENCE_KINDS:
                    v1beta1.decode_preference_spec(obj.get("spec") or {})
            except DecodeError as e:
                raise DecodeError(f"objects[{i}]: {e}") from None


def public(what: str) -> Callable:
    """Decorate an entry point `fn(vm, ...)`: unexpected exceptions become `DecodeError`s."""

    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def entry(vm: Any, *args: Any, **kw: Any) -> Any:
            try:
                return fn(vm, *args, **kw)
            except Error:
                raise
            except _UNEXPECTED as e:
                from instancetype.engine.matchers import load_vm

                load_vm(vm)
                objects = kw.get("objects", args[0] if args else ())
                _decode_given(kw.get("instancetype"), kw.get("preference"), objects)
                raise DecodeError(f"cannot {what}: {type(e).__name__}: {e}") from None

        return entry

    return wrap
