"""The engine's one cache policy: values built from an input, keyed by the input's content.

    content_key(x) -> bytes | None      msgpack bytes of `x` (~0.3 µs for a spec), or None when
                                        msgpack cannot hold it (such inputs are never cached)
    private_copy(key) -> Any            a new copy of the content the key was made from
    ContentCache(maxsize)               a bounded map, least recently used entry dropped first

Nothing is keyed by identity (`id()`), and everything an answer depends on is inside the cached
value itself: a server that sees thousands of distinct inputs, inputs msgpack cannot pack, or
inputs mutated by their caller after a call, gets the same answer for the same input whatever
was asked before (tests/engine/test_cache_churn.py).
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import msgspec

_PACK = msgspec.msgpack.Encoder().encode
_UNPACK = msgspec.msgpack.Decoder().decode


def content_key(x: Any) -> bytes | None:
    try:
        return _PACK(x)
    except (TypeError, ValueError, OverflowError, RecursionError, msgspec.MsgspecError):
        return None


def private_copy(key: bytes) -> Any:
    return _UNPACK(key)


V = TypeVar("V")


class ContentCache(OrderedDict[Hashable, V]):
    """A bounded map from content keys to values built from that content (LRU). Its `get` and
    `move_to_end` are OrderedDict's own (C) methods: the hot paths call them directly."""

    def __init__(self, maxsize: int):
        super().__init__()
        self.maxsize = maxsize

    def hit(self, key: Hashable) -> V | None:
        """The value for `key` (marked most recently used), or None."""
        value = self.get(key)
        if value is not None:
            try:
                self.move_to_end(key)
            except KeyError:    # evicted by another thread meanwhile: the value is still right
                pass
        return value

    def put(self, key: Hashable, value: V) -> V:
        self[key] = value
        if len(self) > self.maxsize:
            self.popitem(last=False)
        return value

    def get_or_build(self, key: Hashable, build: Callable[[], V]) -> V:
        value = self.hit(key)
        return value if value is not None else self.put(key, build())
