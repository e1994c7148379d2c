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

from typing import Any

from instancetype.engine.spec import NormalisedSpec

from .clock import apply_clock
from .cpu import apply_cpu, preferred_topology, spread_options  # noqa: F401  (re-exported)
from .devices import apply_autoattach_block, apply_devices
from .features import apply_features
from .firmware import apply_firmware
from .machine import apply_machine
from .plan import compile_preference
from .toplevel import apply_annotations, apply_architecture, apply_toplevel  # noqa: F401

__all__ = [
    "apply_preference", "apply_autoattach", "apply_architecture",
    "preferred_topology", "spread_options",
]

# The preference's blocks in vmiApplier.Apply's order; a block that is not an object is skipped.
_BLOCKS = (("cpu", apply_cpu), ("devices", apply_devices), ("features", apply_features),
           ("firmware", apply_firmware), ("machine", apply_machine), ("clock", apply_clock))


def apply_preference(preference: dict[str, Any] | None, spec: dict[str, Any], *, metadata: dict[str, Any] | None = None,
                     for_vmi: bool = False) -> None:
    """Apply `preference` (a preference spec) to the VMI spec `spec` in place.

    `metadata` is the target object's metadata (template metadata for Expand and
    admission, the VMI's own for the VM controller); preference annotations go
    there. `for_vmi` is accepted for the VM controller's call and changes nothing:
    KubeVirt runs the same applier there; the default interface and the
    `default-0` input only get their preferred model/bus/type because the
    controller created them before applying.
    """
    if not preference:
        return
    if type(preference) is NormalisedSpec:
        # Compiled once per (never mutated) normalised spec: only the steps with work to do.
        steps = preference.steps
        if steps is None:
            steps = preference.steps = compile_preference(preference)
        for step in steps:
            step(spec, metadata)
        return
    for key, apply_block in _BLOCKS:
        block = preference.get(key)
        if type(block) is dict:
            apply_block(block, spec)
    apply_toplevel(preference, spec)
    if metadata is not None:
        apply_annotations(preference, metadata)


def apply_autoattach(preference: dict[str, Any] | None, spec: dict[str, Any]) -> None:
    """Only the five `preferredAutoattach*` values (the VM controller's step before
    the default pod network; ApplyAutoAttachPreferences)."""
    if not preference:
        return
    block = preference.get("devices")
    if type(block) is dict:
        apply_autoattach_block(block, spec)
