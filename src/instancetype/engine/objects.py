"""An index of the objects that exist (the `objects` argument of the public API).

Lookups by kind, namespace and name, in one dict access. A namespaced object
given without a namespace lives in the default namespace the index was built
for (the VM's). Objects are not copied: callers never mutate what they get.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from instancetype.api.kinds import BY_KIND, DEFAULT_NAMESPACE
from instancetype.engine.object_source import ObjectSource
from instancetype.errors import LoadError


class ObjectIndex:
    """`objects` may be an iterable of objects, or an `ObjectSource` (e.g. the embedded store),
    which is asked on every miss (what it finds is kept: an index lives for one engine call,
    during which nothing is written); either way the engine sees one `get`."""

    __slots__ = ("_by_key", "default_namespace", "_source")

    def __init__(self, objects: Iterable[Mapping[str, Any]] | ObjectSource = (), default_namespace: str = DEFAULT_NAMESPACE):
        self.default_namespace = default_namespace
        self._by_key: dict[tuple[str, str, str], Mapping[str, Any]] = {}
        self._source: ObjectSource | None = None
        if isinstance(objects, ObjectSource):
            self._source = objects
            return
        for i, obj in enumerate(objects or ()):
            self.add(obj, index=i)

    def add(self, obj: Mapping[str, Any], *, index: int | None = None) -> None:
        if type(obj) is not dict and not isinstance(obj, Mapping):     # (an ABC check costs: dicts first)
            raise LoadError(f"objects[{index}]: not an object")
        kind = obj.get("kind")
        if not isinstance(kind, str) or not kind:
            raise LoadError(f"objects[{index}]: kind: Required value")
        meta = obj.get("metadata") or {}
        if type(meta) is not dict and not isinstance(meta, Mapping):
            raise LoadError(f"objects[{index}]: metadata: must be an object")
        for field in ("name", "namespace"):
            if not isinstance(meta.get(field) or "", str):
                raise LoadError(f"objects[{index}]: metadata.{field}: must be a string")
        name = meta.get("name") or ""
        res = BY_KIND.get(kind)
        namespaced = res.namespaced if res is not None else True
        ns = (meta.get("namespace") or self.default_namespace) if namespaced else ""
        self._by_key[(kind, ns, name)] = obj

    def get(self, kind: str, name: str, namespace: str | None = None) -> Mapping[str, Any] | None:
        res = BY_KIND.get(kind)
        namespaced = res.namespaced if res is not None else True
        ns = (namespace or self.default_namespace) if namespaced else ""
        key = (kind, ns, name)
        found = self._by_key.get(key)
        if found is None and self._source is not None:
            found = self._source.lookup(kind, name, ns)
            if found is not None:
                # Kept for the index's life (one engine call, which writes nothing): an object
                # found more than once in a call (the VM admission's preference was found by its
                # mutating and again by its validating step) is read from the store once.
                self._by_key[key] = found
        return found

    def __len__(self) -> int:
        return len(self._by_key)
