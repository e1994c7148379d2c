"""One test body, both stores: the fixture `any_cluster`, parametrised `embedded` / `kube`.

    def test_something(any_cluster):
        any_cluster.apply(IT); any_cluster.apply(vm()); any_cluster.start("vm1")
        assert any_cluster.get("VirtualMachineInstance", "vm1")

* `embedded`: `instancetype.controller.Cluster.open(<tmp>/state.db)`: admission and reconcile run
  inline in each write's transaction, so after each call the state is final.
* `kube` (marked `cluster`): the same methods on a real API server (`KubeCluster`, below), in a
  fresh namespace of `kube_netns` that stands for `default`. Per test module, once: install's
  CRDs, RBAC and webhooks, `instancetype serve` (webhooks and the subresource API behind the
  aggregator, tests/kube/served.py) and the VM controller (`controller.kube.run`) in a thread of
  the test process. Every write returns once it has settled: the informers have delivered the
  state the API server holds after it (resourceVersion by resourceVersion, to the controller's
  handlers), the controller is idle (`VMController.wait_idle`: nothing queued or in flight, no
  expectation pending, no retry due within a second) and, after a delete, the garbage collector
  has removed the dependents. Bounded (SETTLE_TIMEOUT), with an assertion naming what did not
  settle; no sleeps.

The controller keeps the catalogue (virt-operator's part, as `instancetype controller` does by
default). The tests of a module share the cluster-scoped objects: the KubeVirt object's spec is
put back after each test, and the cluster-scoped objects a test created are deleted.

Marks: `@pytest.mark.embedded_only(reason)` skips the `kube` variant with that reason.
Other helpers: `any_cluster.store_name` ("embedded" / "kube") for the few assertions whose
wording is the API server's; `KubeCluster.namespace`.

Registered for the whole suite by `pytest_plugins` in tests/conftest.py: any test may ask for
`any_cluster` (it is marked `cluster` on its `kube` variant only).
"""
from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from instancetype.api.kinds import BY_KIND
from instancetype.store.base import NotFound
from tests.waits import eventually

SETTLE_TIMEOUT = 30.0           # a write, its reconciles and their informer events
CASCADE_TIMEOUT = 60.0          # the garbage collector learns a CRD kind at its next discovery sync (<= 30 s)
OWNED_KINDS = ("VirtualMachineInstance", "ControllerRevision", "PersistentVolumeClaim")


@dataclass
class KubeStack:
    """What one test module shares on `kube_netns`: serve, the in-process controller, and what
    the informers delivered: `seen[(kind, ns, name)] = (resourceVersion, exists)`."""

    kube: Any
    work: Path
    controller: Any = None
    seen: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    failure: list = field(default_factory=list)
    kinds: set = field(default_factory=set)             # the kinds the informers watch
    kubevirt: list = field(default_factory=list)        # the KubeVirt objects as the module found them

    def track(self, informers) -> None:
        """Record each event after the controller's handler ran (handlers run in order)."""
        for inf in informers.informers.values():
            kind = inf.kind
            self.kinds.add(kind)

            def put(obj, exists, _k=kind):
                meta = obj.get("metadata") or {}
                key = (_k, meta.get("namespace") or "", meta.get("name") or "")
                with self.lock:
                    self.seen[key] = (int(meta.get("resourceVersion") or 0), exists)

            inf.add_handler(on_add=lambda o, put=put: put(o, True),
                            on_update=lambda old, new, put=put: put(new, True),
                            on_delete=lambda o, put=put: put(o, False))

    def delivered(self, kind: str, ns: str, name: str, live: dict | None) -> bool:
        """The informers handed the controller `live` (the API server's object, None: absent);
        true at once for a kind the controller does not watch."""
        if kind not in self.kinds:
            return True
        with self.lock:
            got = self.seen.get((kind, ns, name))
        if live is None:
            return got is None or not got[1]
        rv = int((live.get("metadata") or {}).get("resourceVersion") or 0)
        return got is not None and got[1] and got[0] >= rv


def _namespaced(kind: str) -> bool:
    res = BY_KIND.get(kind)
    return res is None or res.namespaced


class KubeCluster:
    """`RemoteCluster` in one namespace (the one a test's `default` stands for), whose writes
    return once the cluster has settled (see the module's docstring)."""

    store_name = "kube"

    def __init__(self, stack: KubeStack, namespace: str, kubeconfig: Path):
        from instancetype.cli.remote import RemoteCluster

        self.stack, self.namespace, self.kubeconfig = stack, namespace, kubeconfig
        self.remote = RemoteCluster(str(kubeconfig), None)
        self.images = None
        self.created_cluster_scoped: list[tuple[str, str]] = []     # deleted after the test

    def close(self) -> None:
        self.remote.close()

    def _ns(self, kind: str, namespace: str | None) -> str | None:
        return (namespace or self.namespace) if _namespaced(kind) else None

    # --- reads (the API server's, not a cache's) ---------------------------------------------

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict:
        return self.remote.get(kind, name, self._ns(kind, namespace))

    def list(self, kind: str, namespace: str | None = None, **kw: Any):
        return self.remote.list(kind, self._ns(kind, namespace), **kw)

    def expand_vm(self, name: str, namespace: str | None = None) -> dict:
        return self.remote.expand_vm(name, namespace or self.namespace)

    # --- writes, settled ------------------------------------------------------------------------

    def apply(self, obj: dict, *, namespace: str | None = None):
        return self._settled(self.remote.apply(obj, namespace=namespace or self.namespace))

    def create(self, obj: dict, *, namespace: str | None = None):
        kind = obj.get("kind") or ""
        return self._settled(self.remote.create(obj, namespace=self._ns(kind, namespace)))

    def update(self, obj: dict):
        meta = obj.get("metadata") or {}
        if _namespaced(obj.get("kind") or "") and not meta.get("namespace"):
            obj = {**obj, "metadata": {**meta, "namespace": self.namespace}}
        return self._settled(self.remote.update(obj))

    def delete(self, kind: str, name: str, namespace: str | None = None, **options: Any) -> dict:
        """`options`: propagation, grace_period. Settled; then, once the object is gone (no
        finalizer holds it) and unless orphaned, what it owned is waited for too."""
        ns = self._ns(kind, namespace)
        deleted = self.remote.delete(kind, name, ns, **options)
        self.settle([(kind, ns, name)])
        if options.get("propagation") in ("Orphan", "Foreground"):
            # the garbage collector's own finalizer (orphan, foregroundDeletion) goes when it has
            # carried the policy out (a CRD kind once its discovery has seen it)
            self._wait(lambda: not {"orphan", "foregroundDeletion"} & set(
                ((self._live(kind, ns or "", name) or {}).get("metadata") or {}).get("finalizers") or ()),
                CASCADE_TIMEOUT, f"the garbage collector to carry out the deletion of {kind} {ns}/{name}")
            self.settle([(kind, ns, name)])
        uid = (deleted.get("metadata") or {}).get("uid")
        if uid and options.get("propagation", "Background") != "Orphan" and self._live(kind, ns or "", name) is None:
            self._wait(lambda: not self._dependents(uid, ns), CASCADE_TIMEOUT,
                       f"the garbage collector to delete what {kind} {ns}/{name} owned")
            self.settle([(kind, ns, name)])
        return deleted

    def start(self, name: str, namespace: str | None = None, **options: Any) -> dict:
        return self._vm_action(self.remote.start, name, namespace, **options)

    def stop(self, name: str, namespace: str | None = None, **options: Any) -> dict:
        return self._vm_action(self.remote.stop, name, namespace, **options)

    def restart(self, name: str, namespace: str | None = None, **options: Any) -> dict:
        return self._vm_action(self.remote.restart, name, namespace, **options)

    def pause(self, name: str, namespace: str | None = None) -> dict:
        return self._vm_action(self.remote.pause, name, namespace)

    def unpause(self, name: str, namespace: str | None = None) -> dict:
        return self._vm_action(self.remote.unpause, name, namespace)

    def soft_reboot(self, name: str, namespace: str | None = None) -> dict:
        return self._vm_action(self.remote.soft_reboot, name, namespace)

    def add_volume(self, name: str, namespace: str | None = None, options: dict | None = None, **kw: Any):
        return self._vm_action(self.remote.add_volume, name, namespace, options=options, **kw)

    def remove_volume(self, name: str, namespace: str | None = None, options: dict | None = None, **kw: Any):
        return self._vm_action(self.remote.remove_volume, name, namespace, options=options, **kw)

    def _vm_action(self, action, name: str, namespace: str | None, **options: Any) -> dict:
        ns = namespace or self.namespace
        out = action(name, ns, **options)
        self.settle([("VirtualMachine", ns, name), ("VirtualMachineInstance", ns, name)])
        return out

    def sync_catalog(self, *, dry_run: bool = False) -> list:
        changes = self.remote.sync_catalog(dry_run=dry_run)
        if not dry_run:
            self.settle([(c.kind, "", c.name) for c in changes])
        return changes

    def _settled(self, result):
        meta = result.object.get("metadata") or {}
        kind = result.object.get("kind") or ""
        key = (kind, meta.get("namespace") or "", meta.get("name") or "")
        if result.action == "created" and not _namespaced(kind):
            self.created_cluster_scoped.append((kind, key[2]))
        self.settle([key])
        with contextlib.suppress(NotFound):      # what the embedded store returns: the settled object
            result.object = self.remote.get(kind, key[2], key[1] or None)
        return result

    # --- settling ----------------------------------------------------------------------------------

    def settle(self, keys: list[tuple[str, str, str]]) -> None:
        """Bounded: the informers delivered the API server's current state of `keys`, and the
        controller then went idle; repeated until both hold at once (a reconcile's writes are
        delivered, and may be reconciled again, before the controller is idle for good)."""
        keys = [(kind, ns or "", name) for kind, ns, name in keys]
        deadline = time.monotonic() + SETTLE_TIMEOUT
        ctl = self.stack.controller
        while True:
            pending = [k for k in keys if not self.stack.delivered(*k, self._live(*k))]
            if not pending and ctl.idle(within=1.0):
                return
            if pending:
                self._wait(lambda: all(self.stack.delivered(*k, self._live(*k)) for k in keys),
                           deadline - time.monotonic(), f"the informers to deliver {pending}")
            if not ctl.wait_idle(max(0.0, deadline - time.monotonic()), within=1.0):
                raise AssertionError(f"the controller did not settle within {SETTLE_TIMEOUT:.0f}s after "
                                     f"writing {keys}: queue {len(ctl.queue)}, stats {ctl.stats}"
                                     + "".join(f"\ncontroller thread failed: {f}" for f in self.stack.failure))

    def settle_namespace(self) -> None:
        """After writes made elsewhere (the command line): settle every VM of the namespace and its VMI."""
        names = [vm["metadata"]["name"] for vm in self.remote.store.list("VirtualMachine", self.namespace)]
        self.settle([(kind, self.namespace, n) for n in names
                     for kind in ("VirtualMachine", "VirtualMachineInstance")])

    def _live(self, kind: str, ns: str, name: str) -> dict | None:
        try:
            return self.remote.store.get(kind, name, ns or None)
        except NotFound:
            return None

    def _dependents(self, uid: str, ns: str | None) -> list[str]:
        if ns is None:
            return []
        return [f"{o['kind']}/{o['metadata']['name']}" for kind in OWNED_KINDS
                for o in self.remote.store.list(kind, ns)
                if any(r.get("uid") == uid for r in o["metadata"].get("ownerReferences") or ())]

    @staticmethod
    def _wait(check, timeout: float, what: str) -> None:
        eventually(check, timeout, interval=0.02, what=what)


def cli_args(cluster) -> list[str]:
    """The `instancetype` options that name `cluster`'s store: its state file, or the kubeconfig
    of its namespace (after such a command, call `settled(cluster)`)."""
    if cluster.store_name == "embedded":
        return ["--state", str(cluster.store.path)]
    return ["--kubeconfig", str(cluster.kubeconfig)]


def settled(cluster) -> None:
    """What a command line's writes started on `cluster` has settled (nothing to wait for on the
    embedded store, where it ran inline)."""
    if cluster.store_name == "kube":
        cluster.settle_namespace()


# --- fixtures ----------------------------------------------------------------------------------------

def _run_controller(stack: KubeStack, stop: threading.Event, ready: threading.Event) -> None:
    from instancetype.controller.kube import Options, run

    def on_ready(ctl):
        stack.track(ctl.store.informers)
        stack.controller = ctl
        ready.set()

    try:
        run(Options(kubeconfig=str(stack.kube.kubeconfig), workers=2, catalog=True), stop, on_ready=on_ready)
    except BaseException as e:  # noqa: BLE001 -- reported by the fixture and by settle()
        stack.failure.append(repr(e))
        ready.set()


@pytest.fixture(scope="module")
def kube_stack(kube_netns, tmp_path_factory) -> Iterator[KubeStack]:
    """install + serve in kube_netns's network namespace, the VM controller in a thread here."""
    from tests.kube.controller_env import release_vmis
    from tests.kube.served import subresource_api_served

    work = tmp_path_factory.mktemp("both-stores")
    stack = KubeStack(kube_netns, work)
    stop, ready = threading.Event(), threading.Event()
    thread = threading.Thread(target=_run_controller, args=(stack, stop, ready), name="vm-controller", daemon=True)
    with subresource_api_served(kube_netns, work, controller=False):
        thread.start()
        try:
            assert ready.wait(180) and stack.controller is not None, f"the controller did not start: {stack.failure}"
            kubevirt = stack.kube.kubectl("get", "kubevirt", "-A", "-o", "json").stdout
            stack.kubevirt = yaml.safe_load(kubevirt)["items"]
            yield stack
        finally:
            stop.set()
            thread.join(30)
            release_vmis(kube_netns)


def namespace_kubeconfig(kube, namespace: str, path: Path) -> Path:
    """`kube`'s admin kubeconfig at `path`, every context's namespace `namespace`."""
    cfg = yaml.safe_load(Path(kube.kubeconfig).read_text())
    for ctx in cfg["contexts"]:
        ctx["context"]["namespace"] = namespace
    path.write_text(yaml.safe_dump(cfg))
    path.chmod(0o600)
    return path


def _restore_kubevirt(cluster: KubeCluster, saved: list[dict]) -> None:
    """The KubeVirt object is the cluster's settings, shared by the module's tests: put back
    the spec a test changed."""
    for kv in saved:
        meta = kv["metadata"]
        try:
            now = cluster.remote.store.get("KubeVirt", meta["name"], meta["namespace"])
        except NotFound:
            continue
        if now.get("spec") != kv.get("spec"):
            now["spec"] = kv.get("spec")
            cluster.update(now)


@contextlib.contextmanager
def kube_cluster(stack: KubeStack, namespace: str, work: Path) -> Iterator[KubeCluster]:
    """A `KubeCluster` on `namespace`; at the end its VMs are deleted (while the controller
    runs, which lets their VMIs go) and the cluster settings restored."""
    cluster = KubeCluster(stack, namespace, namespace_kubeconfig(stack.kube, namespace, work / "ns.kubeconfig"))
    try:
        yield cluster
    finally:
        try:
            for vm in list(cluster.list("VirtualMachine")):
                cluster.delete("VirtualMachine", vm["metadata"]["name"])
            for kind, name in cluster.created_cluster_scoped:
                with contextlib.suppress(NotFound):
                    cluster.delete(kind, name)
            _restore_kubevirt(cluster, stack.kubevirt)
        finally:
            cluster.close()


@pytest.fixture(params=["embedded", pytest.param("kube", marks=pytest.mark.cluster)])
def any_cluster(request, tmp_path):
    """`controller.Cluster` on a state file, or `KubeCluster` on a real API server."""
    if request.param == "embedded":
        from instancetype.controller import Cluster

        with Cluster.open(str(tmp_path / "state.db")) as c:
            c.store_name = "embedded"
            yield c
        return
    marker = request.node.get_closest_marker("embedded_only")
    if marker is not None:
        pytest.skip(marker.kwargs.get("reason") or (marker.args[0] if marker.args else "embedded store only"))
    stack = request.getfixturevalue("kube_stack")
    namespace = request.getfixturevalue("netns_namespace")
    with kube_cluster(stack, namespace, tmp_path) as c:
        yield c
