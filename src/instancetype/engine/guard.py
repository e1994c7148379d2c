"""The last line of the public entry points: bad input is an input error, a bug is a bug.

The hot paths read plain dicts without checking every type up front (that check would cost as
much as the work). When an entry point fails with an exception that is not an
`instancetype.Error`, its arguments are examined, and only what is known to mean bad input
becomes an input error:

1. data no JSON document can hold (a Python caller's bytes, tuples, int keys, NaN, cycles, or
   nesting deeper than `jsonutil.MAX_DEPTH`): `DecodeError` naming the argument and field;
2. values of the wrong JSON type: the arguments decoded as KubeVirt's Go types decode them
   (engine/vm_decode.load_vm, api/v1beta1), whose `DecodeError` names the field as Go would;
   a well-formed VM with null list items is answered again as Go reads it (null items are zero
   structs), which the fast paths do not handle;
3. anything else, the input being well formed: `InternalError`, which says that this is a bug
   in instancetype (never a `DecodeError`: a bug must not read as the user's mistake; the fuzz
   tests fail on it). The original exception is its `__cause__`.

The decorator is the only place that catches the engine's unexpected exceptions (as httpx's
`map_exceptions` maps only the exceptions it knows the meaning of).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from instancetype.api import kinds
from instancetype.engine.config_check import check_config
from instancetype.errors import DecodeError, Error, InternalError, QuantityError
from instancetype.jsonutil import json_problem


def _short(path: str) -> str:
    return path if len(path) <= 120 else path[:60] + "..." + path[-50:]


def _check_json(name: str, value: Any) -> None:
    """DecodeError where the argument `name` holds something no JSON document can."""
    if value is None or _engine_built(value):
        return      # absent, or a store's ObjectSource / a ClusterConfig the engine built itself
    problem = json_problem(value)
    if problem is not None:
        path, reason = problem
        where = name if not path else path if not name else \
            f"{name}{path}" if path.startswith("[") else f"{name}.{path}"
        raise DecodeError(f"{_short(where) or 'the top level'}: {reason}", field=path)


def _engine_built(value: Any) -> bool:
    """A value of the engine's own types (never JSON: a dict, list or scalar is not looked at)."""
    if isinstance(value, (dict, list, str, int, float)):
        return False
    from instancetype.engine.object_source import ObjectSource
    from instancetype.engine.spec import DecodedSpec
    from instancetype.engine.virt_config import ClusterConfig

    return isinstance(value, (ObjectSource, ClusterConfig, DecodedSpec))


def _decode_typed(obj: dict[str, Any]) -> None:
    """An instancetype or preference decoded as Go decodes it (other kinds: nothing to do)."""
    from instancetype.api import v1beta1

    kind = obj.get("kind")
    if kind in kinds.INSTANCETYPE_KINDS:
        v1beta1.decode_instancetype_spec(obj.get("spec") or {})
    elif kind in kinds.PREFERENCE_KINDS:
        v1beta1.decode_preference_spec(obj.get("spec") or {})


def _check_objects(objects: Any) -> None:
    if objects is None or _engine_built(objects):
        return
    if not isinstance(objects, Iterable) or isinstance(objects, (str, bytes, dict)):
        raise DecodeError(f"objects: must be a list of objects, not {type(objects).__name__}")
    for i, obj in enumerate(objects):
        if not isinstance(obj, dict):
            raise DecodeError(f"objects[{i}]: not an object")
        _check_json(f"objects[{i}]", obj)
        if not isinstance(obj.get("kind"), str):
            continue
        try:
            _decode_typed(obj)
            data = obj.get("data")
            if obj["kind"] == "ControllerRevision" and isinstance(data, dict) and isinstance(data.get("kind"), str):
                try:
                    _decode_typed(data)     # the object a revision holds (compatibility.Decode)
                except DecodeError as e:
                    raise DecodeError(f"failed to decode object in ControllerRevision: {e}") from None
        except (DecodeError, QuantityError) as e:
            raise DecodeError(f"objects[{i}]: {e}") from None


def _diagnose(first: Any, args: tuple[Any, ...], kw: dict[str, Any], decode_first: Callable[..., Any] | None) -> None:
    """Raise the input error that explains a failure, if the input has one (see the module doc)."""
    from instancetype.api import v1beta1
    from instancetype.engine.spec import unwrap

    if isinstance(first, (dict, list)):
        _check_json("", first)      # (a first argument of another type: decode_first says what)
    for name, value in kw.items():
        if name != "objects":
            _check_json(name, value)
    if decode_first is not None:
        decode_first(first)
        if kw.get("old") is not None:
            decode_first(kw["old"])
    if kw.get("instancetype") is not None:
        v1beta1.decode_instancetype_spec(unwrap(kw["instancetype"]))
    if kw.get("preference") is not None:
        v1beta1.decode_preference_spec(unwrap(kw["preference"]))
    _check_objects(kw.get("objects", args[0] if args else ()))


def _load_vm(vm: Any) -> None:
    from instancetype.engine.vm_decode import load_vm

    load_vm(vm)


def _null_items_zeroed(vm: Any) -> dict[str, Any] | None:
    """A copy of `vm` with every null list item read as Go reads it (the zero struct), or None
    when it has none. The fast paths assume the items are objects; Go's decoder never hands
    KubeVirt a null item."""
    if not isinstance(vm, dict):
        return None
    from instancetype.engine.jsondata import copy_json
    from instancetype.engine.vm_validation.schema import zero_null_items

    copy = copy_json(vm)
    zero_null_items(copy)
    return copy if copy != vm else None


def public(what: str, decode_first: Callable[..., Any] | None = _load_vm) -> Callable[..., Any]:
    """Decorate an entry point `fn(first, ...)`: unexpected exceptions become the input error
    that explains them, or an `InternalError`. `what` names the operation ("expand
    VirtualMachine"); `decode_first` decodes the first argument (and `old`) as Go would (default:
    as a VirtualMachine; None: nothing beyond the JSON check)."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def entry(first: Any, *args: Any, **kw: Any) -> Any:
            config = kw.get("config")
            if config is not None:
                check_config(config)      # a few dict reads; the configuration is small
            try:
                return fn(first, *args, **kw)
            except Error:
                raise
            except Exception as e:  # noqa: BLE001 - examined here, re-raised as one of ours
                bug = e
            try:
                _diagnose(first, args, kw, decode_first)
                zeroed = _null_items_zeroed(first) if decode_first is _load_vm else None
                if zeroed is not None:      # well formed, with null items: answer as Go reads it
                    return fn(zeroed, *args, **kw)
            except Error:
                raise
            except RecursionError:
                raise DecodeError(f"cannot {what}: the input is nested too deeply") from None
            except Exception as e:  # noqa: BLE001 - the diagnosis itself failed: still a bug
                bug = e
            err = InternalError(f"internal error: this is a bug in instancetype, not a problem with the input: "
                                f"cannot {what}: {type(bug).__name__}: {bug}")
            err.__cause__ = bug     # (set, not `raise ... from`: a compiled build drops the cause)
            raise err

        return entry

    return wrap
