"""Feature preferences (the `features` block).

KubeVirt: pkg/instancetype/preference/apply/features.go (applyFeaturePreferences,
applyHyperVFeaturePreferences).
"""
from __future__ import annotations

from typing import Any

from ._util import child, copy_value, domain

_FILL_IF_ABSENT = (
    ("preferredApic", "apic"),
    ("preferredKvm", "kvm"),
    ("preferredPvspinlock", "pvspinlock"),
    ("preferredSmm", "smm"),
)

HYPERV_FEATURES = (
    "evmcs", "frequencies", "ipi", "reenlightenment", "relaxed", "reset", "runtime",
    "spinlocks", "synic", "synictimer", "tlbflush", "vapic", "vpindex", "vendorid",
)


def apply_features(pref_features: dict[str, Any], spec: dict[str, Any]) -> None:
    feats = child(domain(spec), "features")
    # Go: Features.ACPI is a plain struct, so a preferred ACPI always overrides the VM's.
    acpi = pref_features.get("preferredAcpi")
    if acpi is not None:
        feats["acpi"] = copy_value(acpi)
    for pkey, vkey in _FILL_IF_ABSENT:
        v = pref_features.get(pkey)
        if v is not None and feats.get(vkey) is None:
            feats[vkey] = copy_value(v)
    hyperv = pref_features.get("preferredHyperv")
    # Hyper-V passthrough and explicit Hyper-V features exclude each other: with passthrough
    # enabled the preference's Hyper-V features are not applied at all (kubevirt PR #16332).
    passthrough = feats.get("hypervPassthrough")
    if type(passthrough) is dict and passthrough.get("enabled") is True:
        hyperv = None
    if type(hyperv) is dict:
        target = child(feats, "hyperv")
        # Merged feature by feature: only what the VM leaves absent is taken.
        for name in HYPERV_FEATURES:
            v = hyperv.get(name)
            if v is not None and target.get(name) is None:
                target[name] = copy_value(v)
