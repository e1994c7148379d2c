"""The controller's second driver (`controller.runner`) on the embedded store: the same
`reconcile`, run by workers off a queue fed by the store's change feed instead of inline."""
from __future__ import annotations

import threading

from instancetype.controller import Cluster
from instancetype.controller.runner import VMController, feed_from_store
from instancetype.jsonutil import clone
from instancetype.lifecycle.admission import admit
from instancetype.store.base import Conflict, Store
from instancetype.store.sqlite import SqliteStore
from tests import builders
from tests.waits import eventually

from .test_cluster import IT, PREF, vm


class ThreadLocalStore(Store):
    """One SqliteStore per thread (a connection belongs to one thread), all on one file."""

    def __init__(self, path):
        self.path = path
        self._local = threading.local()
        self._all: list[SqliteStore] = []
        self._lock = threading.Lock()

    def _s(self) -> SqliteStore:
        s = getattr(self._local, "store", None)
        if s is None:
            s = self._local.store = SqliteStore(self.path)
            with self._lock:
                self._all.append(s)
        return s

    def get(self, *a, **kw):
        return self._s().get(*a, **kw)

    def list(self, *a, **kw):
        return list(self._s().list(*a, **kw))

    def count(self, *a, **kw):
        return self._s().count(*a, **kw)

    def create(self, *a, **kw):
        return self._s().create(*a, **kw)

    def update(self, *a, **kw):
        return self._s().update(*a, **kw)

    def patch(self, *a, **kw):
        return self._s().patch(*a, **kw)

    def delete(self, *a, **kw):
        return self._s().delete(*a, **kw)

    def changes(self, *a, **kw):
        return list(self._s().changes(*a, **kw))

    def resource_version(self):
        return self._s().resource_version()

    def transaction(self):
        return self._s().transaction()

    def close(self):
        with self._lock:
            for s in self._all:
                try:
                    s.close()
                except Exception:   # another thread's connection: closed when collected
                    pass


def _seed(path, names, strategy="Always"):
    """The types through the embedded cluster; the VMs stored admitted but not reconciled (as an
    API server stores them before any controller runs)."""
    with Cluster.open(str(path)) as c:
        c.apply(IT)
        c.apply(PREF)
        for name in names:
            obj = admit(c.store, vm(name, strategy), operation="CREATE").obj
            c.store.create(obj)


def _run(store, until, *, workers=4, timeout=60.0):
    ctl = VMController(store, workers=workers)
    stop = threading.Event()
    feeder = threading.Thread(target=feed_from_store, args=(store, ctl), kwargs={"stop": stop}, daemon=True)
    ctl.start()
    feeder.start()
    try:
        # the feeder polls the store (feed_from_store), so the state it converges to is polled too
        eventually(lambda: until() and ctl.idle(), timeout, interval=0.05, what="the controller to settle")
    finally:
        stop.set()
        feeder.join(10)
        ctl.stop()
    return ctl


def _all_running(store, n):
    vms = store.list("VirtualMachine")
    return len(vms) == n and all((v.get("status") or {}).get("printableStatus") == "Running" for v in vms)


def test_workers_start_every_vm_exactly_once(tmp_path):
    path = tmp_path / "state.db"
    names = [f"vm{i}" for i in range(24)]
    _seed(path, names)
    store = ThreadLocalStore(path)
    try:
        ctl = _run(store, lambda: _all_running(store, len(names)))
        assert _all_running(store, len(names))
        assert sorted(v["metadata"]["name"] for v in store.list("VirtualMachineInstance")) == sorted(names)
        revs = builders.pins(store)
        assert len(revs) == 2 * len(names)
        for v in store.list("VirtualMachine"):
            uid = v["metadata"]["uid"]
            owned = [r for r in revs if r["metadata"]["ownerReferences"][0]["uid"] == uid]
            assert sorted(r["metadata"]["name"] for r in owned) == sorted(
                [v["spec"]["instancetype"]["revisionName"], v["spec"]["preference"]["revisionName"]])
        # KubeVirt's writes per start: the VM's finalizer, 2 revisions, the matcher patch, the
        # VM's start revision, the VMI, the status.
        assert ctl.stats["writes"] == 7 * len(names)
    finally:
        store.close()


def test_the_vmi_equals_the_one_the_embedded_store_builds(tmp_path):
    _seed(tmp_path / "a.db", ["same"])
    store = ThreadLocalStore(tmp_path / "a.db")
    try:
        _run(store, lambda: _all_running(store, 1))
        by_runner = store.get("VirtualMachineInstance", "same")
    finally:
        store.close()
    with Cluster.open(str(tmp_path / "b.db")) as c:
        c.apply(IT)
        c.apply(PREF)
        c.apply(vm("same"))
        inline = c.get("VirtualMachineInstance", "same")
    assert by_runner["spec"] == inline["spec"]


class ConflictOnce(ThreadLocalStore):
    """The first status write of each VM meets a Conflict (another writer got there first)."""

    def __init__(self, path):
        super().__init__(path)
        self.conflicts: set[str] = set()

    def update(self, obj, *, subresource=None):
        name = obj["metadata"]["name"]
        if subresource == "status" and obj["kind"] == "VirtualMachine" and name not in self.conflicts:
            self.conflicts.add(name)
            raise Conflict(f'Operation cannot be fulfilled on virtualmachines.kubevirt.io "{name}"')
        return super().update(obj, subresource=subresource)


def test_a_conflict_is_retried_from_a_fresh_read(tmp_path):
    path = tmp_path / "state.db"
    _seed(path, ["c1", "c2"])
    store = ConflictOnce(path)
    try:
        ctl = _run(store, lambda: _all_running(store, 2))
        assert _all_running(store, 2) and store.conflicts == {"c1", "c2"}
        assert ctl.stats["retries"] >= 2
        assert len(store.list("VirtualMachineInstance")) == 2 and len(builders.pins(store)) == 4
    finally:
        store.close()


def test_a_failed_vm_starts_when_its_instancetype_appears(tmp_path):
    path = tmp_path / "state.db"
    with Cluster.open(str(path)) as c:
        c.apply(PREF)
        obj = admit(c.store, vm("late"), operation="CREATE").obj
        c.store.create(obj)
    store = ThreadLocalStore(path)
    ctl = VMController(store, workers=2)
    stop = threading.Event()
    feeder = threading.Thread(target=feed_from_store, args=(store, ctl), kwargs={"stop": stop}, daemon=True)
    ctl.start()
    feeder.start()
    try:
        eventually(lambda: any(c["type"] == "Failure" for c in (
            store.get("VirtualMachine", "late").get("status") or {}).get("conditions") or ()),
            20, interval=0.05, what="the Failure condition")
        store.create(clone(IT))
        eventually(lambda: _all_running(store, 1), 20, interval=0.05, what="the VM running")
    finally:
        stop.set()
        feeder.join(10)
        ctl.stop()
        store.close()


def test_no_write_leaves_a_controller_that_lost_its_lease(tmp_path):
    path = tmp_path / "state.db"
    _seed(path, ["fenced"])
    store = ThreadLocalStore(path)
    try:
        ctl = VMController(store, workers=1, may_write=lambda: False)
        ctl.process(("VirtualMachine", "default", "fenced"))
        assert store.list("VirtualMachineInstance") == [] and store.list("ControllerRevision") == []
        assert ctl.stats["writes"] == 0
    finally:
        store.close()


def test_wait_idle_returns_once_the_work_is_done_and_is_bounded(tmp_path):
    path = tmp_path / "state.db"
    _seed(path, ["vm0", "vm1"])
    store = ThreadLocalStore(path)
    ctl = VMController(store, workers=2)
    try:
        assert ctl.wait_idle(0)                       # nothing to do yet
        ctl.handle("VirtualMachine", "ADDED", store.get("VirtualMachine", "vm0"))
        assert not ctl.wait_idle(0.1)                 # queued, no worker running: bounded
        ctl.handle("VirtualMachine", "ADDED", store.get("VirtualMachine", "vm1"))
        ctl.start()
        # the VM keys' own writes are expectations until their keys run again: feed those events
        stop = threading.Event()
        feeder = threading.Thread(target=feed_from_store, args=(store, ctl), kwargs={"stop": stop}, daemon=True)
        feeder.start()
        try:
            assert ctl.wait_idle(60)
            assert _all_running(store, 2)
        finally:
            stop.set()
            feeder.join(10)
    finally:
        ctl.stop()
        store.close()


def test_an_updated_object_gone_from_the_cache_leaves_no_expectation(tmp_path):
    """A VMI whose last finalizer the controller's update removed is deleted at once: the VM's
    key must not wait EXPECTATION_TIMEOUT for the cache to show an object that no longer exists.
    A created object not in the cache yet is still waited for."""
    from instancetype.controller.runner import _RecordingStore

    store = SqliteStore(str(tmp_path / "state.db"))
    try:
        rec = _RecordingStore(store, lambda: True)
        claim = rec.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                            "metadata": {"name": "disk", "namespace": "default"}, "spec": {}})
        rec.update(dict(claim, metadata={**claim["metadata"], "labels": {"a": "b"}}))
        (_, _, _, created), (_, _, _, updated) = rec.checks
        assert created(None) is False
        assert updated(None) is True
    finally:
        store.close()


def test_what_counts_as_an_outage_for_the_retry_queue():
    from instancetype.controller.runner import _outage
    from instancetype.store.base import APIError, NotFound
    from instancetype.store.kube.client import Unreachable

    class TooMany(APIError):
        code = 429

    assert _outage(APIError("etcdserver: leader changed")) and _outage(TooMany("slow down"))
    assert _outage(Unreachable("connection refused")) and _outage(ConnectionResetError())
    assert not _outage(Conflict("the object has been modified")) and not _outage(NotFound("gone"))
    assert not _outage(ValueError("a bug"))
