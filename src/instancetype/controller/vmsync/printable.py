"""KubeVirt's `setPrintableStatus` (pkg/virt-controller/watch/vm/vm.go, v1.9.0): the VM's
`status.printableStatus`, the first of an ordered list of (value, predicate) that holds.

The predicates are not exclusive (a VM can be Running and Migrating, Paused and Terminating):
the order is the precedence, and it is v1.9's, predicate by predicate. They read the VM, its VMI
as the reconcile last saw it (None when there is none), the VMI's conditions, and the
DataVolumes and claims the VM's template names, through the store (KubeVirt reads its informer
caches: a missing object is skipped, as there).

`start_expected` / `stop_expected` are KubeVirt's controller expectations (`isVMIStartExpected`,
`isVMIStopExpected`): a VMI this reconcile created or deleted that the VMI read does not show yet.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from instancetype.store.base import APIError, Store

from .. import state_requests as requests
from .state import name_of, run_strategy

UNKNOWN = "Unknown"                                # v1.VirtualMachineStatusUnknown
# pkg/controller/controller.go: the reasons virt-handler / virt-controller put on Synchronized.
FAILED_PVC_NOT_FOUND = "FailedPvcNotFound"
ERR_IMAGE_PULL = "ErrImagePull"
IMAGE_PULL_BACK_OFF = "ImagePullBackOff"
RESTARTING_STRATEGIES = ("Always", "RerunOnFailure", "Once")


@dataclass(frozen=True)
class Inputs:
    """What the predicates read (the Controller's caches in KubeVirt)."""

    vm: dict
    vmi: dict | None
    store: Store
    start_expected: bool = False
    stop_expected: bool = False


def printable_status(vm: dict, vmi: dict | None, store: Store, *, start_expected: bool = False,
                     stop_expected: bool = False) -> str:
    """setPrintableStatus: the first value of `PRECEDENCE` whose predicate holds, else Unknown."""
    inputs = Inputs(vm, vmi, store, start_expected, stop_expected)
    for value, holds in PRECEDENCE:
        if holds(inputs):
            return value
    return UNKNOWN


# --- the VMI's phase (v1 VirtualMachineInstance.Is*) -----------------------------------------

def _phase(vmi: dict | None) -> str:
    return ((vmi or {}).get("status") or {}).get("phase") or ""


def is_final(vmi: dict) -> bool:
    return _phase(vmi) in ("Failed", "Succeeded")


def is_unprocessed(vmi: dict) -> bool:
    return _phase(vmi) in ("Pending", "")


def marked_for_deletion(obj: dict) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def vmi_condition(vmi: dict | None, kind: str) -> dict | None:
    """VirtualMachineInstanceConditionManager.GetCondition (nil-safe, as there)."""
    for c in ((vmi or {}).get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == kind:
            return c
    return None


def _has(vmi: dict | None, kind: str, status: str, reason: str | None = None) -> bool:
    c = vmi_condition(vmi, kind)
    return c is not None and c.get("status") == status and (reason is None or c.get("reason") == reason)


def _time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def is_migrating(vmi: dict | None) -> bool:
    """pkg/util/migrations IsMigrating: a migration started (startTimestamp not in the future)
    and not ended (no endTimestamp in the past)."""
    state = ((vmi or {}).get("status") or {}).get("migrationState")
    if not isinstance(state, dict):
        return False
    moment = datetime.now(UTC)
    start, end = _time(state.get("startTimestamp")), _time(state.get("endTimestamp"))
    return start is not None and start <= moment and not (end is not None and end <= moment)


# --- the VM's volumes (pkg/storage/types) ----------------------------------------------------

def _volumes(vm: dict) -> list[dict]:
    spec = (((vm.get("spec") or {}).get("template") or {}).get("spec") or {})
    return [v for v in spec.get("volumes") or () if isinstance(v, dict)]


def _read(store: Store, kind: str, name: str, namespace: str) -> dict | None:
    """GetDataVolumeFromCache / GetPersistentVolumeClaimFromCache: None when absent (or not
    readable: KubeVirt logs that and skips the volume)."""
    try:
        return store.get(kind, name, namespace)
    except APIError:
        return None


def _data_volumes(i: Inputs) -> Iterator[tuple[str, dict]]:
    _, ns = name_of(i.vm)
    for volume in _volumes(i.vm):
        source = volume.get("dataVolume")
        name = source.get("name") if isinstance(source, dict) else None
        if not name:
            continue
        dv = _read(i.store, "DataVolume", name, ns)
        if dv is not None:
            yield name, dv


def claim_name(volume: dict) -> str:
    """PVCNameFromVirtVolume: a DataVolume's claim has its name; then a PVC's, a memory dump's."""
    for key, field in (("dataVolume", "name"), ("persistentVolumeClaim", "claimName"), ("memoryDump", "claimName")):
        source = volume.get(key)
        if isinstance(source, dict):
            return source.get(field) or ""
    return ""


def _dv_condition(dv: dict, kind: str) -> dict | None:
    for c in (dv.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == kind:
            return c
    return None


def data_volume_error(i: Inputs) -> str | None:
    """HasDataVolumeErrors: the first DataVolume Failed, or whose importer stopped on an error."""
    for name, dv in _data_volumes(i):
        if (dv.get("status") or {}).get("phase") == "Failed":
            return f"DataVolume {name} is in Failed phase"
        running = _dv_condition(dv, "Running")
        if running is not None and running.get("status") == "False" and running.get("reason") in ("Error", "ImagePullFailed"):
            return f"DataVolume {name} importer has stopped running due to an error: {running.get('message', '')}"
    return None


def data_volume_provisioning(i: Inputs) -> bool:
    """HasDataVolumeProvisioning: a DataVolume neither Succeeded nor PendingPopulation, unless it
    waits for its first consumer unbound."""
    for _, dv in _data_volumes(i):
        phase = (dv.get("status") or {}).get("phase")
        if phase in ("Succeeded", "PendingPopulation"):
            continue
        bound = _dv_condition(dv, "Bound")
        if (bound is not None and bound.get("status") == "True") or phase != "WaitForFirstConsumer":
            return True
    return False


def unbound_claim(i: Inputs) -> bool:
    """HasUnboundPVC: a claim the template names exists and is not Bound."""
    _, ns = name_of(i.vm)
    for volume in _volumes(i.vm):
        name = claim_name(volume)
        if not name:
            continue
        pvc = _read(i.store, "PersistentVolumeClaim", name, ns)
        if pvc is not None and (pvc.get("status") or {}).get("phase") != "Bound":
            return True
    return False


def set_to_start(vm: dict, vmi: dict | None) -> bool:
    """isSetToStart: whether the run strategy wants the VM running."""
    strategy = run_strategy(vm)
    if strategy == "Always":
        return True
    if strategy == "Manual":
        return not requests.stop_requested(vm, vmi) if vmi is not None else requests.start_requested(vm)
    if strategy == "RerunOnFailure":
        return vmi is None or _phase(vmi) != "Succeeded"
    if strategy == "Once":
        return vmi is None
    return False            # Halted, WaitAsReceiver ("shouldn't ever be here")


# --- the predicates, in vm.go's order of definition ------------------------------------------

def crash_loop_back_off(i: Inputs) -> bool:
    """isVirtualMachineStatusCrashLoopBackOff: no live VMI, none expected, and start failures
    recorded under a run strategy that restarts."""
    if (i.vmi is not None and not is_final(i.vmi)) or i.start_expected:
        return False
    failure = (i.vm.get("status") or {}).get("startFailure")
    count = failure.get("consecutiveFailCount") if isinstance(failure, dict) else None
    return isinstance(count, int) and count > 0 and run_strategy(i.vm) in RESTARTING_STRATEGIES


def stopped(i: Inputs) -> bool:
    return is_final(i.vmi) if i.vmi is not None else not i.start_expected


def provisioning(i: Inputs) -> bool:
    return data_volume_provisioning(i)


def waiting_for_volume_binding(i: Inputs) -> bool:
    return set_to_start(i.vm, i.vmi) and unbound_claim(i)


def starting(i: Inputs) -> bool:
    if i.vmi is None:
        return i.start_expected
    return is_unprocessed(i.vmi) or _phase(i.vmi) in ("Scheduling", "Scheduled")


def running(i: Inputs) -> bool:
    return i.vmi is not None and _phase(i.vmi) == "Running" and not _has(i.vmi, "Paused", "True")


def paused(i: Inputs) -> bool:
    return i.vmi is not None and _phase(i.vmi) == "Running" and _has(i.vmi, "Paused", "True")


def stopping(i: Inputs) -> bool:
    return i.vmi is not None and not is_final(i.vmi) and (marked_for_deletion(i.vmi) or i.stop_expected)


def terminating(i: Inputs) -> bool:
    return marked_for_deletion(i.vm)


def migrating(i: Inputs) -> bool:
    return i.vmi is not None and is_migrating(i.vmi)


def unschedulable(i: Inputs) -> bool:
    """The VMI's PodScheduled condition False with reason Unschedulable (mirrored from its pod)."""
    return _has(i.vmi, "PodScheduled", "False", "Unschedulable")


def err_image_pull(i: Inputs) -> bool:
    return _has(i.vmi, "Synchronized", "False", ERR_IMAGE_PULL)


def image_pull_back_off(i: Inputs) -> bool:
    return _has(i.vmi, "Synchronized", "False", IMAGE_PULL_BACK_OFF)


def pvc_not_found(i: Inputs) -> bool:
    return _has(i.vmi, "Synchronized", "False", FAILED_PVC_NOT_FOUND)


def data_volume_failed(i: Inputs) -> bool:
    return data_volume_error(i) is not None


def waiting_for_receiver(i: Inputs) -> bool:
    return (i.vmi is None or _phase(i.vmi) == "WaitingForSync") and run_strategy(i.vm) == "WaitAsReceiver"


# setPrintableStatus's list: first match wins.
PRECEDENCE: tuple[tuple[str, Callable[[Inputs], bool]], ...] = (
    ("Terminating", terminating),
    ("Stopping", stopping),
    ("Migrating", migrating),
    ("Paused", paused),
    ("Running", running),
    ("ErrorPvcNotFound", pvc_not_found),
    ("DataVolumeError", data_volume_failed),
    ("ErrorUnschedulable", unschedulable),
    ("Provisioning", provisioning),
    ("WaitingForVolumeBinding", waiting_for_volume_binding),
    ("ErrImagePull", err_image_pull),
    ("ImagePullBackOff", image_pull_back_off),
    ("Starting", starting),
    ("CrashLoopBackOff", crash_loop_back_off),
    ("Stopped", stopped),
    ("WaitingForReceiver", waiting_for_receiver),
)
