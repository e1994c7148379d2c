"""KubeVirt's `syncRunStrategy`: whether the VM's VMI should exist, by its run strategy and the
first state change request (controller/state_requests.py), and the start or stop that follows.

    Always          a VMI always; a stop request restarts it
    RerunOnFailure  started when a start is asked or the VM comes from another run strategy
                    (`status.runStrategy`, written once a VMI was created, differs); a stop request
                    or a finished VMI stops it (a failed one is asked to start again)
    Manual          started and stopped by requests only
    Halted          no VMI; a start request (a paused start) turns the VM to Always
    Once            a VMI whenever none exists; a finished one is left as it is
    WaitAsReceiver  a receiver VMI (`kubevirt.io/create-migration-target`), waiting for a migration
"""
from __future__ import annotations

from instancetype.engine.vmi import MIGRATION_TARGET_ANNOTATION
from instancetype.jsonutil import clone
from instancetype.store.base import Store
from instancetype.store.kubevirt import Settings

from .. import revisions
from .. import state_requests as requests
from . import vmis
from .state import VMSync, reference_policy, run_strategy

RUN_STRATEGIES = ("Always", "Halted", "Manual", "RerunOnFailure", "Once", "WaitAsReceiver")
NON_RECEIVER_VMI = "Found non receiver VMI while VM is receiver"      # vm.go nonReceiverVMI
RESTORE_RUN_STRATEGY = "kubevirt.io/restore-run-strategy"            # v1.RestoreRunStrategy


def sync(s: VMSync) -> dict | None:
    strategy = run_strategy(s.vm)
    if s.vmi is not None and strategy != "Once" and requests.stop_requested(s.vm, s.vmi):
        # hasStopRequestForVMI: the VMI goes (stopVMI); the request is then done. Always starts
        # the next VMI at once, and a start request behind it (a restart) is carried out next.
        vmis.stop(s)
        requests.trim_first(s.vm.setdefault("status", {}), s.vmi)     # done once the VMI is gone
    if s.vmi is not None:
        return _with_vmi(s, strategy)
    if strategy == "Halted" and requests.start_requested(s.vm):
        # A paused start of a Halted VM: the run strategy becomes Always (or the legacy
        # `running` true), and the VMI is started under it, paused.
        return s.restart_from(start_running(s.store, s.vm, s.stored, s.settings))
    if _should_start(s.vm, strategy):
        vmis.start(s)
    return None


def _should_start(vm: dict, strategy: str) -> bool:
    if strategy in ("Always", "Once", "WaitAsReceiver"):
        return True
    if strategy == "RerunOnFailure":
        # "when coming here from a different RunStrategy we have to start the VM"
        return requests.start_requested(vm) or (vm.get("status") or {}).get("runStrategy") != strategy
    if strategy == "Manual":
        return requests.start_requested(vm)
    return False


def _with_vmi(s: VMSync, strategy: str) -> dict | None:
    vmi = s.vmi
    assert vmi is not None
    phase = (vmi.get("status") or {}).get("phase")
    if strategy == "Halted":
        vmis.stop(s)
    elif strategy == "Always" and phase in ("Failed", "Succeeded"):
        vmis.stop(s)            # restarted by the next reconcile
    elif strategy == "RerunOnFailure" and phase in ("Failed", "Succeeded"):
        vmis.stop(s)
        if phase == "Failed":   # addStartRequest
            s.vm.setdefault("status", {})["stateChangeRequests"] = [requests.start_request()]
    elif strategy == "WaitAsReceiver" and not _is_receiver(vmi):
        if ((vmi.get("status") or {}).get("migrationState") or {}).get("completed"):
            restore = ((s.vm.get("metadata") or {}).get("annotations") or {}).get(RESTORE_RUN_STRATEGY)
            if restore:
                spec = {**(s.vm.get("spec") or {}), "runStrategy": restore}
                return s.restart_from(s.store.update({**s.stored, "spec": spec}))
        else:
            s.failure = ("FailedCreate", NON_RECEIVER_VMI)
    return None


def _is_receiver(vmi: dict) -> bool:
    return ((vmi.get("metadata") or {}).get("annotations") or {}).get(MIGRATION_TARGET_ANNOTATION) == "true"


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


def start_running(store: Store, vm: dict, stored: dict, settings: Settings) -> dict:
    """A Halted VM turned to run (`set_spec_running`), its matchers' `revisionName`s written in
    that same update.

    v1.9 pins a VM in its status only (`status.<side>Ref`), so a first start from Halted changes
    `metadata.generation` once: the run strategy. The seeds also write the pins into the matchers
    at the first start; done by a later write of the controller, that would be a second spec
    change, hence a second generation. So the revisions are stored first and named in the one
    update that starts the VM. A pin that fails (an instancetype not found) is left to the
    controller's start, which reports it as v1.9 does (FailedFindInstancetype, ...)."""
    pinned = clone(vm)
    replaced: list[str] = []
    try:
        if reference_policy(settings.config) == "reference":
            revisions.capture(store, pinned, settings.shared_revisions, replaced=replaced)
    except revisions.SyncError:
        pinned, replaced = vm, []
    written = set_spec_running(store, pinned, stored, True)
    if replaced:
        revisions.drop_replaced(store, written, replaced)
    return written
