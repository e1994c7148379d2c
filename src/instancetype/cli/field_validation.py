"""kubectl's `--validate` (server-side field validation) for the objects the embedded store
decodes against a structural schema: VirtualMachines.

    validate_mode(value) -> "strict" | "warn" | "ignore"
    check_fields(obj, mode, *, verb, source) -> (obj, warnings, failure)

`strict` (kubectl's default, `true`): an object with fields its type does not have is refused
as the API server refuses it (`strict decoding error: unknown field "spec.cpus"`); `warn`: it
goes on without them and each is a warning (`unknown field "spec.cpus"`); `ignore` (`false`):
it goes on without them, silently (the API server's structural pruning).

A VM naming the old flavor API (`spec.flavor`, which the store upgrades to `spec.instancetype`,
seed 002) is checked as upgraded: `spec.flavor` is not an unknown field here.
"""
from __future__ import annotations

from typing import Any

from .kubectl import CommandError, Failure

_MODES = {"strict": "strict", "true": "strict", "warn": "warn", "ignore": "ignore", "false": "ignore"}


def validate_mode(value: str) -> str:
    mode = _MODES.get(value.lower())
    if mode is None:
        raise CommandError(f'error: invalid - validate option "{value}"; must be one of: strict (or true), warn, '
                           f'ignore (or false)')
    return mode


def check_fields(obj: Any, mode: str, *, verb: str, source: str) -> tuple[Any, list[str], Failure | None]:
    """The object to store (pruned unless strict), the warnings, or the refusal."""
    if not isinstance(obj, dict) or obj.get("kind") != "VirtualMachine" \
            or not str(obj.get("apiVersion") or "").startswith("kubevirt.io/"):
        return obj, [], None
    from instancetype.engine.vm_validation.schema import prune_unknown_fields, unknown_fields

    spec = obj.get("spec")
    legacy = {"flavor": spec["flavor"]} if isinstance(spec, dict) and "flavor" in spec else {}
    if mode == "strict":
        unknown = [p for p in unknown_fields(obj) if not (legacy and p == "spec.flavor")]
        if not unknown:
            return obj, [], None
        version = str(obj["apiVersion"]).split("/", 1)[1]
        detail = ", ".join(f'unknown field "{p}"' for p in unknown)
        text = (f'Error from server (BadRequest): error when {verb} "{source}": VirtualMachine in version '
                f'"{version}" cannot be handled as a VirtualMachine: strict decoding error: {detail}')
        return obj, [], Failure(text, text)
    pruned, unknown = prune_unknown_fields(obj)
    if legacy:
        unknown = [p for p in unknown if p != "spec.flavor"]
        if isinstance(pruned.get("spec"), dict):
            pruned["spec"] = {**pruned["spec"], **legacy}
    if not unknown:
        return obj, [], None
    return pruned, ([f'unknown field "{p}"' for p in unknown] if mode == "warn" else []), None
