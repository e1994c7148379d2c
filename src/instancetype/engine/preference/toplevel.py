"""Simple top-level preferences: subdomain, termination grace period,
architecture, annotations and launch security.

KubeVirt: pkg/instancetype/preference/apply/ subdomain.go, termination.go,
architecture.go, annotations.go, launchsecurity.go.
"""
from __future__ import annotations

from typing import Any

from ._util import copy_value, domain


def apply_toplevel(preference: dict[str, Any], spec: dict[str, Any]) -> None:
    sub = preference.get("preferredSubdomain")
    if sub is not None and not spec.get("subdomain"):
        spec["subdomain"] = sub

    tgps = preference.get("preferredTerminationGracePeriodSeconds")
    if tgps is not None and spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = tgps

    apply_architecture(preference, spec)

    ls = preference.get("preferredLaunchSecurity")
    if ls is not None:
        dom = domain(spec)
        # Runs after the instancetype step: instancetype, then VM, then preference.
        if dom.get("launchSecurity") is None:
            dom["launchSecurity"] = copy_value(ls)


def apply_architecture(preference: dict[str, Any], spec: dict[str, Any]) -> None:
    """preferredArchitecture (non-empty) fills an empty VM architecture (ApplyArchitecturePreferences)."""
    arch = preference.get("preferredArchitecture")
    if arch and not spec.get("architecture"):
        spec["architecture"] = arch


def apply_annotations(preference: dict[str, Any], metadata: dict[str, Any] | None) -> None:
    """Preference annotations are added where the key is missing; never overwrite, never conflict."""
    ann = preference.get("annotations")
    if not ann or type(ann) is not dict or metadata is None:
        return
    target = metadata.get("annotations")
    if type(target) is not dict:
        target = metadata["annotations"] = {}
    for k, v in ann.items():
        if k not in target:
            target[k] = v
