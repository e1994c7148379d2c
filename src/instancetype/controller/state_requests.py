"""KubeVirt's VirtualMachineStateChangeRequests: how virt-api asks the VM controller to start or
stop a VM whose run strategy it does not change (pkg/virt-api/rest/lifecycle.go), and how the
controller reads and retires them (pkg/virt-controller/watch/vm/vm.go).

virt-api records a start (its `data` may hold `paused: "true"`, virtctl's `start --paused`) or
a stop of one VMI (by its UID) on `status.stateChangeRequests`; the controller acts on the
first request only, and drops it once done: a stop once its VMI is gone, a start once a VMI
runs that is not going away. Pure functions on VM dicts; the writes are the controller's.
"""
from __future__ import annotations

from instancetype.store.base import APIError

from . import node

START, STOP = "Start", "Stop"                          # v1.StartRequest, v1.StopRequest
PAUSED_KEY, PAUSED_TRUE = "paused", "true"             # v1.StartRequestDataPausedKey / ...True
UNDERWAY = "unable to complete request: stop/start already underway"   # getChangeRequestJson


class RequestUnderway(APIError):
    """errors.NewInternalError(getChangeRequestJson's error): a 500, the cause in its details."""

    def __init__(self):
        super().__init__(f"Internal error occurred: {UNDERWAY}")

    def status(self) -> dict:
        return {**super().status(), "details": {"causes": [{"message": UNDERWAY}]}}


def start_request(paused: bool = False) -> dict:
    request: dict = {"action": START}
    if paused:
        request["data"] = {PAUSED_KEY: PAUSED_TRUE}
    return request


def stop_request(vmi: dict) -> dict:
    return {"action": STOP, "uid": (vmi.get("metadata") or {}).get("uid")}


def with_requests(status: dict, changes: list[dict]) -> dict:
    """getChangeRequestJson: the VM status with `changes` recorded when none are pending; a
    single stop replaces pending requests; anything else is refused (RequestUnderway). A
    recorded start failure is cleared."""
    status = dict(status)
    if (status.get("stateChangeRequests") or []) and not (len(changes) == 1 and changes[0].get("action") == STOP):
        raise RequestUnderway()
    status["stateChangeRequests"] = changes
    status.pop("startFailure", None)
    return status


def _first(vm: dict) -> dict:
    requests = (vm.get("status") or {}).get("stateChangeRequests") or []
    first = requests[0] if requests else None
    return first if isinstance(first, dict) else {}


def stop_requested(vm: dict, vmi: dict) -> bool:
    """hasStopRequestForVMI: the first request stops this very VMI (its UID)."""
    uid = (vmi.get("metadata") or {}).get("uid")
    first = _first(vm)
    return first.get("action") == STOP and bool(uid) and first.get("uid") == uid


def start_requested(vm: dict) -> bool:
    """hasStartRequest: the first request is a start."""
    return _first(vm).get("action") == START


def start_paused(vm: dict) -> bool:
    """hasStartPausedRequest: the first request is a start with `paused: "true"`."""
    first = _first(vm)
    data = first.get("data")
    return first.get("action") == START and isinstance(data, dict) and data.get(PAUSED_KEY) == PAUSED_TRUE


def trim_first(status: dict, vmi: dict | None) -> None:
    """isTrimFirstChangeRequestNeeded + popStateChangeRequest, on `status` in place: a stop
    request is done once its VMI is gone (or another VMI runs), a start request once a VMI runs
    that is not going away."""
    requests = status.get("stateChangeRequests") or []
    if not requests or not isinstance(requests[0], dict):
        return
    first = requests[0]
    if first.get("action") == STOP:
        uid = ((vmi or {}).get("metadata") or {}).get("uid")
        done = vmi is None or not first.get("uid") or first.get("uid") != uid
    elif first.get("action") == START:
        done = vmi is not None and not node.terminating(vmi)
    else:
        done = False
    if done:
        if requests[1:]:
            status["stateChangeRequests"] = requests[1:]
        else:
            status.pop("stateChangeRequests", None)
