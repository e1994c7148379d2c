"""Spec dicts into the v1beta1 spec Structs, failing as KubeVirt's Go decoder fails."""
from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from instancetype.api.v1beta1.instancetype import VirtualMachineInstancetype, VirtualMachineInstancetypeSpec
from instancetype.api.v1beta1.preference import VirtualMachinePreference, VirtualMachinePreferenceSpec

# What the package re-exports (`from instancetype.api.v1beta1._x import *` in its __init__).
__all__ = [
    "decode_instancetype_spec",
    "decode_preference_spec",
]


S = TypeVar("S")


def _decode(data: Any, cls: type[S], root: type) -> S:
    from instancetype.api.godecode import decode_value

    if data is None:
        return cls()
    return msgspec.convert(decode_value(data, cls, root.__name__, ("spec",)), cls)


def decode_instancetype_spec(data: Any) -> VirtualMachineInstancetypeSpec:
    """A spec dict -> VirtualMachineInstancetypeSpec, failing as Go's decoder fails (DecodeError,
    QuantityError); quantities come out in canonical form, unknown keys are dropped."""
    return _decode(data, VirtualMachineInstancetypeSpec, VirtualMachineInstancetype)


def decode_preference_spec(data: Any) -> VirtualMachinePreferenceSpec:
    """A spec dict -> VirtualMachinePreferenceSpec (see decode_instancetype_spec)."""
    return _decode(data, VirtualMachinePreferenceSpec, VirtualMachinePreference)
