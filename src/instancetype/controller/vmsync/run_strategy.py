"""KubeVirt's `syncRunStrategy`: whether the VM's VMI should exist, by its run strategy and the
first state change request (controller/state_requests.py), and the start or stop that follows."""
from __future__ import annotations

from instancetype.store.base import Store

from .. import state_requests as requests
from . import vmis
from .state import VMSync, failed, run_strategy

RUN_STRATEGIES = ("Always", "Halted", "Manual", "RerunOnFailure", "Once", "WaitAsReceiver")


def sync(s: VMSync) -> dict | None:
    if s.vmi is not None and requests.stop_requested(s.vm, s.vmi):
        # hasStopRequestForVMI: the VMI goes (stopVMI); the request is then done. Always starts
        # the next VMI at once, and a start request behind it (a restart) is carried out next.
        vmis.stop(s)
        requests.trim_first(s.vm.setdefault("status", {}), None)
    if s.vmi is None and run_strategy(s.vm) == "Halted" and requests.start_requested(s.vm):
        # A paused start of a Halted VM: the run strategy becomes Always (or the legacy
        # `running` true), and the VMI is started under it, paused.
        return s.restart_from(set_spec_running(s.store, s.vm, s.stored, True))
    want = _wants_vmi(s.vm, s.vmi)
    if want and s.vmi is None:
        vmis.start(s)
    elif want is False and s.vmi is not None:
        vmis.stop(s)
    return None


def _wants_vmi(vm: dict, vmi: dict | None) -> bool | None:
    """True: a VMI must exist; False: none may; None: leave it as it is (Manual)."""
    strategy = run_strategy(vm)
    status = vm.get("status") or {}
    if strategy == "Always":
        return True
    if strategy in ("Halted", "WaitAsReceiver"):
        return False
    if strategy in ("RerunOnFailure", "Once"):
        # Started on creation; a stop request leaves it stopped until a start request.
        return vmi is not None or not status.get("printableStatus") or failed(vm) or requests.start_requested(vm)
    return True if vmi is None and requests.start_requested(vm) else None  # Manual: only on a start request


def set_spec_running(store: Store, vm: dict, stored: dict, running: bool) -> dict:
    """KubeVirt's getRunningPatch (and the controller's Halted-to-Always update): the legacy
    `spec.running` where the VM uses it, else `spec.runStrategy` Always / Halted, written on the
    resourceVersion read (`stored`)."""
    spec = dict(vm.get("spec") or {})
    if "running" in spec and "runStrategy" not in spec:
        spec["running"] = running
    else:
        spec["runStrategy"] = "Always" if running else "Halted"
    return store.update({**stored, "spec": spec})
