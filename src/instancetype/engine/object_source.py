"""ObjectSource: the base class of the stores' object sources (store/source.py, store/kube/cached.py).

A module of its own so that it stays interpreted in the compiled build (setup.py's NOT_COMPILED):
interpreted classes cannot derive from a class mypyc compiled, and the stores' sources are
interpreted. Nothing on a hot path runs here: the engine only tells a source from a list by it.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any


class ObjectSource(ABC):
    """Objects that live elsewhere (the store): found one at a time instead of listed up front.

    A base class, not a structural protocol: the engine tells a source from a list of objects by
    its type (`isinstance`), so a source says what it is by deriving from this."""

    __slots__ = ()

    @abstractmethod
    def lookup(self, kind: str, name: str, namespace: str) -> Mapping[str, Any] | None:
        """The object, or None when there is none."""
