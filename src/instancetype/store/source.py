"""The store as the engine's `objects`: looked up one object at a time, on demand.

The engine's `ObjectIndex` asks an `ObjectSource` on every miss, so admission and the
controller never list the store to find the few objects a VM refers to.
"""
from __future__ import annotations

from collections.abc import Mapping

from instancetype.engine.object_source import ObjectSource

from .base import NotFound, Store


def get_type(store: Store, kind: str, name: str, namespace: str | None = None) -> dict:
    """An instancetype or preference as a VM's matcher finds it: the object of `kind`, else a
    cluster's seed-002 flavor.kubevirt.io object of the same role (`Store.get_flavor`; the
    embedded store upgraded such objects on apply); NotFound names `kind` when neither exists."""
    try:
        return store.get(kind, name, namespace)
    except NotFound:
        found = store.get_flavor(kind, name, namespace)
        if found is None:
            raise
        return found


class StoreObjects(ObjectSource):
    """An `ObjectSource` over a store (or a transaction handle)."""

    __slots__ = ("store",)

    def __init__(self, store: Store):
        self.store = store

    def lookup(self, kind: str, name: str, namespace: str) -> Mapping | None:
        try:
            return get_type(self.store, kind, name, namespace or None)
        except NotFound:
            return None
