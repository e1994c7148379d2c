"""Comparing two VMIs for `migrate-vm`: the proof that a migration leaves the guest alone.

    vmi_differences(original, migrated, instancetype=None, preference=None) -> [(path, a, b)]
    explain(diffs, limit=3) -> "spec.domain.cpu.cores would be 1, not 2; ..."

The annotations an instancetype and a preference add to the VMI (their names, their own
spec annotations) are not differences: they are what referencing the pair means.
"""
from __future__ import annotations

import json
from typing import Any

from instancetype.api import kinds as K
from instancetype.catalog.template_paths import MISSING, Path, path_text


def _diff(a: Any, b: Any, path: Path, out: list) -> None:
    if type(a) is not type(b):
        out.append((path, a, b))
    elif isinstance(a, dict):
        for k in a:
            if k not in b:
                out.append((path + (k,), a[k], MISSING))
            else:
                _diff(a[k], b[k], path + (k,), out)
        for k in b:
            if k not in a:
                out.append((path + (k,), MISSING, b[k]))
    elif isinstance(a, list):
        if len(a) != len(b):
            out.append((path, a, b))
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                _diff(x, y, path + (i,), out)
    elif a != b:
        out.append((path, a, b))


def vmi_differences(original: dict, migrated: dict, instancetype: dict | None = None,
                    preference: dict | None = None) -> list[tuple]:
    """(path, original value, migrated value) where two VMIs differ, ignoring the annotations the
    instancetype and preference add: their name annotations and their own spec annotations
    (specs or whole objects), where the original VMI has no such annotation."""
    from instancetype.engine.spec import unwrap

    excused = {K.ANNOTATION_INSTANCETYPE_NAME, K.ANNOTATION_CLUSTER_INSTANCETYPE_NAME,
               K.ANNOTATION_PREFERENCE_NAME, K.ANNOTATION_CLUSTER_PREFERENCE_NAME}
    for side in (instancetype, preference):
        excused.update((unwrap(side) or {}).get("annotations") or {})
    orig_ann = (original.get("metadata") or {}).get("annotations") or {}
    mig_meta = migrated.get("metadata") or {}
    mig_ann = mig_meta.get("annotations") or {}
    kept = {k: v for k, v in mig_ann.items() if k in orig_ann or k not in excused}
    if kept != mig_ann:
        migrated = dict(migrated, metadata=dict(mig_meta, annotations=kept))
        if not kept and "annotations" not in (original.get("metadata") or {}):
            del migrated["metadata"]["annotations"]
    out: list = []
    _diff(original, migrated, (), out)
    return out


def _value(v: Any) -> str:
    return "unset" if v is MISSING else json.dumps(v, separators=(",", ":"), sort_keys=True)


def explain(diffs: list, limit: int = 3) -> str:
    """`spec.domain.cpu.cores would be 1, not 2; ...`: VMI paths, migrated value first."""
    parts = [f"{path_text(p, '')[1:]} would be {_value(b)}, not {_value(a)}" for p, a, b in diffs[:limit]]
    text = "; ".join(parts)
    if len(diffs) > limit:
        text += f" (and {len(diffs) - limit} more)"
    return text
