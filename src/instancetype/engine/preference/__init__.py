"""Preference application: every `preferred*` value of a VirtualMachinePreferenceSpec
fills what the VMI spec leaves empty (a few, noted in the modules, override).

    apply_preference(preference, spec, *, metadata=None, for_vmi=False) -> None
    apply_autoattach(preference, spec) -> None

Both mutate `spec` (and `metadata`) in place: the caller has already cloned
them. Preference application never conflicts and never fails. Values taken from
the preference are copied, so the preference itself is never aliased.

KubeVirt: pkg/instancetype/preference/apply/vmi.go (vmiApplier.Apply), in its order:
cpu, devices, features, firmware, machine, clock, subdomain, termination grace
period, architecture, annotations, launch security.
"""
from __future__ import annotations

from .apply import apply_autoattach, apply_preference
from .cpu import preferred_topology, spread_options
from .toplevel import apply_architecture

__all__ = [
    "apply_preference", "apply_autoattach", "apply_architecture",
    "preferred_topology", "spread_options",
]
