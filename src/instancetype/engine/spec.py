"""Normalise a given instancetype or preference into the spec the engine applies.

Public (stable) functions:

    is_whole_object(x) -> bool
        Whether `x` is a whole VirtualMachine(Cluster)Instancetype/Preference object (a dict
        with `spec`, `kind` or `metadata` at the top) rather than a bare spec.
    unwrap(x) -> dict | None
        A bare spec, or a whole object, -> the spec dict (not copied).
    instancetype_spec(x) -> dict | None
        `unwrap` + KubeVirt's reading of the typed fields: `cpu.guest` is a uint32,
        `memory.guest` / `memory.maxGuest` are quantities printed in canonical form
        (`memory.guest` absent reads as the zero quantity "0", as Go's zero Quantity),
        `memory.overcommitPercent` an int. Returns a new dict (the input is not touched);
        the result is built from a private copy of the input and cached by the input's content
        (engine/cache.py): a returned spec (a `NormalisedSpec`) must never be mutated (apply
        copies what it puts into a VM).
    preference_spec(x) -> dict | None
        `unwrap` + `requirements.memory.guest` in canonical form.

Errors: `DecodeError` naming the field for values Go's JSON decoder would refuse,
`QuantityError` (apimachinery's texts) for bad quantities.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import msgspec

from instancetype.engine.cache import ContentCache, private_copy
from instancetype.engine.jsondata import copy_json
from instancetype.errors import DecodeError, InternalError, QuantityError
from instancetype.jsonutil import json_problem

_UINT32_MAX = 4294967295


class DecodedSpec:
    """An instancetype or preference spec decoded once (engine/decoded_spec.py, public): what
    KubeVirt's finders hand its appliers, a typed spec read once and used for every VM. Passed
    as `instancetype=` / `preference=`, it is used as it is: no content key, no lookup. Opaque and
    never mutated: it holds the engine's own normalised copy, which nothing outside can reach
    (a dict could be changed by its caller between two calls; this cannot)."""

    __slots__ = ("tag", "spec")

    def __init__(self, tag: str, spec: Any):
        # Only the engine's own normalised copy: a plain dict here would skip every check a
        # spec passes on its way in (decode_instancetype / decode_preference build these).
        # (`spec` typed Any: compiled, a narrower annotation would be trusted and this check
        # dropped.)
        if tag not in ("it", "pref") or not (spec is None or type(spec) is NormalisedSpec):
            raise TypeError("DecodedSpec is made by instancetype.decode_instancetype or decode_preference")
        self.tag = tag          # "it" or "pref"
        self.spec: NormalisedSpec | None = spec

    def to_dict(self) -> dict[str, Any] | None:
        """A copy of the decoded spec, quantities in canonical form (None for an object without one)."""
        return None if self.spec is None else copy_json(dict(self.spec))

    def __repr__(self) -> str:
        what = "instancetype" if self.tag == "it" else "preference"
        return f"<decoded {what} spec>"


def is_whole_object(x: Any) -> bool:
    return isinstance(x, dict) and ("spec" in x or "kind" in x or "metadata" in x)


def unwrap(x: Any) -> dict[str, Any] | None:
    if x is None:
        return None
    if type(x) is DecodedSpec:
        return x.spec
    if not isinstance(x, dict):
        raise DecodeError(f"instancetype or preference must be an object, got {type(x).__name__}")
    if is_whole_object(x):
        spec = x.get("spec")
        if spec is None:
            return {}
        if not isinstance(spec, dict):
            raise DecodeError("spec: must be an object")
        return spec
    return x


@lru_cache(maxsize=4096)
def _canonical_str(text: str) -> str:
    from instancetype.api.quantity import Quantity

    return str(Quantity.parse(text))


def canonical_quantity(v: Any, field: str = "") -> str:
    """A quantity value (string or JSON number) -> its canonical text, as Kubernetes prints it."""
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise DecodeError(f"{field}: quantities must be a string or a number" if field
                          else "quantities must be a string or a number")
    key = v if isinstance(v, str) else repr(v) if isinstance(v, float) else str(v)
    try:
        return _canonical_str(key)
    except QuantityError:
        raise
    except Exception as e:  # noqa: BLE001 - the parser refuses bad text with QuantityError only
        raise InternalError(f"internal error: this is a bug in instancetype, not a problem with the input: "
                            f"quantity {key[:40]!r}: {type(e).__name__}: {e}") from e


def _uint32(v: Any, field: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        else:
            raise DecodeError(f"{field}: cannot unmarshal {v!r} into a uint32")
    if v < 0 or v > _UINT32_MAX:
        raise DecodeError(f"{field}: cannot unmarshal number {v} into a uint32")
    return int(v)


def _obj(v: Any, field: str) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise DecodeError(f"{field}: must be an object")
    return v


# an instancetype field's applier (engine/instancetype): (instancetype, VMI spec, VMI metadata, field
# root, preference) -> the conflicting paths
Handler = Callable[[dict[str, Any], dict[str, Any], dict[str, Any], str, dict[str, Any] | None], list[str]]


class NormalisedSpec(dict[str, Any]):
    """A spec this module produced: a dict, plus what an answer depends on that its content
    cannot show. Passing one again returns it as is, so callers may normalise at every layer
    for free. Never mutated once built (the handlers copy what they put into a VM).

    `guest_format`: the quantity format of `memory.guest` as given (instancetypes only):
    canonical text can lose it ("1.5Ki" prints "1536", which reads back as DecimalSI), and the
    overcommitted memory request is printed in the guest's format.
    `plan`: the instancetype handlers that have something to do (engine/apply.py), memoised.
    `steps`: a preference's compiled steps (engine/preference/plan.py), memoised."""

    __slots__ = ("guest_format", "plan", "steps")

    def __init__(self, *args: Any, guest_format: str | None = None):
        super().__init__(*args)
        self.guest_format = guest_format
        self.plan: tuple[Handler, ...] | None = None
        self.steps: tuple[Any, ...] | None = None


def guest_format(it: dict[str, Any]) -> str | None:
    """The quantity format of a normalised instancetype's `memory.guest` as it was given."""
    return it.guest_format if type(it) is NormalisedSpec else None


@lru_cache(maxsize=1024)
def _format_str(text: str) -> str:
    from instancetype.api.quantity import Quantity

    return Quantity.parse(text).format


# Normalised specs by the content of their input, so a spec given again (a new dict with the
# same content, or the same dict) is read once. Built from a private copy (the decoded key), so
# a caller mutating its input later cannot change a cached spec; an input msgpack cannot hold
# is built from a deep copy every time, never cached.
_BY_CONTENT: ContentCache[NormalisedSpec] = ContentCache(4096)
_PACK = msgspec.msgpack.Encoder().encode
# The last spec of each side (instancetype, preference) with its content: a caller expanding many
# VMs with one spec finds it by comparing the bytes, before hashing them for the LRU. Keyed by
# content like the LRU, so it cannot change an answer either; one tuple, swapped whole.
_LAST: list[tuple[bytes, NormalisedSpec] | None] = [None, None]


def _build_checked(tag: str, x: Any, build: Callable[[Any], NormalisedSpec | None]) -> NormalisedSpec | None:
    """`build(x)` once `x` is known to be JSON data (a Python caller can pass int keys, bytes,
    NaN, ...; paid once per distinct spec)."""
    problem = json_problem(x)
    if problem is not None:
        path, reason = problem
        what = "instancetype" if tag == "it" else "preference"
        raise DecodeError(f"{what}{'.' + path if path else ''}: {reason}", field=path)
    return build(x)


def _cached(tag: str, x: Any, build: Callable[[Any], NormalisedSpec | None]) -> NormalisedSpec | None:
    if type(x) is NormalisedSpec:
        return x
    if type(x) is DecodedSpec:
        if x.tag != tag:
            given, wanted = ("preference", "instancetype") if tag == "it" else ("instancetype", "preference")
            raise DecodeError(f"{wanted}: a decoded {given} spec was given as the {wanted}")
        return x.spec
    try:
        packed = _PACK(x)
    except (TypeError, ValueError, OverflowError, RecursionError, msgspec.MsgspecError):
        return _build_checked(tag, copy_json(x), build)     # (tuples read as lists, as msgpack reads them)
    side = 0 if tag == "it" else 1
    last = _LAST[side]
    if last is not None and last[0] == packed:      # the same content as the last one: no hash, no LRU
        return last[1]
    key = (tag, packed)
    out = _BY_CONTENT.hit(key)
    if out is None:
        out = _build_checked(tag, private_copy(packed), build)
        if out is None:
            return None
        _BY_CONTENT.put(key, out)
    _LAST[side] = (packed, out)
    return out


def instancetype_spec(x: Any) -> NormalisedSpec | None:
    return _cached("it", x, _build_instancetype) if x is not None else None


def preference_spec(x: Any) -> NormalisedSpec | None:
    return _cached("pref", x, _build_preference) if x is not None else None


def _build_instancetype(x: Any) -> NormalisedSpec | None:
    spec = unwrap(x)
    if spec is None:
        return None
    out = dict(spec)
    cpu = dict(_obj(spec.get("cpu"), "spec.cpu"))
    cpu["guest"] = _uint32(cpu.get("guest", 0) or 0, "spec.cpu.guest")
    if cpu.get("maxSockets") is not None:
        cpu["maxSockets"] = _uint32(cpu["maxSockets"], "spec.cpu.maxSockets")
    out["cpu"] = cpu
    mem = dict(_obj(spec.get("memory"), "spec.memory"))
    g = mem.get("guest")
    mem["guest"] = "0" if g is None else canonical_quantity(g, "spec.memory.guest")
    fmt = "DecimalSI" if g is None else _format_str(g if isinstance(g, str) else str(g))
    if mem.get("maxGuest") is not None:
        mem["maxGuest"] = canonical_quantity(mem["maxGuest"], "spec.memory.maxGuest")
    oc = mem.get("overcommitPercent")
    if oc is not None:
        if isinstance(oc, bool) or not isinstance(oc, int):
            if isinstance(oc, float) and oc.is_integer():
                oc = int(oc)
            else:
                raise DecodeError(f"spec.memory.overcommitPercent: cannot unmarshal {oc!r} into an int")
        mem["overcommitPercent"] = oc
    out["memory"] = mem
    return NormalisedSpec(out, guest_format=fmt)


def _build_preference(x: Any) -> NormalisedSpec | None:
    spec = unwrap(x)
    if spec is None:
        return None
    req = spec.get("requirements")
    if isinstance(req, dict) and isinstance(req.get("memory"), dict) and req["memory"].get("guest") is not None:
        out = dict(spec)
        out["requirements"] = dict(req)
        m = dict(req["memory"])
        m["guest"] = canonical_quantity(m["guest"], "spec.requirements.memory.guest")
        out["requirements"]["memory"] = m
        return NormalisedSpec(out)
    return NormalisedSpec(spec)
