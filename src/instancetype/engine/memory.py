"""Memory overcommit arithmetic, exactly as KubeVirt computes it (float32).

Public (stable):

    overcommit_request(guest, percent, fmt=None) -> str
        The `domain.resources.requests.memory` an instancetype with `overcommitPercent`
        gives: V = guest's integer byte value (rounded up), then
        int(f32(f32(V) * f32(1 - f32(f32(P) / 100)))) where every step is IEEE single
        precision with round-to-nearest-even (pkg/instancetype/apply/memory.go does the
        arithmetic on Go float32), truncated toward zero; printed as a quantity in the
        guest quantity's format. 128Mi at 15% -> "114085072", 512M at 15% -> "435200k".
    f32(x) -> float
        x rounded to the nearest float32 (struct round trip).
"""
from __future__ import annotations

import math
import struct
from functools import lru_cache

_pack = struct.Struct("<f")


def f32(x: float) -> float:
    try:
        rounded: float = _pack.unpack(_pack.pack(x))[0]
        return rounded
    except OverflowError:
        return math.copysign(math.inf, x)


def overcommit_value(value: int, percent: int) -> int:
    """The overcommitted byte count for `value` bytes at `percent` (Go float32 arithmetic)."""
    factor = f32(1.0 - f32(f32(float(percent)) / 100.0))
    result = f32(f32(float(value)) * factor)
    if math.isinf(result) or math.isnan(result):
        # Go's float32 -> int64 conversion of an out-of-range value is implementation
        # defined (amd64 gives the minimum int64); unreachable with real quantities.
        return -(1 << 63)
    return int(result)  # truncates toward zero, as Go's conversion


@lru_cache(maxsize=1024)
def overcommit_request(guest: str, percent: int, fmt: str | None = None) -> str:
    """`fmt` is the guest's format as given when it differs from what `guest` reads as."""
    from instancetype.api.quantity import Quantity

    q = Quantity.parse(guest)
    return str(Quantity.from_int(overcommit_value(q.value(), percent), fmt or q.format))
