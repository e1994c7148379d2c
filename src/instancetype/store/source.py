"""The store as the engine's `objects`: looked up one object at a time, on demand.

The engine's `ObjectIndex` asks an `ObjectSource` on every miss, so admission and the
controller never list the store to find the few objects a VM refers to.
"""
from __future__ import annotations

from typing import Mapping

from .base import NotFound, Store


class StoreObjects:
    """An `ObjectSource` over a store (or a transaction handle)."""

    __slots__ = ("store",)

    def __init__(self, store: Store):
        self.store = store

    def lookup(self, kind: str, name: str, namespace: str) -> Mapping | None:
        try:
            return self.store.get(kind, name, namespace or None)
        except NotFound:
            return None
