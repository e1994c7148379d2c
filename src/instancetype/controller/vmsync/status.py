"""KubeVirt's `updateStatus`: the VM's status from its VMI (Ready and the VMI's conditions,
`Failure` from the reconcile, the printable status: `printable.py`), written through the status
subresource only when it changed."""
from __future__ import annotations

from typing import Any

from instancetype.store.base import Store, now

from .. import state_requests as requests
from . import generation, printable, volumes
from .state import VMSync, condition, run_strategy

# Conditions the VM sets itself: never copied from the VMI, kept until their step removes them.
VM_OWN = ("RestartRequired",)
NOT_COPIED = ("Ready", "Failure", *VM_OWN)


def _base_status(s: VMSync) -> dict:
    status = dict(s.vm.get("status") or {})
    if s.vmi is not None:
        # syncGenerationInfo: only while a VMI exists; otherwise both are left as they are.
        observed = generation.observed(s)
        if observed is not None:
            status["observedGeneration"] = observed
            status["desiredGeneration"] = (s.vm.get("metadata") or {}).get("generation")
    if status.get("runStrategy") or s.vmi is not None:
        # "sync for the first time only when the VMI gets created"
        status["runStrategy"] = run_strategy(s.vm)
    return status


def write(s: VMSync) -> dict:
    """The VM's status from `s.vmi` (Running on the simulated node, or none), plus a `Failure`
    condition from `s.failure` when the reconcile could not start it."""
    vmi = s.vmi
    status = _base_status(s)
    requests.trim_first(status, vmi)
    volumes.trim_done(s.vm, status)
    stamp = now()
    # isVirtualMachineWaitingReceiver: no VMI yet, or one waiting for its migration.
    receiving = run_strategy(s.vm) == "WaitAsReceiver" and (
        vmi is None or (vmi.get("status") or {}).get("phase") == "WaitingForSync")
    if vmi is not None and (vmi.get("status") or {}).get("phase") == "Running":
        # syncConditions: the VMI's Ready condition, then its others (a paused guest's `Paused`).
        vmi_conditions = [c for c in (vmi.get("status") or {}).get("conditions") or () if isinstance(c, dict)]
        ready = next((c for c in vmi_conditions if c.get("type") == "Ready"), None)
        status["created"] = True
        if ready is not None and ready.get("status") == "True":
            status["ready"] = True
        else:
            status.pop("ready", None)
        conditions = [_copied(ready, stamp) if ready is not None else
                      condition("Ready", "False", "VMIConditionMissing", "VMI is missing the Ready condition", stamp)]
        conditions += [_copied(c, stamp) for c in vmi_conditions if c.get("type") not in NOT_COPIED]
    elif vmi is not None and receiving:
        status["created"] = True
        status.pop("ready", None)
        conditions = [condition("Ready", "False", "VMIConditionMissing", "VMI is missing the Ready condition", stamp)]
    elif vmi is not None:
        # A VMI that exists but does not run (virt-launcher refused its domain, or no node fits
        # its pod and it waits with the pod's PodScheduled condition: controller/node.py): the
        # VMI's conditions copied (syncConditions); printable.py reads them (ErrorUnschedulable).
        status["created"] = True
        status.pop("ready", None)
        conditions = [condition(c["type"], c["status"], c.get("reason", ""), c.get("message", ""), stamp)
                      for c in (vmi.get("status") or {}).get("conditions") or ()]
    else:
        status.pop("created", None)
        status.pop("ready", None)
        conditions = [condition("Ready", "False", "VMINotExists", "VMI does not exist", stamp)]
    if s.failure is not None:
        conditions.append(condition("Failure", "True", s.failure[0], s.failure[1], stamp))
    # The VM's own conditions, set and removed by their steps (restart_required, live_update).
    conditions += [c for c in (s.vm.get("status") or {}).get("conditions") or ()
                   if isinstance(c, dict) and c.get("type") in VM_OWN]
    status["conditions"] = conditions
    status["printableStatus"] = printable.printable_status({**s.vm, "status": status}, vmi, s.store)
    return _put(s.store, s.stored, status)


def _copied(c: dict, stamp: str) -> dict:
    out = condition(c.get("type", ""), c.get("status", ""), c.get("reason", ""), c.get("message", ""),
                    c.get("lastTransitionTime") or stamp)
    out["lastProbeTime"] = c.get("lastProbeTime")
    return out


def _same_ignoring_times(a: Any, b: Any) -> bool:
    def strip(s: dict) -> dict:
        s = dict(s)
        s["conditions"] = [{k: v for k, v in c.items() if k != "lastTransitionTime"} for c in s.get("conditions") or ()]
        return s

    return strip(a or {}) == strip(b or {})


def _put(store: Store, stored: dict, status: dict) -> dict:
    """Write `status` through the status subresource on `stored`'s resourceVersion (nothing when
    it is what is stored, apart from transition times)."""
    if _same_ignoring_times(stored.get("status"), status):
        return stored
    # A condition keeps its lastTransitionTime while its status does not change (Kubernetes' rule).
    before = {c.get("type"): c for c in (stored.get("status") or {}).get("conditions") or ()}
    for c in status.get("conditions") or ():
        old = before.get(c["type"])
        if old is not None and old.get("status") == c["status"] and old.get("lastTransitionTime"):
            c["lastTransitionTime"] = old["lastTransitionTime"]
    # The status subresource takes only the status from the body (the store keeps the rest as
    # stored), so the body is `stored` with the new status, not a copy of the whole VM.
    return store.update({**stored, "status": status}, subresource="status")
