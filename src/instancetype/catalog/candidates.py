"""The instancetypes and preferences `migrate-vm` may pick, each read once.

    TypeCandidate(obj, name, ref, spec, shape, deprecated)
    PrefCandidate(obj, name, ref, spec, weight)
    type_candidates(objs) / pref_candidates(objs) -> sorted by name
    catalogue_candidates() -> (types, prefs)     the catalogue's current cluster objects, cached
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from instancetype.catalog.vmi_shape import instancetype_shape


@dataclass(frozen=True)
class TypeCandidate:
    obj: dict
    name: str
    ref: str        # kind/name as kubectl and `create vm --instancetype` spell it
    spec: dict      # normalised (engine/spec.py), never mutated
    shape: tuple
    deprecated: bool


@dataclass(frozen=True)
class PrefCandidate:
    obj: dict
    name: str
    ref: str
    spec: dict
    weight: int     # how many settings it makes: between equals, the most generic one wins


def _leaves(v: Any) -> int:
    if isinstance(v, dict):
        return sum(_leaves(x) for x in v.values()) or 1
    if isinstance(v, list):
        return sum(_leaves(x) for x in v) or 1
    return 1


def _ref(obj: dict) -> str:
    return f"{obj['kind'].lower()}/{obj['metadata']['name']}"


def type_candidates(objs: Iterable[dict]) -> list[TypeCandidate]:
    from instancetype.catalog.labels import LABEL_DEPRECATED
    from instancetype.engine.spec import instancetype_spec

    out = []
    for o in objs:
        spec = instancetype_spec(o)
        if spec is None:        # (an object without a spec offers no shape)
            continue
        labels = (o.get("metadata") or {}).get("labels") or {}
        deprecated = labels.get(LABEL_DEPRECATED) == "true"
        out.append(TypeCandidate(o, o["metadata"]["name"], _ref(o), spec, instancetype_shape(spec), deprecated))
    return sorted(out, key=lambda t: t.name)


def pref_candidates(objs: Iterable[dict]) -> list[PrefCandidate]:
    from instancetype.engine.spec import preference_spec

    out = []
    for o in objs:
        spec: dict[str, Any] = preference_spec(o) or {}
        weight = _leaves({k: v for k, v in spec.items() if k != "annotations"})
        out.append(PrefCandidate(o, o["metadata"]["name"], _ref(o), spec, weight))
    return sorted(out, key=lambda p: p.name)


@lru_cache(maxsize=1)
def catalogue_candidates() -> tuple[tuple[TypeCandidate, ...], tuple[PrefCandidate, ...]]:
    from instancetype import catalog

    # Only current types: migrating onto a deprecated one (gn1, server, highperformance) helps no one.
    return (tuple(type_candidates(catalog.instancetypes(namespaced=False, deprecated=False))),
            tuple(pref_candidates(catalog.preferences(namespaced=False, deprecated=False))))
