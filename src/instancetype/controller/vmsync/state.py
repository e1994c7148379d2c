"""What one reconcile of one VM works on (`VMSync`), and the small facts every step reads."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from instancetype.store.base import Conflict, Store
from instancetype.store.kubevirt import Settings

VM_RESOURCE = "virtualmachine.kubevirt.io"  # KubeVirt's subresource errors name the singular resource


@dataclass
class VMSync:
    """One reconcile: `vm` is ours to change (the status written at the end is built from it);
    `stored` is the VM as last read or written (its resourceVersion guards every write); `vmi`
    the VM's VMI as the steps last saw it; `failure` a `(reason, message)` to report as the
    `Failure` condition; `settings` the cluster's (`store.kubevirt.Settings`: its configuration,
    `config`, and its shared-revisions opt-in). `again(store, vm, settings, stored)` restarts the
    reconcile from a VM the steps just wrote (a run strategy changed, a VM expanded in place)."""

    store: Store
    vm: dict
    stored: dict
    settings: Settings
    again: Callable[..., dict]
    vmi: dict | None = None
    failure: tuple[str, str] | None = None
    restart_required: bool = False
    changed_since_start: bool = True    # False: the VM's spec is the one its VMI started from
    # The start revision this reconcile created (its name and the spec it holds): the
    # restart-required step compares against it without reading it back.
    started: tuple[str, dict] | None = None

    @property
    def config(self) -> dict | None:
        """The KubeVirt object's `spec.configuration` (None: there is none)."""
        return self.settings.config

    def restart_from(self, stored: dict, settings: Settings | None = None, vm: dict | None = None) -> dict:
        from instancetype.jsonutil import clone

        return self.again(self.store, clone(stored) if vm is None else vm,
                          self.settings if settings is None else settings, stored)


def name_of(vm: dict) -> tuple[str, str]:
    meta = vm.get("metadata") or {}
    return meta.get("name") or "", meta.get("namespace") or "default"


def get_vmi(store: Store, vm: dict) -> dict | None:
    name, ns = name_of(vm)
    return store.find("VirtualMachineInstance", name, ns)


def run_strategy(vm: dict) -> str:
    """`spec.runStrategy`, else the legacy `spec.running` (true: Always, false or absent: Halted)."""
    spec = vm.get("spec") or {}
    if spec.get("runStrategy"):
        return spec["runStrategy"]
    return "Always" if spec.get("running") is True else "Halted"


def reference_policy(config: dict | None) -> str:
    return ((config or {}).get("instancetype") or {}).get("referencePolicy") or "reference"


def failed(vm: dict) -> bool:
    return any(c.get("type") == "Failure" and c.get("status") == "True"
               for c in (vm.get("status") or {}).get("conditions") or ())


def conflict(vm: dict, detail: str) -> Conflict:
    name, _ = name_of(vm)
    return Conflict(f'Operation cannot be fulfilled on {VM_RESOURCE} "{name}": {detail}')


def condition(kind: str, status: str, reason: str, message: str, stamp: str) -> dict:
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastProbeTime": None,
            "lastTransitionTime": stamp}


def clear_restart_required(vm: dict) -> None:
    """cleanupRestartRequired: at every start and stop."""
    status = vm.get("status")
    if isinstance(status, dict) and status.get("conditions"):
        status["conditions"] = [c for c in status["conditions"]
                                if not (isinstance(c, dict) and c.get("type") == "RestartRequired")]
