"""apply_preference and apply_autoattach (the package's public functions; in a module of their own
so that the compiled build compiles them: mypyc leaves package `__init__`s as Python)."""
from __future__ import annotations

from typing import Any

from instancetype.engine.spec import NormalisedSpec

from .cpu import apply_cpu
from .plan import compile_preference
from .toplevel import apply_annotations, apply_toplevel

# (The block appliers other than cpu's are imported where they are used, as plan.py does: a
# preference has few blocks, and a command line pays for every module it loads.)


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
    from .clock import apply_clock
    from .devices import apply_devices
    from .features import apply_features
    from .firmware import apply_firmware
    from .machine import apply_machine

    # the preference's blocks in vmiApplier.Apply's order; a block that is not an object is skipped
    for key, apply_block in (("cpu", apply_cpu), ("devices", apply_devices), ("features", apply_features),
                             ("firmware", apply_firmware), ("machine", apply_machine), ("clock", apply_clock)):
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
        from .devices import apply_autoattach_block

        apply_autoattach_block(block, spec)
