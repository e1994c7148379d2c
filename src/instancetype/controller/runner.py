"""The VM controller as a long-running process: the second driver of `vm.reconcile`.

Where the embedded store runs `reconcile` inline in the transaction of every write, a cluster's
controller (KubeVirt's virt-controller, pkg/virt-controller/watch/vm) learns of changes from
informers and works them off a queue:

    informer events ──> keys ──> WorkQueue ──> N workers ──> vm.reconcile(store, vm, settings)

* Keys are `(kind, namespace, name)`: `("VirtualMachine", ns, name)` for a VM, `CATALOG_KEY` for
  the catalogue deployment. A VMI or ControllerRevision event enqueues its owner VM; an
  instancetype, preference or lookup object enqueues a scan for the VMs that failed for want of
  one (`FAILED_VMS`, once per burst); the KubeVirt object (the cluster configuration) enqueues a
  pass over every VM (`ALL_VMS_KEY`) and the catalogue.
* The queue gives per-key exclusivity (never two workers on one VM) and rate-limited retries: a
  Conflict, an object not found, an unreachable API server are retried from a fresh read with
  exponential backoff, never overwritten.
* Expectations (KubeVirt's `ControllerExpectations`): reads come from caches that lag behind the
  writes a worker just made, so after processing a key its writes are remembered and the key is
  not processed again until the caches show them (or `EXPECTATION_TIMEOUT` passes). A worker
  thus never re-creates a VMI it has just created or writes a status on a resourceVersion it
  has just replaced.
* `may_write` (the leader election's fence): every write first asks it; once the lease is lost
  no write leaves the process.
* Shared revisions (controller/shared_revisions.py) have no owner for the garbage collector:
  a VM's deletion event that names one queues `(SHARED_SWEEP, namespace, "")`, a sweep of the
  namespace's shared revisions no VM pins; the workers' start queues one over all namespaces,
  so what VMs deleted while no controller ran pinned is collected after a restart. A revision
  this controller pinned less than its `SharedRevisions.collect_grace` ago is kept (its VM may not show the pin
  in the cache yet) and swept again once the grace is over.

The runner knows nothing of Kubernetes: any `Store` and any source of events drive it (the
tests run it on the embedded store; `controller.kube` wires it to informers on an API server).
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from instancetype.api import kinds
from instancetype.engine import vm_decode
from instancetype.engine.shared_revisions import is_shared_name, referenced_names
from instancetype.errors import Error
from instancetype.store.base import APIError, NotFound, Store
from instancetype.store.kubevirt import Settings, kubevirt_config

from . import cdi, node, node_usage, nodes, shared_revisions
from . import vm as vmctl
from .workqueue import RateLimiter, WorkQueue

log = logging.getLogger("instancetype.controller")

VM = "VirtualMachine"
VMI = "VirtualMachineInstance"
CATALOG_KEY = ("CommonInstancetypes", "", "deployment")
ALL_VMS_KEY = ("AllVirtualMachines", "", "")          # the cluster configuration changed
FAILED_VMS = "FailedVirtualMachines"                  # (FAILED_VMS, namespace or "", ""): an object appeared
SHARED_SWEEP = "SharedRevisions"                      # (SHARED_SWEEP, namespace or "" for all, "")
PENDING_KEY = ("PendingVirtualMachineInstances", "", "")  # capacity appeared: place the waiting VMIs
NODES_KEY = ("SimulatedNodes", "", "")                # the default simulated node, when none exists
# How long a shared revision this process pinned is kept from collection: longer than a worker
# takes from the pin to the VM's patch plus the cache's lag behind it.
SHARED_COLLECT_GRACE = 15.0
# How long a key waits for the caches to show its last writes before it is processed anyway
# (KubeVirt's ExpectationsTimeout is 5 minutes; a lost event here costs a short wait only).
EXPECTATION_TIMEOUT = 10.0
# Objects whose appearance lets a VM that failed for want of it start.
LOOKUP_KINDS = frozenset({"PersistentVolumeClaim", "DataVolume", "DataSource", "VolumeSnapshot"})
CDI_DATAVOLUME = "CDIDataVolume"          # (CDI_DATAVOLUME, ns, name): the simulated CDI fills one
CDI_WAITING = ("CDIWaiting", "", "")      # a clone source written: the DataVolumes waiting, again
# The kinds the controller watches (the storage kinds for handleDataVolumes and the simulated CDI).
WATCHED_KINDS = (VM, VMI, "ControllerRevision", "KubeVirt", "Node", *kinds.ALL_TYPE_KINDS,
                 "DataVolume", "DataSource", "PersistentVolumeClaim", "VolumeSnapshot")

Key = tuple[str, str, str]


class NotLeading(APIError):
    """A write was attempted after the leader lease was lost: refused before it leaves the process."""

    code, reason = 503, "NotLeader"


def vm_key(obj: Mapping) -> Key:
    meta = obj.get("metadata") or {}
    return (VM, meta.get("namespace") or kinds.DEFAULT_NAMESPACE, meta.get("name") or "")


def owner_vm_key(obj: Mapping) -> Key | None:
    """The VM that controls `obj` (its controller ownerReference), if any."""
    meta = obj.get("metadata") or {}
    for ref in meta.get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("kind") == VM and ref.get("controller"):
            return (VM, meta.get("namespace") or kinds.DEFAULT_NAMESPACE, ref.get("name") or "")
    return None


# --- expectations --------------------------------------------------------------------------------

class _Expectation:
    """What a worker's writes must look like in the caches: `(kind, ns, name, test)`."""

    __slots__ = ("deadline", "checks")

    def __init__(self, checks: list[tuple[str, str, str, Callable[[dict | None], bool]]], deadline: float):
        self.checks, self.deadline = checks, deadline


class _RecordingStore(Store):
    """`store` with every write fenced by `may_write` and remembered as an expectation."""

    def __init__(self, store: Store, may_write: Callable[[], bool]):
        self._store = store
        self._may_write = may_write
        self.checks: list[tuple[str, str, str, Callable[[dict | None], bool]]] = []
        self.writes = 0
        self.calls_admission_webhooks = store.calls_admission_webhooks

    # reads
    def get(self, kind, name, namespace=None):
        return self._store.get(kind, name, namespace)

    def get_flavor(self, kind, name, namespace=None):
        return self._store.get_flavor(kind, name, namespace)

    def list(self, kind, namespace=None, **kw):
        return self._store.list(kind, namespace, **kw)

    def count(self, kind, namespace=None, **kw):
        return self._store.count(kind, namespace, **kw)

    def changes(self, since=0, **kw):
        return self._store.changes(since, **kw)

    def resource_version(self):
        return self._store.resource_version()

    def transaction(self):
        return _Same(self)

    # writes
    def _fence(self) -> None:
        if not self._may_write():
            raise NotLeading("not the leader: the lease was lost; no write is made")
        self.writes += 1

    def _expect_seen(self, obj: dict, before_rv: Any = None, *, existed: bool = False) -> None:
        meta = obj.get("metadata") or {}
        uid, rv = meta.get("uid"), meta.get("resourceVersion")
        ns = meta.get("namespace") or ""

        def seen(cached: dict | None) -> bool:
            if cached is None:
                # A created object not cached yet; an updated one deleted since (a VMI whose last
                # finalizer the update removed): nothing of ours left to wait for.
                return existed
            cm = cached.get("metadata") or {}
            if cm.get("uid") != uid:
                return True            # replaced since: nothing of ours left to wait for
            return cm.get("resourceVersion") == rv or (before_rv is not None and cm.get("resourceVersion") != before_rv)

        self.checks.append((obj.get("kind") or "", ns, meta.get("name") or "", seen))

    def create(self, obj, *, namespace=None):
        self._fence()
        created = self._store.create(obj, namespace=namespace)
        self._expect_seen(created)
        return created

    def update(self, obj, *, subresource=None):
        self._fence()
        before = (obj.get("metadata") or {}).get("resourceVersion")
        updated = self._store.update(obj, subresource=subresource)
        self._expect_seen(updated, before, existed=True)
        return updated

    def patch(self, kind, name, patch, namespace=None, *, subresource=None):
        self._fence()
        before = ((patch or {}).get("metadata") or {}).get("resourceVersion")
        patched = self._store.patch(kind, name, patch, namespace, subresource=subresource)
        self._expect_seen(patched, before, existed=True)
        return patched

    def delete(self, kind, name, namespace=None, **kw):
        self._fence()
        deleted = self._store.delete(kind, name, namespace, **kw)
        meta = deleted.get("metadata") or {}
        uid = meta.get("uid")

        def seen(cached: dict | None) -> bool:
            # Gone, replaced, or (held by finalizers) seen marked: KubeVirt's informers count a
            # deletionTimestamp as the deletion observed.
            cm = (cached or {}).get("metadata") or {}
            return cached is None or cm.get("uid") != uid or bool(cm.get("deletionTimestamp"))

        self.checks.append((kind, meta.get("namespace") or "", name, seen))
        return deleted


class _Same:
    """A transaction on the cluster is each write on its own (the API server has no others)."""

    def __init__(self, store: Store):
        self._store = store

    def __enter__(self) -> Store:
        return self._store

    def __exit__(self, *exc) -> None:
        return None


def _outage(e: BaseException) -> bool:
    """The API server could not be reached, or failed (5xx, 429): not the key's own failure."""
    if isinstance(e, APIError):
        return e.code >= 500 or e.code == 429
    if isinstance(e, OSError):
        return True
    from instancetype.store.kube.client import Unreachable

    return isinstance(e, Unreachable)


# --- the controller ------------------------------------------------------------------------------

class VMController:
    """Workers running `vm.reconcile` off a queue fed by `handle(kind, type, obj)`.

    `store`: reads (a cache on a cluster) and writes; `may_write`: the leader's fence;
    `catalog`: keep the common-instancetypes deployment (the leader's job, as virt-operator's).
    """

    def __init__(self, store: Store, *, workers: int = 2, may_write: Callable[[], bool] = lambda: True,
                 catalog: bool = False, catalog_registry: str = "embedded", rate_limiter: RateLimiter | None = None):
        self.store = store
        self.workers = max(1, int(workers))
        self.may_write = may_write
        self.catalog = catalog
        self.catalog_registry = catalog_registry
        self.queue: WorkQueue[Key] = WorkQueue(rate_limiter)
        self._expect: dict[Key, _Expectation] = {}
        self._expect_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self.stats = {"reconciles": 0, "writes": 0, "retries": 0, "errors": 0}
        # This controller's memory of shared revisions (its pins, creates, holders), bound around
        # every reconcile; a revision kept for the grace only is swept again once it has passed.
        self.shared_revisions = shared_revisions.SharedRevisions(SHARED_COLLECT_GRACE, self._sweep_later)
        # What the VMIs on each node request and which wait for one (fed by the VMI events).
        self.node_usage = node_usage.NodeUsage()
        self._stats_lock = threading.Lock()

    # --- events -> keys -------------------------------------------------------------------------

    def handle(self, kind: str, event_type: str, obj: Mapping | None) -> None:
        """An informer's event (ADDED, MODIFIED, DELETED) for `obj` of `kind`."""
        if obj is None:
            return
        if kind == VM:
            self.queue.add(vm_key(obj))
            if event_type == "DELETED" and any(is_shared_name(n) for n in referenced_names(obj)):
                self.queue.add((SHARED_SWEEP, (obj.get("metadata") or {}).get("namespace") or kinds.DEFAULT_NAMESPACE, ""))
        elif kind == "Node":
            self.queue.add(PENDING_KEY)         # a node added or changed: the waiting VMIs may fit
            self.queue.add(NODES_KEY)           # (and the default node's creation seen: its expectation met)
        elif kind in (VMI, "ControllerRevision"):
            if kind == VMI:
                self.node_usage.observe(event_type, dict(obj), self.config)
                if event_type == "DELETED" and self.node_usage.pending:
                    self.queue.add(PENDING_KEY)     # its capacity is free again
            key = owner_vm_key(obj)
            if key is None and kind == VMI:
                key = vm_key(obj)
            if key is not None:
                self.queue.add(key)
        elif kind == "DataVolume":
            # CDI's reconcile of it, and the VM that owns it (KubeVirt's DataVolume handlers)
            meta = obj.get("metadata") or {}
            if event_type != "DELETED":
                self.queue.add((CDI_DATAVOLUME, meta.get("namespace") or kinds.DEFAULT_NAMESPACE, meta.get("name") or ""))
            if not cdi.waiting(obj):
                self.queue.add(CDI_WAITING)     # its claim is populated now: a clone of it may complete
            key = owner_vm_key(obj)
            if key is not None:
                self.queue.add(key)
            self.queue.add((FAILED_VMS, meta.get("namespace") or "", ""))
        elif kind == "KubeVirt":
            self.queue.add(ALL_VMS_KEY)
            if self.catalog:
                self.queue.add(CATALOG_KEY)
        elif kind in kinds.ALL_TYPE_KINDS or kind in LOOKUP_KINDS:
            # The scan for VMs that failed for want of it runs once per burst (the key is queued once).
            self.queue.add((FAILED_VMS, (obj.get("metadata") or {}).get("namespace") or "", ""))
            if kind in cdi.SOURCE_KINDS:
                self.queue.add(CDI_WAITING)      # a clone waiting for it may complete
            if self.catalog and kind in (kinds.CLUSTER_INSTANCETYPE, kinds.CLUSTER_PREFERENCE):
                self.queue.add(CATALOG_KEY)      # a managed object edited or deleted: restore it

    def enqueue_all(self) -> None:
        for vm in self.store.list(VM):
            self.queue.add(vm_key(vm))
        if self.catalog:
            self.queue.add(CATALOG_KEY)

    def _enqueue_failed(self, namespace: str | None) -> None:
        for vm in vmctl.waiting_for_objects(self.store, namespace):
            self.queue.add(vm_key(vm))

    # --- workers --------------------------------------------------------------------------------

    def start(self) -> None:
        if self.catalog:
            self.queue.add(CATALOG_KEY)
        self.queue.add(NODES_KEY)
        self.queue.add((SHARED_SWEEP, "", ""))
        vm_decode.warm_up()      # the engine's msgspec types, before the workers use them at once
        for i in range(self.workers):
            t = threading.Thread(target=self._work, name=f"vm-worker-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop taking keys; wait (bounded) for the workers to finish the key they hold."""
        self._stopping.set()
        self.queue.shutdown()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))

    def _work(self) -> None:
        while not self._stopping.is_set():
            key = self.queue.get()
            if key is None:
                return
            try:
                self.process(key)
            finally:
                self.queue.done(key)

    def process(self, key: Key) -> None:
        """One key: wait for expectations, reconcile, and retry with backoff on failure."""
        if not self._expectations_met(key):
            self.queue.add_after(key, 0.2)
            return
        recording = _RecordingStore(self.store, self.may_write)
        try:
            with self.shared_revisions.bound(), self.node_usage.bound():
                self._sync(recording, key)
        except NotLeading:
            return          # the leader's job now; this process stops
        except Exception as e:  # noqa: BLE001 -- a worker survives anything and retries the key
            self._count("retries" if isinstance(e, APIError) and e.code < 500 else "errors")
            level = logging.DEBUG if isinstance(e, APIError) and e.code == 409 else logging.INFO
            log.log(level, "%s %s/%s: %s (retry %d)", key[0], key[1], key[2], e, self.queue.retries(key),
                    exc_info=not isinstance(e, (Error, OSError)))      # a traceback only for a bug
            self.queue.add_rate_limited(key, outage=_outage(e))
        else:
            self.queue.forget(key)
            self.queue.recovered()      # the API server answers again: what an outage held back goes now
        finally:
            self._count("writes", recording.writes)
            if recording.checks:
                with self._expect_lock:
                    self._expect[key] = _Expectation(recording.checks, time.monotonic() + EXPECTATION_TIMEOUT)

    def _sync(self, store: _RecordingStore, key: Key) -> None:
        if key == CATALOG_KEY:
            from instancetype.lifecycle import catalog_sync

            catalog_sync.sync(store, registry=self.catalog_registry)
            return
        if key == ALL_VMS_KEY:
            self.enqueue_all()
            return
        if key[0] == FAILED_VMS:
            self._enqueue_failed(key[1] or None)
            return
        if key[0] == CDI_DATAVOLUME:
            try:
                dv = self.store.get("DataVolume", key[2], key[1])
            except NotFound:
                return
            cdi.sync(store, dv)
            return
        if key == CDI_WAITING:
            # each one on its own key: its writes are then awaited by the key its events re-queue
            for dv in self.store.list("DataVolume"):
                if cdi.waiting(dv):
                    meta = dv.get("metadata") or {}
                    self.queue.add((CDI_DATAVOLUME, meta.get("namespace") or kinds.DEFAULT_NAMESPACE, meta.get("name") or ""))
            return
        if key == NODES_KEY:
            if nodes.ensure_default_node(store) is not None:
                log.info("created the simulated node %s", nodes.DEFAULT_NODE_NAME)
            nodes.keep_ready(store)
            return
        if key == PENDING_KEY:
            answers = node_usage.Answers()
            config = self.settings().config
            for ns, name in sorted(self.node_usage.pending):
                vmi = store.find(VMI, name, ns)
                if vmi is None or not self.node_usage.refused_again(store, vmi, config, answers):
                    self.queue.add((VM, ns, name))      # a VMI has its VM's name
            return
        if key[0] == SHARED_SWEEP:
            deleted = self.shared_revisions.sweep(store, key[1] or None)
            if deleted:
                log.info("collected %d shared ControllerRevision(s) no VM pins%s", len(deleted),
                         f" in {key[1]}" if key[1] else "")
            return
        _, ns, name = key
        try:
            vm = self.store.get(VM, name, ns)
        except NotFound:
            # Deleted: the garbage collector removes its VMI and revisions; a VMI it is deleting
            # waits on KubeVirt's finalizers, which the simulated node releases.
            self._release_orphan_vmi(store, ns, name)
            return
        self._count("reconciles")
        vmctl.reconcile(store, vm, self.settings())

    def _release_orphan_vmi(self, store: Store, ns: str, name: str) -> None:
        try:
            vmi = self.store.get(VMI, name, ns)
        except NotFound:
            return
        if node.terminating(vmi):
            vmctl.release_vmi(store, vmi)

    def _sweep_later(self, namespace: str) -> None:
        """A shared revision of `namespace` was kept for the grace only: sweep it again after it."""
        self.queue.add_after((SHARED_SWEEP, namespace, ""), self.shared_revisions.collect_grace)

    def config(self) -> dict | None:
        """`spec.configuration` of the KubeVirt object (None: all defaults)."""
        return kubevirt_config(self.store)

    def settings(self) -> Settings:
        """The KubeVirt object's configuration and shared-revisions opt-in, read once (from the
        informers' cache) for one reconcile."""
        return Settings.read(self.store)

    def _expectations_met(self, key: Key) -> bool:
        with self._expect_lock:
            exp = self._expect.get(key)
        if exp is None:
            return True
        if time.monotonic() < exp.deadline:
            for kind, ns, name, seen in exp.checks:
                try:
                    cached = self.store.get(kind, name, ns or None)
                except NotFound:
                    cached = None
                except Exception:   # noqa: BLE001 -- an unreadable cache: process the key anyway
                    break
                if not seen(cached):
                    return False
        with self._expect_lock:
            if self._expect.get(key) is exp:
                del self._expect[key]
        return True

    def _count(self, what: str, n: int = 1) -> None:
        with self._stats_lock:
            self.stats[what] += n

    def idle(self, within: float | None = None) -> bool:
        """Nothing queued or in flight and no expectation pending (with `within`: retries due
        later than `within` seconds from now do not count)."""
        with self._expect_lock:
            pending = bool(self._expect)
        return self.queue.idle(within) and not pending

    def wait_idle(self, timeout: float, *, within: float = 1.0, poll: float = 0.02) -> bool:
        """Wait (at most `timeout` seconds) until `idle(within)`: what a caller that made a write
        and saw it reach the informers needs before reading the settled state. False on timeout."""
        deadline = time.monotonic() + timeout
        while not self.idle(within):
            if time.monotonic() >= deadline:
                return False
            time.sleep(poll)
        return True


def feed_from_store(store: Store, controller: VMController, kinds_: Iterable[str] = WATCHED_KINDS, *,
                    stop: threading.Event, poll: float = 0.05) -> None:
    """Drive `controller` from a store's change feed (the embedded store, or any `Store`): the
    objects that exist first (an informer's initial list), then every change, until `stop`."""
    wanted = set(kinds_)
    since = store.resource_version()
    for kind in wanted:
        for obj in store.list(kind):
            controller.handle(kind, "ADDED", obj)
    while not stop.is_set():
        for ev in store.changes(since):
            since = ev.resource_version
            if ev.kind in wanted:
                controller.handle(ev.kind, ev.type, ev.object)
        stop.wait(poll)
