"""The VM's instancetype and preference matchers: the rules KubeVirt's VM mutator checks.

    check_matcher_update(old, new)      UPDATE: a matcher renamed with its revisionName kept
    check_matcher_shapes(vm)            name or inferFromVolume, not both, policy Reject/Ignore

The matcher rules are `pkg/instancetype/webhooks/vm/mutator.go`
(validateMatcherUpdate, validateInstancetypeMatcher/validatePreferenceMatcher).
Reading the VM itself is vm_decode.py (load_vm) and vm_fields.py (its parts, its quantities).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from instancetype.engine.results import Cause

# --- matcher rules -----------------------------------------------------------------------------
_NAMES = {"instancetype": "InstancetypeMatcher", "preference": "PreferenceMatcher"}
_POLICIES = ("Reject", "Ignore")
RENAME_KEEPS_REVISION = "the Matcher Name has been updated without updating the RevisionName"


def _matcher(vm: Mapping[str, Any] | None, key: str) -> dict[str, Any] | None:
    if not (type(vm) is dict or isinstance(vm, Mapping)):
        return None
    spec = vm.get("spec")
    m = spec.get(key) if (type(spec) is dict or isinstance(spec, Mapping)) else None
    return m if isinstance(m, dict) else None


def check_matcher_update(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> list[Cause]:
    """UPDATE rule (KubeVirt's validateMatcherUpdate), instancetype then preference.

    Rejected only when both matchers exist, the old one had a non-empty revisionName,
    the name changed and the revisionName did not. Adding or removing a matcher,
    changing its kind, or changing name and revisionName together are fine.
    """
    for key in ("instancetype", "preference"):
        o, n = _matcher(old, key), _matcher(new, key)
        if o is None or n is None:
            continue
        old_rev = o.get("revisionName") or ""
        if old_rev and (o.get("name") or "") != (n.get("name") or "") and old_rev == (n.get("revisionName") or ""):
            return [Cause("FieldValueInvalid", RENAME_KEEPS_REVISION, f"spec.{key}.revisionName")]
    return []


def _matcher_causes(m: dict[str, Any], key: str) -> list[Cause]:
    causes: list[Cause] = []
    base = f"spec.{key}"
    infer_from = m.get("inferFromVolume") or ""
    if not (m.get("name") or "") and not infer_from:
        causes.append(Cause("FieldValueNotFound",
                            f"Either Name or InferFromVolume should be provided within the {_NAMES[key]}", base))
    if infer_from:
        if m.get("name"):
            causes.append(Cause("FieldValueNotSupported",
                                "Name already set, should be cleared before setting inferFromVolume",
                                f"{base}.name"))
        if m.get("kind"):
            causes.append(Cause("FieldValueNotSupported",
                                "Kind already set, should be cleared before setting inferFromVolume",
                                f"{base}.kind"))
    policy = m.get("inferFromVolumeFailurePolicy")
    if policy is not None and policy not in _POLICIES:
        causes.append(Cause("FieldValueInvalid", f"Invalid value '{policy}' for InferFromVolumeFailurePolicy",
                            f"{base}.inferFromVolumeFailurePolicy"))
    return causes


def check_matcher_shapes(vm: Mapping[str, Any]) -> list[Cause]:
    """The matchers' shape (KubeVirt's validateInstancetypeMatcher / validatePreferenceMatcher).

    The instancetype matcher first; when it has causes the preference is not looked at.
    Kinds are not checked here (an unknown kind fails later, at lookup).
    """
    for key in ("instancetype", "preference"):
        m = _matcher(vm, key)
        if m is None:
            continue
        if m.get("name") and not m.get("inferFromVolume") and m.get("inferFromVolumeFailurePolicy") is None:
            continue    # named, nothing to infer, no policy: none of the rules can refuse it
        causes = _matcher_causes(m, key)
        if causes:
            return causes
    return []
