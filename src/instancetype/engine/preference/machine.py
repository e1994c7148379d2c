"""Machine preference. KubeVirt: pkg/instancetype/preference/apply/machine.go."""
from __future__ import annotations

from ._util import child, domain


def apply_machine(pref_machine: dict, spec: dict) -> None:
    mtype = pref_machine.get("preferredMachineType")
    if not mtype:
        return
    machine = child(domain(spec), "machine")
    if not machine.get("type"):
        machine["type"] = mtype
