"""The embedded store keeps finalizers and deletionTimestamp as an API server does: a delete
marks an object that finalizers hold, the write that removes the last one removes it, a marked
object takes no new finalizer, and the propagation policies reach dependents as the garbage
collector does (store/finalizers.py)."""
from __future__ import annotations

import pytest
from tests import builders

from instancetype.store.base import Invalid, NotFound
from instancetype.store.sqlite import SqliteStore

CUSTOM = "example.com/hold"


@pytest.fixture
def store(tmp_path):
    s = SqliteStore(tmp_path / "state.db")
    yield s
    s.close()


def vm(name="vm1", finalizers=None):
    meta = {"finalizers": list(finalizers)} if finalizers else None
    return builders.vm(name, {}, namespace=None, metadata=meta, runStrategy="Halted")


def revision(name, owner, finalizers=None):
    meta = {"name": name, "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                                              "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
                                              "controller": True, "blockOwnerDeletion": True}]}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": meta, "data": {}, "revision": 0}


def release(store, kind, name, *keep):
    obj = store.get(kind, name)
    obj["metadata"]["finalizers"] = list(keep)
    return store.update(obj)


def test_a_delete_marks_an_object_its_finalizers_hold(store):
    store.create(vm(finalizers=[CUSTOM]))
    since = store.resource_version()
    marked = store.delete("VirtualMachine", "vm1", grace_period=30)
    meta = marked["metadata"]
    assert meta["deletionTimestamp"] and meta["deletionGracePeriodSeconds"] == 0 and meta["finalizers"] == [CUSTOM]
    assert store.get("VirtualMachine", "vm1") == marked
    assert [e.type for e in store.changes(since)] == ["MODIFIED"]
    # deleted again: nothing changes
    assert store.delete("VirtualMachine", "vm1") == marked


def test_the_write_removing_the_last_finalizer_removes_the_object(store):
    owner = store.create(vm(finalizers=[CUSTOM, "other/x"]))
    store.create(revision("r1", owner))
    store.delete("VirtualMachine", "vm1")
    kept = release(store, "VirtualMachine", "vm1", "other/x")
    assert kept["metadata"]["finalizers"] == ["other/x"] and kept["metadata"]["deletionTimestamp"]
    assert store.get("ControllerRevision", "r1")         # collected only once the owner is gone
    since = store.resource_version()
    release(store, "VirtualMachine", "vm1")
    with pytest.raises(NotFound):
        store.get("VirtualMachine", "vm1")
    assert store.count("ControllerRevision") == 0
    assert [(e.type, e.kind) for e in store.changes(since)] == [("DELETED", "VirtualMachine"),
                                                                 ("DELETED", "ControllerRevision")]


def test_a_marked_object_takes_no_new_finalizer_and_keeps_its_deletion_fields(store):
    store.create(vm(finalizers=[CUSTOM]))
    marked = store.delete("VirtualMachine", "vm1")
    changed = store.get("VirtualMachine", "vm1")
    changed["metadata"]["finalizers"] = [CUSTOM, "new/one"]
    with pytest.raises(Invalid, match=r'^VirtualMachine.kubevirt.io "vm1" is invalid: metadata.finalizers: Forbidden: '
                                      r'no new finalizers can be added if the object is being deleted, found new '
                                      r'finalizers \[\]string\{"new/one"\}$'):
        store.update(changed)
    changed = store.get("VirtualMachine", "vm1")
    changed["metadata"]["deletionTimestamp"] = None
    changed["metadata"]["labels"] = {"a": "b"}
    out = store.update(changed)
    assert out["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]


def test_create_and_update_do_not_set_a_deletion_timestamp(store):
    obj = vm()
    obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    created = store.create(obj)
    assert "deletionTimestamp" not in created["metadata"]
    created["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert "deletionTimestamp" not in store.update(created)["metadata"]


def test_background_marks_a_dependent_its_finalizers_hold(store):
    owner = store.create(vm())
    store.create(revision("r1", owner, finalizers=[CUSTOM]))
    store.delete("VirtualMachine", "vm1")
    with pytest.raises(NotFound):
        store.get("VirtualMachine", "vm1")
    assert store.get("ControllerRevision", "r1")["metadata"]["deletionTimestamp"]


def test_foreground_waits_for_the_dependents(store):
    owner = store.create(vm())
    store.create(revision("r1", owner, finalizers=[CUSTOM]))
    store.create(revision("r2", owner))
    marked = store.delete("VirtualMachine", "vm1", propagation="Foreground")
    assert marked["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert store.get("ControllerRevision", "r1")["metadata"]["deletionTimestamp"]
    with pytest.raises(NotFound):
        store.get("ControllerRevision", "r2")
    release(store, "ControllerRevision", "r1")
    with pytest.raises(NotFound):
        store.get("VirtualMachine", "vm1")


def test_foreground_keeps_the_owner_finalizers(store):
    owner = store.create(vm(finalizers=[CUSTOM]))
    store.create(revision("r1", owner))
    marked = store.delete("VirtualMachine", "vm1", propagation="Foreground")
    assert marked["metadata"]["finalizers"] == [CUSTOM]        # no dependent left to wait for
    assert store.count("ControllerRevision") == 0


def test_orphan_keeps_the_dependents_of_a_marked_owner(store):
    owner = store.create(vm(finalizers=[CUSTOM]))
    store.create(revision("r1", owner))
    store.delete("VirtualMachine", "vm1", propagation="Orphan")
    assert "ownerReferences" not in store.get("ControllerRevision", "r1")["metadata"]
    assert store.get("VirtualMachine", "vm1")["metadata"]["finalizers"] == [CUSTOM]
    release(store, "VirtualMachine", "vm1")
    assert store.get("ControllerRevision", "r1")
