"""The store over the real API server: KubeStore (CRUD, optimistic concurrency, the status
subresource, merge patch, propagation policies, Kubernetes' errors as the store's), the informer
(events, relist on 410 Gone, surviving an API server restart) and the CachedStore."""
from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from instancetype.api import kinds
from instancetype.api.v1alpha import deprecation_warning
from instancetype.errors import StoreError
from instancetype.store.base import AlreadyExists, BadRequest, Conflict, Forbidden, Invalid, NotFound, not_found
from instancetype.store.kube import CachedStore, Informer, KubeStore, Unreachable
from instancetype.store.kube.flavor import FLAVOR_INFORMER_KINDS
from instancetype.store.source import get_type
from tests.builders import instancetype_obj, preference_obj, vm
from tests.kube.served import installed_and_served
from tests.waits import eventually

IT = kinds.INSTANCETYPE


@pytest.fixture(scope="module")
def installed(kube, webhook_certs):
    with installed_and_served(kube, webhook_certs) as served:
        yield served


@pytest.fixture
def store(kube, installed):
    s = KubeStore(str(kube.kubeconfig))
    yield s
    s.close()


def revision(name: str, namespace: str, owner: dict | None = None) -> dict:
    meta: dict = {"name": name, "namespace": namespace, "labels": {"app": name}}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                    "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}]
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": meta, "revision": 1,
            "data": {"x": 1}}


def test_create_get_list_patch_update(store, namespace):
    created = store.create(instancetype_obj("small", cpu=1, namespace=namespace))
    meta = created["metadata"]
    assert meta["uid"] and meta["resourceVersion"] and meta["generation"] == 1 and meta["creationTimestamp"]
    assert store.get(IT, "small", namespace)["spec"] == {"cpu": {"guest": 1}, "memory": {"guest": "128Mi"}}
    store.create(instancetype_obj("large", cpu=4, namespace=namespace, metadata={"labels": {"size": "l"}}))
    assert [o["metadata"]["name"] for o in store.list(IT, namespace)] == ["large", "small"]
    assert [o["metadata"]["name"] for o in store.list(IT, namespace, label_selector="size=l")] == ["large"]
    assert [o["metadata"]["name"] for o in store.list(IT, namespace, label_selector={"size": "l"})] == ["large"]
    assert store.count(IT, namespace, field_selector="metadata.name=small") == 1
    patched = store.patch(IT, "small", {"spec": {"cpu": {"guest": 2}}, "metadata": {"labels": {"a": "b"}}}, namespace)
    assert patched["spec"]["cpu"] == {"guest": 2} and patched["metadata"]["generation"] == 2
    assert patched["metadata"]["labels"] == {"a": "b"}
    # A null in a merge patch removes the field.
    assert "labels" not in store.patch(IT, "small", {"metadata": {"labels": None}}, namespace)["metadata"]
    # update without a resourceVersion replaces whatever is there; with a stale one is a Conflict.
    current = store.get(IT, "small", namespace)
    fresh = {**current, "spec": {"cpu": {"guest": 3}, "memory": {"guest": "1Gi"}}}
    assert store.update(fresh)["spec"]["cpu"] == {"guest": 3}
    with pytest.raises(Conflict) as e:
        store.update({**fresh, "spec": {"cpu": {"guest": 5}, "memory": {"guest": "1Gi"}}})
    assert e.value.code == 409 and "the object has been modified" in str(e.value)
    unconditional = {**fresh, "metadata": {k: v for k, v in fresh["metadata"].items() if k != "resourceVersion"}}
    unconditional["spec"] = {"cpu": {"guest": 5}, "memory": {"guest": "1Gi"}}
    assert store.update(unconditional)["spec"]["cpu"] == {"guest": 5}
    # A resourceVersion in a merge patch is a precondition.
    with pytest.raises(Conflict):
        store.patch(IT, "small", {"metadata": {"resourceVersion": current["metadata"]["resourceVersion"]},
                                  "spec": {"cpu": {"guest": 6}}}, namespace)


def test_old_api_versions_are_served_with_the_crds_warning(store, namespace):
    old = instancetype_obj("old", cpu=1, namespace=namespace, version="v1alpha1")
    created = store.create(old)
    assert created["apiVersion"] == f"{kinds.GROUP}/v1alpha1"
    assert store.last_warnings == [deprecation_warning("v1alpha1", IT)]
    assert store.get(IT, "old", namespace)["apiVersion"] == kinds.API_VERSION


def test_status_subresource(store, namespace):
    obj = vm("vm1", namespace=namespace, runStrategy="Halted", domain={"devices": {}}, status={"ready": True})
    created = store.create(obj)
    assert "status" not in created          # a create ignores the status of a kind with the subresource
    with_status = store.update({**created, "status": {"printableStatus": "Stopped"}}, subresource="status")
    assert with_status["status"] == {"printableStatus": "Stopped"}
    # A main-resource write keeps the stored status; the status subresource changes only status.
    changed = store.update({**with_status, "status": {"printableStatus": "Running"},
                            "spec": {**with_status["spec"], "runStrategy": "Always"}})
    assert changed["status"] == {"printableStatus": "Stopped"} and changed["spec"]["runStrategy"] == "Always"
    patched = store.patch("VirtualMachine", "vm1", {"status": {"ready": True}}, namespace, subresource="status")
    assert patched["status"] == {"printableStatus": "Stopped", "ready": True}
    with pytest.raises(BadRequest):
        store.patch("VirtualMachine", "vm1", {}, namespace, subresource="scale")


def test_errors_are_the_stores_with_the_api_servers_texts(kube, store, namespace):
    res = kinds.BY_KIND[IT]
    with pytest.raises(NotFound) as e:
        store.get(IT, "missing", namespace)
    assert str(e.value) == str(not_found(res, "missing")) and e.value.code == 404
    store.create(instancetype_obj("dup", namespace=namespace))
    with pytest.raises(AlreadyExists) as e:
        store.create(instancetype_obj("dup", namespace=namespace))
    assert str(e.value) == f'{res.qualified} "dup" already exists' and e.value.code == 409
    with pytest.raises(Invalid) as e:
        store.create(instancetype_obj("Bad_Name", namespace=namespace))
    assert e.value.code == 422 and e.value.causes and e.value.causes[0].field == "metadata.name"
    assert str(e.value).startswith('VirtualMachineInstancetype.instancetype.kubevirt.io "Bad_Name" is invalid: ')
    with pytest.raises(NotFound) as e:
        store.create(instancetype_obj("x", namespace="no-such-namespace"))
    assert str(e.value) == 'namespaces "no-such-namespace" not found'
    with pytest.raises(NotFound):
        store.get("Lease", "nope", namespace)
    alice = KubeStore(str(kube.kubeconfig_for("alice")))
    with pytest.raises(Forbidden) as e:
        alice.list_at(IT, namespace)
    assert e.value.code == 403 and 'User "alice" cannot list resource' in str(e.value)


def test_unreachable_or_unauthorised_cluster_is_one_line(kube, tmp_path):
    config = tmp_path / "kubeconfig"
    config.write_text(kube.kubeconfig.read_text().replace(kube.server, "https://127.0.0.1:1"))
    with pytest.raises(Unreachable) as e:
        KubeStore(str(config)).ping()
    assert str(e.value) == "cannot reach the Kubernetes API server at https://127.0.0.1:1: [Errno 111] Connection refused"
    stranger = tmp_path / "stranger"
    stranger.write_text(kube.kubeconfig.read_text().replace(kube.tokens["admin"], "not-a-token"))
    with pytest.raises(Unreachable) as e:
        KubeStore(str(stranger)).ping()
    assert str(e.value) == f"the Kubernetes API server at {kube.server} refused the credentials (401 Unauthorized)"
    with pytest.raises(Unreachable, match="kubeconfig: Configuration file .* not found"):
        KubeStore(str(tmp_path / "nope"))
    with pytest.raises(Unreachable, match="Context 'other' not found"):
        KubeStore(str(kube.kubeconfig), context="other")
    assert isinstance(e.value, StoreError)


@pytest.mark.parametrize("args, message", [
    (["--kubeconfig", "KC"], "error: cannot reach the Kubernetes API server at https://127.0.0.1:1: "
                             "[Errno 111] Connection refused"),
    (["--kubeconfig", "MISSING"], "error: kubeconfig: Configuration file MISSING not found"),
])
def test_serve_without_a_cluster_is_one_line_exit_1(kube, webhook_certs, tmp_path, args, message):
    config = tmp_path / "kubeconfig"
    config.write_text(kube.kubeconfig.read_text().replace(kube.server, "https://127.0.0.1:1"))
    args = [str(config) if a == "KC" else str(tmp_path / "nope") if a == "MISSING" else a for a in args]
    proc = subprocess.run([sys.executable, "-m", "instancetype", "serve", *args, "--secure-port", "0",
                           "--tls-cert-file", str(webhook_certs.cert), "--tls-private-key-file",
                           str(webhook_certs.key)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [message.replace("MISSING", str(tmp_path / "nope"))]


def test_serve_without_permission_to_list_is_one_line_exit_1(kube, installed, webhook_certs):
    proc = subprocess.run([sys.executable, "-m", "instancetype", "serve", "--kubeconfig",
                           str(kube.kubeconfig_for("alice")), "--secure-port", "0", "--sync-timeout", "3",
                           "--tls-cert-file", str(webhook_certs.cert), "--tls-private-key-file",
                           str(webhook_certs.key)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("error: the informer caches did not sync in 3s: ")
    assert 'is forbidden: User "alice" cannot list resource' in last


def test_delete_with_propagation_and_preconditions(kube, store, namespace):
    # A ControllerRevision owning another: a kind the garbage collector knows from its start (a
    # CRD registered moments ago is found at its next discovery resync, ~30 s later).
    owner = store.create(revision("owner", namespace))
    store.create(revision("owned", namespace, owner))
    with pytest.raises(Conflict):
        store.delete("ControllerRevision", "owner", namespace, uid="00000000-0000-0000-0000-000000000000")
    deleted = store.delete("ControllerRevision", "owner", namespace)
    assert deleted["metadata"]["name"] == "owner"
    # The garbage collector (kube-controller-manager) removes the dependent.
    eventually(lambda: not list(store.list("ControllerRevision", namespace)), 60, what="the owned revision to go")
    owner = store.create(revision("owner2", namespace))
    store.create(revision("kept", namespace, owner))
    store.delete("ControllerRevision", "owner2", namespace, propagation="Orphan",
                 resource_version=owner["metadata"]["resourceVersion"])
    eventually(lambda: not store.get("ControllerRevision", "kept", namespace)["metadata"].get("ownerReferences"),
               60, what="the orphaned revision to lose its owner")


def test_transaction_is_a_no_op_context(store, namespace):
    with store.transaction() as tx:
        assert tx is store
        tx.create(preference_obj("p", namespace=namespace))
    assert store.get(kinds.PREFERENCE, "p", namespace)


def test_changes_and_watch(store, namespace):
    since = store.resource_version(IT)
    store.create(instancetype_obj("a", namespace=namespace))
    store.patch(IT, "a", {"metadata": {"labels": {"x": "y"}}}, namespace)
    store.delete(IT, "a", namespace)
    events = list(store.changes(since, kind=IT, namespace=namespace))
    assert [(e.type, e.name) for e in events] == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    assert all(isinstance(e.resource_version, str) for e in events)
    with pytest.raises(BadRequest):
        list(store.changes(since))


def _recorder():
    events: list[tuple[str, str]] = []
    lock = threading.Lock()

    def rec(what):
        def handler(*objs):
            with lock:
                events.append((what, objs[-1]["metadata"]["name"]))
        return handler
    return events, {"on_add": rec("add"), "on_update": rec("update"), "on_delete": rec("delete")}


def test_informer_events_relist_on_410_and_restart(kube, store, namespace):
    store.create(instancetype_obj("before", namespace=namespace))
    events, handlers = _recorder()
    inf = Informer(store, IT, namespace, **handlers).start()
    try:
        assert inf.wait_for_sync(30) and inf.has_synced
        assert [o["metadata"]["name"] for o in inf.list()] == ["before"]
        store.create(instancetype_obj("during", namespace=namespace))
        store.patch(IT, "before", {"metadata": {"labels": {"v": "2"}}}, namespace)
        store.delete(IT, "during", namespace)
        eventually(lambda: events[-1:] == [("delete", "during")], 30, what="the informer's events")
        assert events == [("add", "before"), ("add", "during"), ("update", "before"), ("delete", "during")]
        assert inf.get("before", namespace)["metadata"]["labels"] == {"v": "2"}
        assert inf.get("before", "default") is None       # never looked up in another namespace
        # A watch from a version the API server no longer keeps: 410 Gone, and the informer lists
        # again (a change made meanwhile arrives as an event of the relist).
        lists = inf.lists
        store.create(instancetype_obj("gap", namespace=namespace))
        inf.reconnect("1")
        eventually(lambda: inf.lists == lists + 1, 30, what="a relist after 410 Gone")
        eventually(lambda: inf.get("gap", namespace), 30, what="the object made before the relist")
        assert ("add", "gap") in events
        # The API server goes away and comes back: the informer retries (bounded backoff) and
        # resumes from the last resourceVersion it saw.
        kube.restart_apiserver()
        store.create(instancetype_obj("after-restart", namespace=namespace))
        eventually(lambda: inf.get("after-restart", namespace), 60, what="an event after the restart")
    finally:
        inf.stop()
    assert not inf.running


def test_informer_caches_compactly_and_every_read_is_a_copy(store, namespace):
    store.create(instancetype_obj("c", namespace=namespace))
    assert store.get(IT, "c", namespace)["metadata"]["managedFields"]     # the API server keeps them
    inf = Informer(store, IT, namespace).start()
    try:
        assert inf.wait_for_sync(30)
        got = inf.get("c", namespace)
        assert "managedFields" not in got["metadata"] and got["metadata"]["uid"]   # no reader needs them
        got["spec"]["cpu"]["guest"] = 99                  # the reader's own copy
        assert inf.get("c", namespace)["spec"]["cpu"] == {"guest": 1}
        assert inf.list()[0] is not inf.list()[0] and inf.keys() == [(namespace, "c")]
        store.patch(IT, "c", {"metadata": {"labels": {"v": "2"}}}, namespace)
        eventually(lambda: (inf.get("c", namespace)["metadata"].get("labels") or {}).get("v") == "2", 30,
                   what="the change in the cache")
        assert "managedFields" not in inf.get("c", namespace)["metadata"]
        # An update from the cache (without managedFields) keeps the stored ones (Kubernetes' fieldmanager).
        cur = inf.get("c", namespace)
        cur["spec"]["cpu"]["guest"] = 2
        assert store.update(cur)["metadata"]["managedFields"]
    finally:
        inf.stop()


def test_cached_store_reads_from_memory_and_writes_to_the_api(kube, store, namespace):
    cached = CachedStore.start(store, (IT, "KubeVirt"))
    try:
        assert cached.wait_for_sync(30)
        cached.create(instancetype_obj("c1", namespace=namespace, metadata={"labels": {"k": "v"}}))
        eventually(lambda: cached.peek(IT, "c1", namespace), 30, what="the cache to see c1")
        assert cached.get(IT, "c1", namespace)["spec"]["cpu"] == {"guest": 1}
        assert [o["metadata"]["name"] for o in cached.list(IT, namespace, label_selector="k=v")] == ["c1"]
        assert cached.count(IT, namespace, label_selector="k!=v") == 0
        with pytest.raises(NotFound):
            cached.get(IT, "c1", "default")
        # A kind without an informer is read from the API server.
        store.create(revision("r1", namespace))
        assert cached.get("ControllerRevision", "r1", namespace)["revision"] == 1
        # install's KubeVirt object kubevirt/kubevirt holds the cluster settings (none: all defaults).
        assert cached.kubevirt_config() == {}
        gates = {"developerConfiguration": {"featureGates": ["X"]}}
        store.patch("KubeVirt", "kubevirt", {"spec": {"configuration": gates}}, "kubevirt")
        try:
            eventually(lambda: cached.kubevirt_config(), 30, what="the KubeVirt configuration in the cache")
            assert cached.kubevirt_config() == gates
        finally:
            store.patch("KubeVirt", "kubevirt", {"spec": {"configuration": None}}, "kubevirt")
    finally:
        cached.stop()


def test_an_instancetype_the_cache_has_not_seen_is_read_from_the_api(store, namespace):
    """pkg/instancetype/find: a miss in the informer is asked of the API server, so a VM admitted
    just after its instancetype is created finds it (a stopped informer stands for a late one)."""
    cached = CachedStore.start(store, (IT, "ControllerRevision"))
    try:
        assert cached.wait_for_sync(30)
        cached.informer(IT).stop()
        cached.informer("ControllerRevision").stop()
        store.create(instancetype_obj("late", namespace=namespace))
        store.create(revision("late-rev", namespace))
        assert cached.peek(IT, "late", namespace)["metadata"]["name"] == "late"
        assert cached.peek(IT, "late", "default") is None         # never across namespaces
        assert cached.peek(IT, "missing", namespace) is None
        # controllerRevisionFinder: a revision the informer has not seen is asked of the API too
        assert cached.peek("ControllerRevision", "late-rev", namespace)["metadata"]["name"] == "late-rev"
        assert cached.peek("ControllerRevision", "late-rev", "default") is None
    finally:
        cached.stop()


def test_flavor_objects_are_found_as_the_kind_they_stand_for(store, namespace):
    # Seed 002's objects stay in flavor.kubevirt.io on a cluster; a matcher finds them as v1beta1.
    created = store.create({"apiVersion": "flavor.kubevirt.io/v1alpha1", "kind": "VirtualMachineFlavor",
                            "metadata": {"name": "small", "namespace": namespace},
                            "spec": {"cpu": {"guest": 2}, "memory": {"guest": "128Mi"}}})
    found = get_type(store, IT, "small", namespace)
    assert (found["apiVersion"], found["kind"], found["spec"]["cpu"]) == (kinds.API_VERSION, IT, {"guest": 2})
    assert found["metadata"]["uid"] == created["metadata"]["uid"]
    with pytest.raises(NotFound, match='virtualmachineinstancetypes.instancetype.kubevirt.io "small" not found'):
        get_type(store, IT, "small", "default")       # never looked up in another namespace
    cached = CachedStore.start(store, (IT, *FLAVOR_INFORMER_KINDS))
    try:
        assert cached.wait_for_sync(30)
        eventually(lambda: cached.objects().lookup(IT, "small", namespace), 30, what="the flavor in the cache")
        assert cached.objects().lookup(IT, "small", namespace)["kind"] == IT
        assert cached.objects().lookup(IT, "small", "default") is None
        assert cached.objects().lookup(kinds.PREFERENCE, "small", namespace) is None
    finally:
        cached.stop()
    # A flavor kind the cluster does not serve (no CRD for it; here a version none serves) is
    # synced and empty rather than holding the controller's and serve's start back.
    inf = Informer(store, "flavor.kubevirt.io/v9/VirtualMachineFlavor", optional=True).start()
    try:
        assert inf.wait_for_sync(30) and inf.list() == []
    finally:
        inf.stop()
