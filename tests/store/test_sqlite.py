"""The SQLite store on real files: CRUD, selectors, merge patch, generation, GC, errors, feed."""
from __future__ import annotations

import tracemalloc
import uuid

import pytest
from tests import builders

from instancetype.errors import NotFoundError, StoreError
from instancetype.store.base import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    default_state_path,
    merge_patch,
    parse_label_selector,
)
from instancetype.store.sqlite import SqliteStore, open_store

CONFLICT = ('Operation cannot be fulfilled on virtualmachines.kubevirt.io "vm1": the object has been modified; '
            "please apply your changes to the latest version and try again")


def vm(name="vm1", namespace=None, labels=None, spec=None, **meta):
    """A VM as a user stores it: halted, empty template, unless `spec` replaces it."""
    if labels:
        meta["labels"] = labels
    if spec is None:
        return builders.vm(name, {}, namespace=namespace, metadata=meta, runStrategy="Halted")
    return builders.vm_object(name, spec, namespace=namespace, metadata=meta)


def instancetype():
    return builders.instancetype_obj("it1", cpu=1, memory="1Gi", kind="VirtualMachineClusterInstancetype")


@pytest.fixture
def store(tmp_path):
    s = SqliteStore(tmp_path / "state.db")
    yield s
    s.close()


# --- create / get ---------------------------------------------------------------------------------

def test_create_fills_system_metadata(store):
    out = store.create(vm())
    meta = out["metadata"]
    assert meta["namespace"] == "default"
    assert len(meta["uid"]) == 36
    uids = [store.create(vm(f"u{i}"))["metadata"]["uid"] for i in range(50)]
    for uid in [meta["uid"], *uids]:      # random UUIDs (version 4, RFC 4122), as uuid.uuid4() makes them
        parsed = uuid.UUID(uid)
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, uid)
    assert len(set(uids)) == 50
    assert meta["generation"] == 1
    assert int(meta["resourceVersion"]) > 0
    assert meta["creationTimestamp"].endswith("Z") and "T" in meta["creationTimestamp"]
    assert store.get("VirtualMachine", "vm1") == out
    assert store.get("VirtualMachine", "vm1", "default") == out


def test_create_does_not_touch_the_argument(store):
    given = vm()
    store.create(given)
    assert "uid" not in given["metadata"]


def test_cluster_scoped_kinds_drop_the_namespace(store):
    obj = instancetype()
    obj["metadata"]["namespace"] = "ignored"
    out = store.create(obj)
    assert "namespace" not in out["metadata"]
    assert store.get("VirtualMachineClusterInstancetype", "it1", "anything")["metadata"]["uid"] == out["metadata"]["uid"]


def test_controller_revisions_carry_no_generation(store):
    out = store.create({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "r"},
                        "data": {}, "revision": 0})
    assert "generation" not in out["metadata"]


def test_not_found_and_already_exists_texts(store):
    with pytest.raises(NotFound) as e:
        store.get("VirtualMachine", "x")
    assert str(e.value) == 'virtualmachines.kubevirt.io "x" not found'
    assert (e.value.code, e.value.reason) == (404, "NotFound")
    assert isinstance(e.value, NotFoundError) and isinstance(e.value, StoreError)
    with pytest.raises(NotFound, match=r'^controllerrevisions.apps "r" not found$'):
        store.get("ControllerRevision", "r")
    with pytest.raises(NotFound, match=r'^persistentvolumeclaims "p" not found$'):
        store.get("PersistentVolumeClaim", "p")
    store.create(vm("x"))
    with pytest.raises(AlreadyExists) as e:
        store.create(vm("x"))
    assert str(e.value) == 'virtualmachines.kubevirt.io "x" already exists'
    assert (e.value.code, e.value.reason) == (409, "AlreadyExists")
    assert e.value.status()["reason"] == "AlreadyExists"


def test_namespaces_must_exist_and_isolate(store):
    with pytest.raises(NotFound, match=r'^namespaces "ns1" not found$'):
        store.create(vm(namespace="ns1"))
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}})
    a = store.create(vm(namespace="ns1"))
    b = store.create(vm())
    assert a["metadata"]["uid"] != b["metadata"]["uid"]
    assert store.count("VirtualMachine") == 2
    assert store.count("VirtualMachine", "ns1") == 1
    assert [o["metadata"]["namespace"] for o in store.list("VirtualMachine")] == ["default", "ns1"]


def test_create_refusals(store):
    with pytest.raises(BadRequest, match="resourceVersion should not be set on objects to be created"):
        store.create(vm(resourceVersion="5"))
    with pytest.raises(Invalid, match=r"metadata.name: Required value"):
        store.create(vm(name=""))
    with pytest.raises(NotFound, match='no matches for kind "Gizmo"'):
        store.create({"kind": "Gizmo", "metadata": {"name": "g"}})
    with pytest.raises(BadRequest, match="cannot unmarshal number into Go struct field ObjectMeta.metadata.labels"):
        store.create(vm(labels={"version": 1}))
    with pytest.raises(BadRequest, match="Object 'Kind' is missing"):
        store.create({"metadata": {"name": "x"}})
    with pytest.raises(BadRequest, match="does not match the namespace sent on the request"):
        store.create(vm(namespace="default"), namespace="other")


def test_generate_name(store):
    obj = vm(name="")
    obj["metadata"]["generateName"] = "vm-"
    out = store.create(obj)
    assert out["metadata"]["name"].startswith("vm-") and len(out["metadata"]["name"]) == 8


# --- update / patch / generation / conflicts -------------------------------------------------------

def test_generation_moves_only_with_spec(store):
    out = store.create(vm())
    out["metadata"]["labels"] = {"a": "b"}
    out = store.update(out)
    assert out["metadata"]["generation"] == 1
    out = store.patch("VirtualMachine", "vm1", {"status": {"printableStatus": "Stopped"}}, subresource="status")
    assert out["metadata"]["generation"] == 1
    out = store.patch("VirtualMachine", "vm1", {"spec": {"runStrategy": "Always"}})
    assert out["metadata"]["generation"] == 2
    out["spec"]["runStrategy"] = "Halted"
    assert store.update(out)["metadata"]["generation"] == 3


def test_no_op_write_keeps_the_resource_version(store):
    out = store.create(vm())
    again = store.update(out)
    assert again["metadata"]["resourceVersion"] == out["metadata"]["resourceVersion"]
    assert store.patch("VirtualMachine", "vm1", {"spec": {"runStrategy": "Halted"}}) == out


def test_stale_resource_version_conflicts(store):
    first = store.create(vm())
    second = store.update({**first, "spec": {"runStrategy": "Always"}})
    with pytest.raises(Conflict) as e:
        store.update({**first, "spec": {"runStrategy": "Manual"}})
    assert str(e.value) == CONFLICT
    assert (e.value.code, e.value.reason) == (409, "Conflict")
    with pytest.raises(Conflict, match="the object has been modified"):
        store.patch("VirtualMachine", "vm1", {"metadata": {"resourceVersion": first["metadata"]["resourceVersion"]},
                                              "spec": {"runStrategy": "Manual"}})
    # Without a resourceVersion an update is unconditional.
    obj = vm(spec={"runStrategy": "Manual"})
    out = store.update(obj)
    assert out["spec"] == {"runStrategy": "Manual"}
    assert out["metadata"]["uid"] == second["metadata"]["uid"]


def test_update_keeps_system_metadata_and_status(store):
    out = store.create(vm())
    store.patch("VirtualMachine", "vm1", {"status": {"ready": True}}, subresource="status")
    given = vm(spec={"running": True}, uid="forged", creationTimestamp="1999-01-01T00:00:00Z", generation=99)
    given["status"] = {"ready": False}
    new = store.update(given)
    assert new["metadata"]["uid"] == out["metadata"]["uid"]
    assert new["metadata"]["creationTimestamp"] == out["metadata"]["creationTimestamp"]
    assert new["metadata"]["generation"] == 2
    assert new["status"] == {"ready": True}          # main resource writes never change status
    st = store.update({**new, "spec": {"ignored": 1}, "status": {"ready": False}}, subresource="status")
    assert st["spec"] == {"running": True} and st["status"] == {"ready": False}


def test_kinds_without_status_subresource_take_the_whole_object(store):
    store.create(instancetype())
    out = store.patch("VirtualMachineClusterInstancetype", "it1", {"spec": {"cpu": {"guest": 4}}})
    assert out["spec"] == {"cpu": {"guest": 4}, "memory": {"guest": "1Gi"}}
    assert out["metadata"]["generation"] == 2


def test_update_and_patch_missing_object(store):
    with pytest.raises(NotFound, match=r'^virtualmachines.kubevirt.io "vm1" not found$'):
        store.update(vm())
    with pytest.raises(NotFound, match=r'^virtualmachines.kubevirt.io "vm1" not found$'):
        store.patch("VirtualMachine", "vm1", {"spec": {}})


def test_merge_patch_rfc7386():
    target = {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}
    patch = {"a": "z", "c": {"f": None}, "l": [3], "n": {"x": None, "y": 1}}
    assert merge_patch(target, patch) == {"a": "z", "c": {"d": "e"}, "l": [3], "n": {"y": 1}}
    assert target == {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}
    assert merge_patch({"a": 1}, ["x"]) == ["x"]


def test_patch_removes_labels(store):
    store.create(vm(labels={"a": "1", "b": "2"}))
    store.patch("VirtualMachine", "vm1", {"metadata": {"labels": {"a": None}}})
    assert store.count("VirtualMachine", label_selector="a") == 0
    assert store.count("VirtualMachine", label_selector="b=2") == 1


# --- selectors -------------------------------------------------------------------------------------

def test_label_and_field_selectors(store):
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    store.create(vm("a", labels={"app": "web", "tier": "1"}))
    store.create(vm("b", labels={"app": "db", "tier": "2"}))
    store.create(vm("c", labels={"app": "web"}, namespace="other"))
    store.create(vm("d"))

    def names(**kw):
        return [o["metadata"]["name"] for o in store.list("VirtualMachine", **kw)]

    assert names(label_selector="app=web") == ["a", "c"]
    assert names(label_selector="app==web,tier") == ["a"]
    assert names(label_selector="app!=web") == ["b", "d"]
    assert names(label_selector="app in (db, web),!tier") == ["c"]
    assert names(label_selector="app notin (web)") == ["b", "d"]
    assert names(label_selector="tier>1") == ["b"]
    assert names(label_selector="tier<2") == ["a"]
    assert names(label_selector={"app": "db"}) == ["b"]
    assert names(field_selector="metadata.name=b") == ["b"]
    assert names(field_selector="metadata.namespace!=default") == ["c"]
    assert names(field_selector="spec.runStrategy=Halted,metadata.name!=a") == ["b", "d", "c"]
    assert names(namespace="other") == ["c"]
    assert store.count("VirtualMachine", label_selector="app=web", field_selector="metadata.namespace=default") == 1
    with pytest.raises(BadRequest, match="unable to parse requirement"):
        store.list("VirtualMachine", label_selector="app=web=x")
    assert parse_label_selector("a in (x,y), b") == parse_label_selector("a in (x, y),b")


@pytest.mark.parametrize("label_driven_max", [0, 2, 500])
def test_label_selectors_read_from_the_label_index_or_the_kinds_alike(store, monkeypatch, label_driven_max):
    """A `key=value` few objects carry drives the query from the label index (`_where`); one many
    carry, from the kind's. Same answers either way: other kinds and namespaces with the label,
    several requirements, negations, `in`, pages (a page of 3 rows here), counts."""
    from instancetype.store import sqlite

    monkeypatch.setattr(sqlite, "LABEL_DRIVEN_MAX", label_driven_max)
    monkeypatch.setattr(sqlite, "_CHUNK", 3)
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    for i in range(8):
        store.create(vm(f"vm{i}", labels={"app": "web" if i % 2 else "db", "n": str(i)}, namespace="other" if i > 5 else None))
    store.create({**instancetype(), "metadata": {"name": "it-web", "labels": {"app": "web"}}})

    def names(selector, namespace=None):
        found = [o["metadata"]["name"] for o in store.list("VirtualMachine", namespace, label_selector=selector)]
        assert store.count("VirtualMachine", namespace, label_selector=selector) == len(found)
        return found

    assert names("app=web") == ["vm1", "vm3", "vm5", "vm7"]
    assert names("app=web", "other") == ["vm7"]
    assert names("app in (web, db),n!=3") == ["vm0", "vm1", "vm2", "vm4", "vm5", "vm6", "vm7"]
    assert names("app=db,n in (2, 4, 6)") == ["vm2", "vm4", "vm6"]
    assert names("app=web,n>4") == ["vm5", "vm7"]
    assert names("app=web,!n") == []
    assert names("app=none") == []
    assert names("n=99,app=web") == []      # the first no object carries: nothing read
    with pytest.raises(BadRequest, match="invalid selector"):
        store.list("VirtualMachine", label_selector="app=none", field_selector="nonsense")
    assert [o["metadata"]["name"] for o in store.list("VirtualMachineClusterInstancetype",
                                                       label_selector="app=web")] == ["it-web"]


def test_listing_ten_thousand_is_ordered_and_paged(store):
    # (speed: bench/lifecycle.py; here only what a listing returns and that memory stays flat)
    with store.transaction() as tx:
        for i in range(10_000):
            tx.create(vm(f"vm-{i:05d}", labels={"parity": str(i % 2)}))
    names = [o["metadata"]["name"] for o in store.list("VirtualMachine")]
    assert len(names) == 10_000 and names == sorted(names)
    assert store.count("VirtualMachine", label_selector="parity=1") == 5_000
    tracemalloc.start()
    try:
        seen = sum(1 for _ in store.list("VirtualMachine", label_selector="parity in (0,1)"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seen == 10_000
    assert peak < 4_000_000, peak                   # one page of rows at a time, not 10,000 objects


def test_listing_one_namespace_pages_by_name_past_the_other_namespaces(store):
    with store.transaction() as tx:
        for ns in ("a", "b", "c"):
            tx.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for i in range(1_200):           # more than two pages of rows
            tx.create(vm(f"vm-{i:05d}", namespace="b"))
        for ns in ("a", "c"):
            for i in range(3):
                tx.create(vm(f"vm-{i:05d}", namespace=ns))
    names = [o["metadata"]["name"] for o in store.list("VirtualMachine", "b")]
    assert names == [f"vm-{i:05d}" for i in range(1_200)]
    every = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.list("VirtualMachine")]
    assert len(every) == 1_206 and every == sorted(every)


# --- delete and garbage collection ----------------------------------------------------------------

def revision(name, owner, *others):
    refs = [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": o["metadata"]["name"],
             "uid": o["metadata"]["uid"], "controller": i == 0} for i, o in enumerate((owner, *others))]
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": name, "ownerReferences": refs}, "data": {}, "revision": 0}


def test_delete_cascades_to_dependents(store):
    owner = store.create(vm("vm-cirros-csmall"))
    store.create(revision("r1", owner))
    chained = store.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                            "metadata": {"name": "p", "ownerReferences": [
                                {"kind": "ControllerRevision", "name": "r1",
                                 "uid": store.get("ControllerRevision", "r1")["metadata"]["uid"]}]}})
    gone = store.delete("VirtualMachine", "vm-cirros-csmall")
    assert gone["metadata"]["uid"] == owner["metadata"]["uid"]
    with pytest.raises(NotFound, match=r'^controllerrevisions.apps "r1" not found$'):
        store.get("ControllerRevision", "r1")
    with pytest.raises(NotFound):
        store.get("PersistentVolumeClaim", chained["metadata"]["name"])
    with pytest.raises(NotFound, match=r'^virtualmachines.kubevirt.io "vm-cirros-csmall" not found$'):
        store.delete("VirtualMachine", "vm-cirros-csmall")


def test_dependent_with_a_living_owner_survives(store):
    a, b = store.create(vm("a")), store.create(vm("b"))
    store.create(revision("shared", a, b))
    store.delete("VirtualMachine", "a")
    left = store.get("ControllerRevision", "shared")
    assert [r["name"] for r in left["metadata"]["ownerReferences"]] == ["b"]
    store.delete("VirtualMachine", "b")
    assert store.count("ControllerRevision") == 0


def test_orphan_propagation_keeps_dependents(store):
    a = store.create(vm("a"))
    store.create(revision("r", a))
    store.delete("VirtualMachine", "a", propagation="Orphan")
    assert "ownerReferences" not in store.get("ControllerRevision", "r")["metadata"]


def test_delete_preconditions(store):
    out = store.create(vm())
    with pytest.raises(Conflict, match="Precondition failed: UID in precondition: nope"):
        store.delete("VirtualMachine", "vm1", uid="nope")
    with pytest.raises(Conflict, match="does not match the ResourceVersion in record"):
        store.delete("VirtualMachine", "vm1", resource_version="1")
    store.delete("VirtualMachine", "vm1", resource_version=out["metadata"]["resourceVersion"])


def test_deleting_a_namespace_deletes_its_objects(store):
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    store.create(vm(namespace="ns"))
    store.create(vm())
    store.delete("Namespace", "ns")
    assert [o["metadata"]["namespace"] for o in store.list("VirtualMachine")] == ["default"]
    with pytest.raises(Forbidden, match='namespaces "default" is forbidden'):
        store.delete("Namespace", "default")


# --- transactions and the change feed --------------------------------------------------------------

def test_transaction_rolls_back_everything(store):
    with pytest.raises(AlreadyExists):
        with store.transaction() as tx:
            tx.create(vm("a"))
            tx.create(vm("a"))
    assert store.count("VirtualMachine") == 0


def test_nested_transaction_is_a_savepoint(store):
    with store.transaction() as tx:
        tx.create(vm("kept"))
        with pytest.raises(Conflict):
            with tx.transaction():
                tx.create(vm("dropped"))
                tx.update(vm("kept", resourceVersion="1"))
    assert [o["metadata"]["name"] for o in store.list("VirtualMachine")] == ["kept"]


def test_changes_and_watch(store):
    start = store.resource_version()
    a = store.create(vm("a"))
    store.patch("VirtualMachine", "a", {"spec": {"running": True}})
    store.delete("VirtualMachine", "a")
    events = list(store.changes(start))
    assert [e.type for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    assert [e.resource_version for e in events] == sorted(e.resource_version for e in events)
    assert events[0].object is None                   # gone now
    assert events[2].object["metadata"]["uid"] == a["metadata"]["uid"]
    assert events[-1].resource_version == store.resource_version()
    assert list(store.changes(start, kind="Namespace")) == []
    watched = list(store.watch(since=start, timeout=0.05))
    assert [e.type for e in watched] == ["ADDED", "MODIFIED", "DELETED"]


def test_state_survives_reopening(tmp_path):
    with SqliteStore(tmp_path / "s.db") as s:
        s.create(vm())
    with open_store(tmp_path / "s.db") as s:
        assert s.get("VirtualMachine", "vm1")["metadata"]["generation"] == 1
        assert s.count("Namespace") == 1


def test_default_state_path(monkeypatch, tmp_path):
    monkeypatch.setenv("INSTANCETYPE_STATE", str(tmp_path / "env.db"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_state_path("/given.db").as_posix() == "/given.db"
    assert default_state_path() == tmp_path / "env.db"
    monkeypatch.delenv("INSTANCETYPE_STATE")
    assert default_state_path() == tmp_path / "xdg" / "instancetype" / "state.db"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_state_path() == tmp_path / "home" / ".local" / "share" / "instancetype" / "state.db"
    with open_store() as s:                         # the directory is made on first use
        assert s.path.exists()


def test_watch_sleeps_on_the_file_until_another_process_writes(tmp_path, monkeypatch):
    """The embedded change feed is followed without polling: between changes the watcher waits on
    the kernel (inotify) with no timeout, and reads the table again only after the file was written."""
    import threading

    from instancetype.store import file_events

    path = tmp_path / "s.db"
    SqliteStore(path).close()
    waits: list = []
    waiting = threading.Event()
    real_wait = file_events.FileEvents.wait

    def wait(self, timeout):
        waits.append(timeout)
        waiting.set()
        return real_wait(self, timeout)

    monkeypatch.setattr(file_events.FileEvents, "wait", wait)
    got: list = []

    def follow():
        with SqliteStore(path) as s:
            for ev in s.watch("VirtualMachine"):
                got.append(ev)
                return

    t = threading.Thread(target=follow)
    t.start()
    assert waiting.wait(60)
    with SqliteStore(path) as writer:
        writer.create(vm("w"))
    t.join(60)
    assert not t.is_alive()
    assert [(e.type, e.name) for e in got] == [("ADDED", "w")]
    # Every wait has no timer: the watcher wakes only when the file or its WAL is written (a commit
    # is several writes, so a few wake-ups may find nothing new yet).
    assert waits and set(waits) == {None}
