"""virtctl start / stop / restart: virt-api's part (pkg/virt-api/rest/lifecycle.go), then the
controller's reconcile (`inline`: here, in the caller's transaction; else left to the controller
watching the store, as virt-api leaves it to virt-controller). `reconcile` is the controller's,
given by `controller.vm`, whose start/stop/restart are these with it."""
from __future__ import annotations

from collections.abc import Callable

from instancetype.store.base import BadRequest, Store
from instancetype.store.kubevirt import Settings

from . import state_requests as requests
from .vmsync.run_strategy import set_spec_running, start_running
from .vmsync.state import conflict, get_vmi, run_strategy

_DEFAULTS = Settings()      # no KubeVirt object read: all defaults, the opt-in read where needed
Reconcile = Callable[[Store, dict, Settings], dict]


def _set_running(store: Store, vm: dict, running: bool, settings: Settings, inline: bool,
                 reconcile: Reconcile) -> dict:
    """The run strategy change (a start pins the matchers in that same write), then the
    controller's reconcile."""
    stored = start_running(store, vm, vm, settings) if running else set_spec_running(store, vm, vm, False)
    return reconcile(store, stored, settings) if inline else stored


def _request(store: Store, vm: dict, changes: list[dict], settings: Settings, inline: bool,
             reconcile: Reconcile) -> dict:
    """virt-api's PatchStatus of `changes` (state_requests.with_requests), on the resourceVersion
    read as the JSON patch's `test` of the requests guards it; then the controller's reconcile."""
    status = requests.with_requests(vm.get("status") or {}, changes)
    stored = store.update({**vm, "status": status}, subresource="status")
    return reconcile(store, stored, settings) if inline else stored


def check_not_running(store: Store, vm: dict) -> None:
    """StartVMRequestHandler's first check (before it reads the options body): a VMI that runs.
    The simulated node's VMIs run until deleted (never final)."""
    if get_vmi(store, vm) is not None:
        raise conflict(vm, "VM is already running")


def start(store: Store, vm: dict, settings: Settings = _DEFAULTS, *, paused: bool = False, inline: bool = True,
          reconcile: Reconcile) -> dict:
    """virtctl start (StartVMRequestHandler). Halted: the run strategy becomes Always, or for a
    paused start a start request the controller turns into that change; Manual and
    RerunOnFailure: a start request (`paused`: the VMI starts with `startStrategy: Paused`)."""
    strategy = run_strategy(vm)
    check_not_running(store, vm)
    if strategy in ("Always", "Once"):
        raise conflict(vm, f"{strategy} does not support manual start requests")
    if strategy == "Halted" and not paused:
        return _set_running(store, vm, True, settings, inline, reconcile)
    return _request(store, vm, [requests.start_request(paused)], settings, inline, reconcile)


def check_restart_grace(grace: int | None) -> None:
    """RestartVMRequestHandler's check of `gracePeriodSeconds`, before the VM is read."""
    if grace is not None and grace > 0:
        raise BadRequest("For force restart, only gracePeriod=0 is supported for now")
    if grace is not None and grace < 0:
        raise BadRequest("gracePeriod has to be greater or equal to 0")


def _shorten_grace(store: Store, vmi: dict, grace: int) -> int | None:
    """StopVMRequestHandler with a grace period: the VMI's `terminationGracePeriodSeconds`
    replaced (tested against the value read); returns the old value (None: unset)."""
    spec = dict(vmi.get("spec") or {})
    old = spec.get("terminationGracePeriodSeconds")
    spec["terminationGracePeriodSeconds"] = grace
    store.update({**vmi, "spec": spec})
    return old


def stop(store: Store, vm: dict, settings: Settings = _DEFAULTS, *, grace_period: int | None = None,
         inline: bool = True, reconcile: Reconcile) -> dict:
    """virtctl stop (StopVMRequestHandler); `grace_period` is StopOptions.gracePeriod (virtctl's
    `--force --grace-period N`): it shortens the running VMI's grace period first, and is the only
    way to stop a Halted VM that still has a VMI. Always and Once: the run strategy becomes
    Halted; Halted, Manual and RerunOnFailure: a stop request for the running VMI."""
    strategy = run_strategy(vm)
    vmi = get_vmi(store, vm)
    old_grace = None
    if vmi is not None and grace_period is not None:
        old_grace = _shorten_grace(store, vmi, grace_period)
    if strategy in ("Halted", "Manual", "RerunOnFailure") and vmi is None:
        raise conflict(vm, "VM is not running")
    if strategy == "Halted" and (grace_period is None or (old_grace is not None and grace_period >= old_grace)):
        raise conflict(vm, "Halted only supports manual stop requests with a shorter graceperiod")
    if strategy in ("Always", "Once"):
        return _set_running(store, vm, False, settings, inline, reconcile)
    if vmi is None:
        return vm       # WaitAsReceiver: virt-api's switch has no case for it, nothing is asked
    return _request(store, vm, [requests.stop_request(vmi)], settings, inline, reconcile)


def restart(store: Store, vm: dict, settings: Settings = _DEFAULTS, *, grace_period: int | None = None,
            inline: bool = True, reconcile: Reconcile) -> dict:
    """virtctl restart (RestartVMRequestHandler): a stop request for the running VMI and a start
    request behind it. `grace_period` (RestartOptions.gracePeriodSeconds) may only be 0, which
    deletes the VMI's pod at once: the simulated node has none to delete."""
    check_restart_grace(grace_period)
    strategy = run_strategy(vm)
    if strategy in ("Halted", "Once"):
        raise conflict(vm, f"RunStategy {strategy} does not support manual restart requests")  # sic, KubeVirt
    vmi = get_vmi(store, vm)
    if vmi is None:
        raise conflict(vm, "VM is not running: Halted")
    return _request(store, vm, [requests.stop_request(vmi), requests.start_request()], settings, inline,
                    reconcile)
