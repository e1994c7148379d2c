"""Specs decoded once, for callers that expand or admit many VMs with the same instancetype.

Public (stable):

    decode_instancetype(obj) -> DecodedSpec
    decode_preference(obj) -> DecodedSpec
        `obj`: a spec, or a whole (cluster) instancetype / preference object, as `expand`'s
        `instancetype=` / `preference=` take them. The answer may be passed there in its place,
        to `expand`, `admit_vm`, `build_vmi` and `check_requirements`, for any number of calls:
        the spec is then used as it is, as KubeVirt's appliers use the typed spec its finder
        returned, where a dict is matched by its content at every call (a content key, one
        msgpack encoding, since a caller may change a dict between two calls). The answers are
        the same either way. `DecodedSpec.to_dict()` gives the decoded spec back (quantities in
        canonical form). Errors: DecodeError, QuantityError, as `expand` reports them.
"""
from __future__ import annotations

from typing import Any

from instancetype.engine.guard import public
from instancetype.engine.spec import DecodedSpec, instancetype_spec, preference_spec, unwrap
from instancetype.errors import DecodeError


def _decode_instancetype(x: Any) -> None:
    from instancetype.api import v1beta1

    v1beta1.decode_instancetype_spec(unwrap(x))


def _decode_preference(x: Any) -> None:
    from instancetype.api import v1beta1

    v1beta1.decode_preference_spec(unwrap(x))


def _given(obj: Any, what: str) -> None:
    if obj is None:
        raise DecodeError(f"{what} must be an object, got None")


@public("decode instancetype", decode_first=_decode_instancetype)
def decode_instancetype(obj: Any) -> DecodedSpec:
    _given(obj, "instancetype")
    return obj if type(obj) is DecodedSpec and obj.tag == "it" else DecodedSpec("it", instancetype_spec(obj))


@public("decode preference", decode_first=_decode_preference)
def decode_preference(obj: Any) -> DecodedSpec:
    _given(obj, "preference")
    return obj if type(obj) is DecodedSpec and obj.tag == "pref" else DecodedSpec("pref", preference_spec(obj))
