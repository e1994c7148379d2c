"""An index of the objects that exist (the `objects` argument of the public API).

Lookups by kind, namespace and name, in one dict access. A namespaced object
given without a namespace lives in the default namespace the index was built
for (the VM's). Objects are not copied: callers never mutate what they get.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from instancetype.api.kinds import BY_KIND
from instancetype.errors import LoadError


class ObjectIndex:
    __slots__ = ("_by_key", "default_namespace")

    def __init__(self, objects: Iterable[Mapping] = (), default_namespace: str = "default"):
        self.default_namespace = default_namespace
        self._by_key: dict[tuple[str, str, str], Mapping] = {}
        for i, obj in enumerate(objects or ()):
            self.add(obj, index=i)

    def add(self, obj: Mapping, *, index: int | None = None) -> None:
        if not isinstance(obj, Mapping):
            raise LoadError(f"objects[{index}]: not an object")
        kind = obj.get("kind")
        if not isinstance(kind, str) or not kind:
            raise LoadError(f"objects[{index}]: kind: Required value")
        meta = obj.get("metadata") or {}
        if not isinstance(meta, Mapping):
            raise LoadError(f"objects[{index}]: metadata: must be an object")
        name = meta.get("name") or ""
        res = BY_KIND.get(kind)
        namespaced = res.namespaced if res is not None else True
        ns = (meta.get("namespace") or self.default_namespace) if namespaced else ""
        self._by_key[(kind, ns, name)] = obj

    def get(self, kind: str, name: str, namespace: str | None = None) -> Mapping | None:
        res = BY_KIND.get(kind)
        namespaced = res.namespaced if res is not None else True
        ns = (namespace or self.default_namespace) if namespaced else ""
        return self._by_key.get((kind, ns, name))

    def of_kind(self, kind: str) -> list[Mapping]:
        return [o for (k, _, _), o in self._by_key.items() if k == kind]

    def __len__(self) -> int:
        return len(self._by_key)
