"""kubectl apply for custom resources: the three-way JSON merge patch and the last-applied annotation.

kubectl (jsonmergepatch.CreateThreeWayJSONMergePatch) computes, from the configuration applied
last time (`original`), the one applied now (`modified`) and the live object (`current`):
deletions of what `original` had and `modified` dropped (or set to null), plus every change from
`current` to `modified` other than nulls; fields only the server or another writer set are left
alone. Lists are replaced whole.
"""
from __future__ import annotations

import json
from typing import Any

from instancetype.api.gotext import go_json

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_MISSING = object()


def check_applied(obj: Any) -> None:
    """What kubectl and the API server refuse before anything is applied: not an object with a
    kind, a value JSON cannot hold, metadata that is not an object."""
    from instancetype.errors import LoadError
    from instancetype.store.base import BadRequest, check_json

    if not isinstance(obj, dict) or not obj.get("kind"):
        raise LoadError("apply: not a Kubernetes object")
    check_json(obj)
    if not isinstance(obj.get("metadata") or {}, dict):
        raise BadRequest("Object is not a valid Kubernetes object: its metadata is not a JSON object")


def last_applied_text(obj: dict, namespace: str | None = None) -> str:
    """The annotation's value, as kubectl writes it (apply's `GetModifiedConfiguration` on an
    unstructured object): the object as kubectl sends it, its namespace set when the kind is
    namespaced (`namespace`; cli-runtime's builder sets it), `metadata.annotations` present even
    when empty (unstructured `SetAnnotations` of an empty map) and without the annotation itself,
    encoded by encoding/json (`api.gotext.go_json`: sorted keys, `\u003c` for `<`...) with the
    newline json.Encoder ends it with. Exact, so that kubectl and this command line can apply the
    same objects in turn and each see the other's configuration as its own."""
    meta = obj.get("metadata")
    meta = dict(meta) if isinstance(meta, dict) else {}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["annotations"] = {k: v for k, v in (meta.get("annotations") or {}).items() if k != LAST_APPLIED}
    return go_json({**obj, "metadata": meta}) + "\n"


def with_last_applied(obj: dict, namespace: str | None = None) -> dict:
    """The object as kubectl sends it on apply: `namespace` set (for a namespaced kind), and the
    last-applied annotation of `last_applied_text`."""
    meta = obj.get("metadata")
    meta = dict(meta) if isinstance(meta, dict) else {}
    if namespace is not None:
        meta["namespace"] = namespace
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != LAST_APPLIED}
    meta["annotations"] = {**annotations, LAST_APPLIED: last_applied_text(obj, namespace)}
    return {**obj, "metadata": meta}


def _deletions(original: Any, modified: Any) -> dict:
    """The nulls of CreateMergePatch(original, modified): what `modified` dropped, and every null it
    sets that `original` did not already have (even for a key `original` never had)."""
    out: dict = {}
    for k, ov in original.items():
        if k not in modified:
            out[k] = None
        elif isinstance(ov, dict) and isinstance(modified[k], dict):
            sub = _deletions(ov, modified[k])
            if sub:
                out[k] = sub
    for k, mv in modified.items():
        if mv is None and (k not in original or original[k] is not None):
            out[k] = None
        elif isinstance(mv, dict) and k not in original:
            sub = _deletions({}, mv)
            if sub:
                out[k] = sub
    return out


def _additions(current: Any, modified: Any) -> dict:
    out: dict = {}
    for k, mv in modified.items():
        if mv is None:  # kubectl keeps only additions and changes here, never nulls
            continue
        cv = current.get(k, _MISSING) if isinstance(current, dict) else _MISSING
        if isinstance(mv, dict) and isinstance(cv, dict):
            sub = _additions(cv, mv)
            if sub:
                out[k] = sub
        elif cv is _MISSING or cv != mv or type(cv) is not type(mv):
            out[k] = mv
    return out


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def three_way_patch(original: dict | None, modified: dict, current: dict) -> dict:
    """The JSON merge patch kubectl sends; `{}` means unchanged."""
    return _merge(_deletions(original or {}, modified), _additions(current, modified))


def original_of(current: dict) -> dict | None:
    text = ((current.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
