"""The core VMI applier (pkg/instancetype/apply/vmi.go): instancetype, then preference.

Public (stable):

    apply_to_spec(spec, metadata, instancetype, preference, *, root) -> list[str]
        Mutates `spec` (a VMI spec or a VM template spec, already cloned by the caller) and
        `metadata` (the target's metadata: `spec.template.metadata` for expand/admission, the
        VMI's own for the VM controller; only `annotations` is touched) in place.
        `instancetype` / `preference` are specs (bare or whole objects; see engine/spec.py) or
        None. `root` is the field-path root of the conflicts: "spec.template.spec" (expand,
        VM admission, revision store) or "spec" (the VM controller building the VMI).
        Returns the conflicts (field paths, handler order). With any conflict the preference
        is not applied, and `spec` may be partly changed: callers discard it.
    apply_normalised(spec, metadata, it, pref, root) -> list[str]
        The same for specs already normalised by engine/spec.py (or None).
    conflict_message(paths) -> str
        KubeVirt's text for a conflict list: `VM field(s) <p1>, <p2> conflicts with selected
        instance type` (pkg/instancetype/conflict).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from instancetype.engine.instancetype import handlers_for
from instancetype.engine.preference import apply_preference
from instancetype.engine.spec import NormalisedSpec, instancetype_spec, preference_spec


def conflict_message(paths: Iterable[str]) -> str:
    return f"VM field(s) {', '.join(paths)} conflicts with selected instance type"


def apply_to_spec(spec: dict[str, Any], metadata: dict[str, Any], instancetype: Any, preference: Any, *,
                  root: str) -> list[str]:
    if instancetype is None and preference is None:
        return []
    return apply_normalised(spec, metadata, instancetype_spec(instancetype), preference_spec(preference), root)


def apply_normalised(spec: dict[str, Any], metadata: dict[str, Any], it: NormalisedSpec | None,
                     pref: NormalisedSpec | None, root: str) -> list[str]:
    """apply_to_spec for specs engine/spec.py already normalised (or None)."""
    if it is not None:
        conflicts: list[str] = []
        # The handlers that have something to do, memoised on the (never mutated) spec itself.
        plan = it.plan
        if plan is None:
            plan = it.plan = handlers_for(it)
        for handler in plan:
            found = handler(it, spec, metadata, root, pref)
            if found:
                conflicts.extend(found)
        if conflicts:
            return conflicts
    if pref is not None:
        apply_preference(pref, spec, metadata=metadata)
    return []
