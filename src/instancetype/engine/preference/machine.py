"""Machine preference. KubeVirt: pkg/instancetype/preference/apply/machine.go."""
from __future__ import annotations

from typing import Any

from ._util import child, domain


def apply_machine(pref_machine: dict[str, Any], spec: dict[str, Any]) -> None:
    mtype = pref_machine.get("preferredMachineType")
    if not mtype:
        return
    machine = child(domain(spec), "machine")
    if not machine.get("type"):
        machine["type"] = mtype
