"""The objects given to the engine (or the store asked for them), their names checked.

    object_index(objects, namespace, extra=()) -> ObjectIndex
    object_list(objects) -> list        the names an ObjectIndex keys on checked (LoadError)
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from instancetype.engine.object_source import ObjectSource
from instancetype.engine.objects import ObjectIndex
from instancetype.errors import LoadError


def object_index(objects: Any, default_namespace: str, extra: Iterable[Mapping[str, Any]] = ()) -> ObjectIndex:
    """An ObjectIndex of `objects` (plus `extra`), after checking the names it keys on are strings
    (LoadError). An `ObjectSource` (the store) is asked on demand instead of listed."""
    if type(objects) not in (list, tuple) and isinstance(objects, ObjectSource):     # (ABC checks cost)
        index = ObjectIndex(objects, default_namespace)
        for i, obj in enumerate(object_list(list(extra))):
            index.add(obj, index=i)
        return index
    return ObjectIndex(object_list(objects) + list(extra), default_namespace)


def object_list(objects: Any) -> list[Any]:
    """`objects` as a list, the names an ObjectIndex keys on checked to be strings (LoadError)."""
    if objects is None:
        objects = ()
    elif type(objects) not in (list, tuple) and (isinstance(objects, (str, bytes, Mapping))
                                                 or not isinstance(objects, Iterable)):
        raise LoadError("objects: must be a list of objects")
    items: list[Any] = list(objects)
    for i, obj in enumerate(items):
        meta = obj.get("metadata") if type(obj) is dict or isinstance(obj, Mapping) else None
        if type(meta) is dict or isinstance(meta, Mapping):
            for key in ("name", "namespace"):
                if meta.get(key) is not None and not isinstance(meta[key], str):
                    raise LoadError(f"objects[{i}]: metadata.{key}: must be a string")
    return items
