"""Run strategy and live-update limits of a VM spec (KubeVirt vms-admitter.go:
validateRunStrategy, validateLiveUpdateFeatures)."""
from __future__ import annotations

from typing import Any

from instancetype.engine.vm_validation import cpu, memory
from instancetype.engine.vm_validation._common import _E, INVALID, Gates, cause

VALID_RUN_STRATEGIES = ("Halted", "Manual", "Always", "RerunOnFailure", "Once")
RUNNING_DEPRECATED_WARNING = "spec.running is deprecated, please use spec.runStrategy instead."


def validate_run_strategy(vm_spec: dict[str, Any], gates: Gates) -> list[Any]:
    causes = []
    running, strategy = vm_spec.get("running"), vm_spec.get("runStrategy")
    if running is not None and strategy is not None:
        causes.append(cause(INVALID, "Running and RunStrategy are mutually exclusive. Note that Running is "
                            "deprecated, please use RunStrategy instead", "spec.running"))
    if running is None and strategy is None:
        causes.append(cause(INVALID, "RunStrategy must be specified", "spec.running"))
    if strategy is not None:
        if strategy == "WaitAsReceiver":
            if "DecentralizedLiveMigration" not in gates:
                causes.append(cause(INVALID, "Invalid RunStrategy (WaitAsReceiver), DecentralizedLiveMigration feature "
                                    "gate is not enabled in kubevirt resource", "spec.runStrategy"))
        elif strategy not in VALID_RUN_STRATEGIES:
            causes.append(cause(INVALID, f"Invalid RunStrategy ({strategy})", "spec.runStrategy"))
    return causes


def validate_live_update(vm_spec: dict[str, Any], live_update: bool) -> list[Any]:
    """validateLiveUpdateFeatures: with the LiveUpdate rollout strategy, the sockets within
    maxSockets and a maxGuest the memory hotplug rules accept."""
    if not live_update:
        return []
    tspec = ((vm_spec.get("template") or _E).get("spec") or _E)
    domain = (tspec.get("domain") or _E)
    causes = []
    if domain.get("cpu") is not None:
        causes.extend(cpu.validate_live_update_cpu(tspec))
    mem = domain.get("memory")
    if mem is not None and (mem or _E).get("maxGuest") is not None:
        err = memory.live_update_memory_error(tspec)
        if err is not None:
            causes.append(cause(INVALID, err, "spec.template.spec.domain.memory.guest"))
    return causes
