"""The VM controller, written against the store: run strategies, start, stop, restart.

`reconcile(store, vm, config)` is the one copy of KubeVirt's VM sync (pkg/virt-controller/watch/vm),
level-triggered and idempotent: running it twice changes nothing. It has two drivers:

* the embedded store (`cluster.Cluster`): every write that can change what a VM should be runs
  `reconcile` on that VM inside the same transaction, so a stored VM and the work it triggers
  (its revisions, its VMI) land together or not at all;
* a Kubernetes API server (`controller.kube`): informers feed a work queue of VM keys and
  workers run `reconcile` against the cluster's store, retrying a Conflict from a fresh read.
"""
from __future__ import annotations

from typing import Any

from instancetype.errors import Error, VMIError
from instancetype.jsonutil import clone
from instancetype.store.base import AlreadyExists, BadRequest, Conflict, NotFound, Store, now
from instancetype.store.source import StoreObjects

from . import node, revisions
from . import state_requests as requests

RUN_STRATEGIES = ("Always", "Halted", "Manual", "RerunOnFailure", "Once", "WaitAsReceiver")
VM_RESOURCE = "virtualmachine.kubevirt.io"  # KubeVirt's subresource errors name the singular resource


def run_strategy(vm: dict) -> str:
    """`spec.runStrategy`, else the legacy `spec.running` (true: Always, false or absent: Halted)."""
    spec = vm.get("spec") or {}
    if spec.get("runStrategy"):
        return spec["runStrategy"]
    return "Always" if spec.get("running") is True else "Halted"


def _name(vm: dict) -> tuple[str, str]:
    meta = vm.get("metadata") or {}
    return meta.get("name") or "", meta.get("namespace") or "default"


def _vmi(store: Store, vm: dict) -> dict | None:
    name, ns = _name(vm)
    try:
        return store.get("VirtualMachineInstance", name, ns)
    except NotFound:
        return None


def _reference_policy(config: dict | None) -> str:
    return ((config or {}).get("instancetype") or {}).get("referencePolicy") or "reference"


def failed(vm: dict) -> bool:
    return any(c.get("type") == "Failure" and c.get("status") == "True"
               for c in (vm.get("status") or {}).get("conditions") or ())


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


def reconcile(store: Store, vm: dict, config: dict | None = None) -> dict:
    """Bring the VMI and status of `vm` (as stored) in line with its spec; returns the stored VM.

    Level-triggered and idempotent: it looks only at what is stored, so the embedded store runs it
    inline after a write and the cluster's controller (`controller.kube`) from a work queue, and
    running it again changes nothing. Every write is conditional on the resourceVersion read
    (`vm` as given is what the writes are checked against): a VM changed meanwhile is a
    `Conflict`, to be retried from a fresh read, never overwritten.
    """
    return _reconcile(store, clone(vm), config, vm)


def _reconcile(store: Store, vm: dict, config: dict | None, stored: dict) -> dict:
    """`vm` is ours to change; `stored` is the VM as last read or written (resourceVersion, status)."""
    revisions.sync_status_refs(vm, store)
    policy = _reference_policy(config)
    if policy in ("expand", "expandAll") and _has_matchers(vm):
        if policy == "expandAll" or not _has_pinned_refs(vm):
            return _expand_in_place(store, vm, config, stored)
    vmi = _vmi(store, vm)
    if vmi is not None and _foreign(vm, vmi):
        # An earlier VM of the same name still has its VMI (being collected): retried later.
        raise _conflict(vm, "a VirtualMachineInstance of another owner still exists")
    if vmi is not None and node.terminating(vmi):
        # A VMI on its way out (its deletion waits on finalizers): let it go; a new one, if the
        # run strategy wants one, is started once it is gone.
        release_vmi(store, vmi)
        return _write_status(store, vm, None, stored)
    if vmi is not None and requests.stop_requested(vm, vmi):
        # hasStopRequestForVMI: the VMI goes (stopVMI); the request is then done. Always starts
        # the next VMI at once, and a start request behind it (a restart) is carried out next.
        _delete_vmi(store, vm)
        vmi = None
        requests.trim_first(vm.setdefault("status", {}), None)
    if vmi is None and run_strategy(vm) == "Halted" and requests.start_requested(vm):
        # A paused start of a Halted VM (syncRunStrategy): the run strategy becomes Always (or the
        # legacy `running` true), and the VMI is started under it, paused.
        return _reconcile_stored(store, _set_spec_running(store, vm, stored, True), config)
    want = _wants_vmi(vm, vmi)
    if want and vmi is None:
        return _start_vmi(store, vm, config, stored)
    if want is False and vmi is not None:
        _delete_vmi(store, vm)
        vmi = None
    return _write_status(store, vm, vmi, stored)


def _reconcile_stored(store: Store, stored: dict, config: dict | None) -> dict:
    return _reconcile(store, clone(stored), config, stored)


def _foreign(vm: dict, vmi: dict) -> bool:
    """The VMI's controller is another VM (an earlier one of the same name)."""
    uid = (vm.get("metadata") or {}).get("uid")
    owners = [r.get("uid") for r in (vmi.get("metadata") or {}).get("ownerReferences") or ()
              if isinstance(r, dict) and r.get("controller") and r.get("uid")]
    return bool(uid and owners and uid not in owners)


def _has_matchers(vm: dict) -> bool:
    spec = vm.get("spec") or {}
    return bool(spec.get("instancetype") or spec.get("preference"))


def _has_pinned_refs(vm: dict) -> bool:
    status = vm.get("status") or {}
    return any((status.get(k) or {}).get("controllerRevisionRef") for k in ("instancetypeRef", "preferenceRef"))


def _expand_in_place(store: Store, vm: dict, config: dict | None, stored: dict) -> dict:
    """referencePolicy expand/expandAll: the VM itself is rewritten expanded; no revisions kept."""
    import instancetype

    old_refs = [((vm.get("status") or {}).get(k) or {}).get("controllerRevisionRef", {}).get("name")
                for k in ("instancetypeRef", "preferenceRef")]
    try:
        expanded = instancetype.expand(vm, objects=StoreObjects(store), config=config)
    except Error as e:
        return _write_failure(store, vm, "UnsupportedSyncError",
                              f"unsupported error: error encountered while expanding into VirtualMachine: {e}", stored)
    expanded.pop("status", None)
    stored = store.update({**expanded, "status": vm.get("status") or {}})
    without_refs = clone(stored)
    for k in ("instancetypeRef", "preferenceRef"):
        (without_refs.get("status") or {}).pop(k, None)
    _, ns = _name(vm)
    revisions.release_pins(store, ns, old_refs)
    return _reconcile(store, without_refs, {**(config or {}), "instancetype": {"referencePolicy": "reference"}},
                      stored)


def _start_vmi(store: Store, vm: dict, config: dict | None, stored: dict) -> dict:
    import instancetype

    pinned: dict[str, dict] = {}
    replaced: list[str] = []
    try:
        if _reference_policy(config) == "reference" and revisions.capture(store, vm, pinned=pinned,
                                                                          replaced=replaced):
            status = vm.get("status") or {}
            stored = _patch_revision_names(store, vm, stored)
            vm = clone(stored)
            vm["status"] = status
    except revisions.SyncError as e:
        return _write_failure(store, vm, e.reason, str(e), stored)
    if replaced:
        revisions.drop_replaced(store, vm, replaced)
    try:
        # An API server runs the VMI mutating webhook on the create: the VMI is sent as v1.9's
        # controller sends it (the webhook's finalizer, labels and annotations then come once).
        vmi = instancetype.build_vmi(vm, objects=_WithPinned(store, pinned), config=config,
                                     mutate=not getattr(store, "calls_admission_webhooks", False))
        if requests.start_paused(vm):
            vmi.setdefault("spec", {})["startStrategy"] = "Paused"     # setupVMIFromVM
    except VMIError as e:
        reason = {"autoattach": "FailedFindPreference", "apply": "FailedFindInstancetype"}.get(e.stage, "FailedCreate")
        return _write_failure(store, vm, reason, str(e), stored)
    except Error as e:
        return _write_failure(store, vm, "FailedCreate", str(e), stored)
    return _write_status(store, vm, _create_vmi(store, vm, vmi), stored)


class _WithPinned(StoreObjects):
    """The store's objects, and the revisions this start just created or read: the VMI is built
    from them even where the store's reads lag behind its writes (a cluster's informer cache)."""

    __slots__ = ("pinned",)

    def __init__(self, store: Store, pinned: dict[str, dict]):
        super().__init__(store)
        self.pinned = pinned

    def lookup(self, kind: str, name: str, namespace: str):
        if kind == "ControllerRevision" and name in self.pinned:
            cr = self.pinned[name]
            if ((cr.get("metadata") or {}).get("namespace") or "default") == (namespace or "default"):
                return cr
        return super().lookup(kind, name, namespace)


def _patch_revision_names(store: Store, vm: dict, stored: dict) -> dict:
    """The matchers' new `revisionName`s, as KubeVirt's `storeControllerRevisions` patches them:
    only those fields, on the resourceVersion read (a VM changed meanwhile is a Conflict)."""
    name, ns = _name(vm)
    spec = vm.get("spec") or {}
    patch: dict = {"metadata": {"resourceVersion": (stored.get("metadata") or {}).get("resourceVersion")}}
    for side, *_ in revisions.SIDES:
        m = spec.get(side)
        was = ((stored.get("spec") or {}).get(side) or {})
        if isinstance(m, dict) and m.get("revisionName") and m.get("revisionName") != was.get("revisionName"):
            patch.setdefault("spec", {})[side] = {"revisionName": m["revisionName"]}
    return store.patch("VirtualMachine", name, patch, ns)


def _create_vmi(store: Store, vm: dict, vmi: dict) -> dict:
    """Create the VMI, scheduled on the simulated node. A VMI of that name may exist though the
    read said none (a cache behind the API server): ours is used as it is; another VM's (an
    earlier VM of the same name, not yet collected) is a Conflict to retry later."""
    name, ns = _name(vm)
    scheduled = node.schedule(vmi, now())
    try:
        created = store.create(scheduled)
    except AlreadyExists:
        created = store.get("VirtualMachineInstance", name, ns)
        if _foreign(vm, created) or node.terminating(created):
            raise _conflict(vm, "the previous VirtualMachineInstance still exists") from None
    if scheduled.get("status") and not created.get("status"):
        # A VMI kind served with a status subresource drops the status on create: report it.
        created["status"] = scheduled["status"]
        created = store.update(created, subresource="status")
    return created


def _delete_vmi(store: Store, vm: dict) -> None:
    name, ns = _name(vm)
    try:
        deleted = store.delete("VirtualMachineInstance", name, ns)
    except NotFound:
        return
    if node.terminating(deleted):
        release_vmi(store, deleted)


def release_vmi(store: Store, vmi: dict) -> None:
    """The simulated node's part in a VMI's deletion: no guest to stop, so KubeVirt's finalizers
    go at once (on the resourceVersion read: a Conflict is retried)."""
    updated = node.released(vmi)
    if updated is None:
        return
    try:
        store.update(updated)
    except NotFound:
        pass


def _base_status(vm: dict) -> dict:
    status = dict(vm.get("status") or {})
    gen = (vm.get("metadata") or {}).get("generation")
    if gen is not None:
        status["observedGeneration"] = gen
        status["desiredGeneration"] = gen
    status["runStrategy"] = run_strategy(vm)
    return status


def _condition(kind: str, status: str, reason: str, message: str, stamp: str) -> dict:
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastProbeTime": None,
            "lastTransitionTime": stamp}


def _write_status(store: Store, vm: dict, vmi: dict | None, stored: dict,
                  failure: tuple[str, str] | None = None) -> dict:
    """The VM's status from its VMI (Running on the simulated node, or none), plus a `Failure`
    condition `(reason, message)` when the last reconcile could not start it."""
    status = _base_status(vm)
    requests.trim_first(status, vmi)
    stamp = now()
    if vmi is not None and (vmi.get("status") or {}).get("phase") == "Running":
        # syncConditions: the VMI's Ready condition, then its others (a paused guest's `Paused`);
        # printable status Paused while that condition is True (isVirtualMachineStatusPaused).
        vmi_conditions = [c for c in (vmi.get("status") or {}).get("conditions") or () if isinstance(c, dict)]
        ready = next((c for c in vmi_conditions if c.get("type") == "Ready"), None)
        paused = any(c.get("type") == "Paused" and c.get("status") == "True" for c in vmi_conditions)
        status.update(created=True, printableStatus="Paused" if paused else "Running")
        if ready is not None and ready.get("status") == "True":
            status["ready"] = True
        else:
            status.pop("ready", None)
        conditions = [_copied(ready, stamp) if ready is not None else
                      _condition("Ready", "False", "VMIConditionMissing", "VMI is missing the Ready condition", stamp)]
        conditions += [_copied(c, stamp) for c in vmi_conditions if c.get("type") not in ("Ready", "Failure")]
    elif vmi is not None:
        # A VMI that exists but does not run (virt-launcher refused its domain: controller/node.py):
        # KubeVirt's printable status Starting, and the VMI's conditions copied (syncConditions).
        status.update(created=True, printableStatus="Starting")
        status.pop("ready", None)
        conditions = [_condition(c["type"], c["status"], c.get("reason", ""), c.get("message", ""), stamp)
                      for c in (vmi.get("status") or {}).get("conditions") or ()]
    else:
        status.pop("created", None)
        status.pop("ready", None)
        status["printableStatus"] = "Stopped"
        conditions = [_condition("Ready", "False", "VMINotExists", "VMI does not exist", stamp)]
    if failure is not None:
        conditions.append(_condition("Failure", "True", failure[0], failure[1], stamp))
    status["conditions"] = conditions
    return _put_status(store, stored, status)


def _copied(c: dict, stamp: str) -> dict:
    out = _condition(c.get("type", ""), c.get("status", ""), c.get("reason", ""), c.get("message", ""),
                     c.get("lastTransitionTime") or stamp)
    out["lastProbeTime"] = c.get("lastProbeTime")
    return out


def _write_failure(store: Store, vm: dict, reason: str, message: str, stored: dict) -> dict:
    return _write_status(store, vm, None, stored, failure=(reason, message))


def _same_ignoring_times(a: Any, b: Any) -> bool:
    def strip(s: dict) -> dict:
        s = dict(s)
        s["conditions"] = [{k: v for k, v in c.items() if k != "lastTransitionTime"} for c in s.get("conditions") or ()]
        return s

    return strip(a or {}) == strip(b or {})


def _put_status(store: Store, stored: dict, status: dict) -> dict:
    """Write `status` through the status subresource on `stored`'s resourceVersion (nothing when
    it is what is stored, apart from transition times)."""
    if _same_ignoring_times(stored.get("status"), status):
        return stored
    current = clone(stored)
    # A condition keeps its lastTransitionTime while its status does not change (Kubernetes' rule).
    before = {c.get("type"): c for c in (current.get("status") or {}).get("conditions") or ()}
    for c in status.get("conditions") or ():
        old = before.get(c["type"])
        if old is not None and old.get("status") == c["status"] and old.get("lastTransitionTime"):
            c["lastTransitionTime"] = old["lastTransitionTime"]
    current["status"] = status
    return store.update(current, subresource="status")


# --- virtctl start / stop / restart -----------------------------------------------------------------

def _conflict(vm: dict, detail: str) -> Conflict:
    name, _ = _name(vm)
    return Conflict(f'Operation cannot be fulfilled on {VM_RESOURCE} "{name}": {detail}')


def _set_spec_running(store: Store, vm: dict, stored: dict, running: bool) -> dict:
    """KubeVirt's getRunningPatch (and the controller's Halted-to-Always update): the legacy
    `spec.running` where the VM uses it, else `spec.runStrategy` Always / Halted, written on the
    resourceVersion read (`stored`)."""
    spec = dict(vm.get("spec") or {})
    if "running" in spec and "runStrategy" not in spec:
        spec["running"] = running
    else:
        spec["runStrategy"] = "Always" if running else "Halted"
    return store.update({**stored, "spec": spec})


def _set_running(store: Store, vm: dict, running: bool, config: dict | None, inline: bool = True) -> dict:
    """The run strategy change, then the controller's reconcile (`inline=False`: left to the
    controller that watches the store, as virt-api leaves it to virt-controller)."""
    stored = _set_spec_running(store, vm, vm, running)
    return reconcile(store, stored, config) if inline else stored


def _request(store: Store, vm: dict, changes: list[dict], config: dict | None, inline: bool) -> dict:
    """virt-api's PatchStatus of `changes` (state_requests.with_requests), on the resourceVersion
    read as the JSON patch's `test` of the requests guards it; then the controller's reconcile
    (`inline`: here; else left to the controller watching the store)."""
    status = requests.with_requests(vm.get("status") or {}, changes)
    stored = store.update({**vm, "status": status}, subresource="status")
    return reconcile(store, stored, config) if inline else stored


def check_not_running(store: Store, vm: dict) -> None:
    """StartVMRequestHandler's first check (before it reads the options body): a VMI that runs.
    The simulated node's VMIs run until deleted (never final)."""
    if _vmi(store, vm) is not None:
        raise _conflict(vm, "VM is already running")


def start(store: Store, vm: dict, config: dict | None = None, *, paused: bool = False, inline: bool = True) -> dict:
    """virtctl start (StartVMRequestHandler), then the controller's reconcile (`inline`: here;
    else left to the controller watching the store). Halted: the run strategy becomes Always, or
    for a paused start a start request the controller turns into that change; Manual and
    RerunOnFailure: a start request (`paused`: the VMI starts with `startStrategy: Paused`)."""
    strategy = run_strategy(vm)
    check_not_running(store, vm)
    if strategy in ("Always", "Once"):
        raise _conflict(vm, f"{strategy} does not support manual start requests")
    if strategy == "Halted" and not paused:
        return _set_running(store, vm, True, config, inline)
    return _request(store, vm, [requests.start_request(paused)], config, inline)


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


def stop(store: Store, vm: dict, config: dict | None = None, *, grace_period: int | None = None,
         inline: bool = True) -> dict:
    """virtctl stop (StopVMRequestHandler); `grace_period` is StopOptions.gracePeriod (virtctl's
    `--force --grace-period N`): it shortens the running VMI's grace period first, and is the only
    way to stop a Halted VM that still has a VMI. Always and Once: the run strategy becomes
    Halted; Halted, Manual and RerunOnFailure: a stop request for the running VMI."""
    strategy = run_strategy(vm)
    vmi = _vmi(store, vm)
    old_grace = None
    if vmi is not None and grace_period is not None:
        old_grace = _shorten_grace(store, vmi, grace_period)
    if strategy in ("Halted", "Manual", "RerunOnFailure") and vmi is None:
        raise _conflict(vm, "VM is not running")
    if strategy == "Halted" and (grace_period is None or (old_grace is not None and grace_period >= old_grace)):
        raise _conflict(vm, "Halted only supports manual stop requests with a shorter graceperiod")
    if strategy in ("Always", "Once"):
        return _set_running(store, vm, False, config, inline)
    if vmi is None:
        return vm       # WaitAsReceiver: virt-api's switch has no case for it, nothing is asked
    return _request(store, vm, [requests.stop_request(vmi)], config, inline)


def restart(store: Store, vm: dict, config: dict | None = None, *, grace_period: int | None = None,
            inline: bool = True) -> dict:
    """virtctl restart (RestartVMRequestHandler): a stop request for the running VMI and a start
    request behind it. `grace_period` (RestartOptions.gracePeriodSeconds) may only be 0, which
    deletes the VMI's pod at once: the simulated node has none to delete."""
    check_restart_grace(grace_period)
    strategy = run_strategy(vm)
    if strategy in ("Halted", "Once"):
        raise _conflict(vm, f"RunStategy {strategy} does not support manual restart requests")  # sic, KubeVirt
    vmi = _vmi(store, vm)
    if vmi is None:
        raise _conflict(vm, "VM is not running: Halted")
    return _request(store, vm, [requests.stop_request(vmi), requests.start_request()], config, inline)
