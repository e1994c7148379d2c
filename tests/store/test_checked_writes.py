"""What the Python API receives is walked for JSON once; the writes it leads to are not walked again,
and every other write to the store still is (issue 24 item 10: a start made 8 walks)."""
from __future__ import annotations

import pytest
from tests.builders import instancetype_obj, vm

from instancetype.controller import Cluster
from instancetype.store import base
from instancetype.store.base import BadRequest


@pytest.fixture
def walks(monkeypatch):
    """The objects `store.base.check_json` walks, in order (the walk itself still runs)."""
    seen: list = []
    check = base.check_json

    def counting(obj):
        seen.append(obj)
        check(obj)

    monkeypatch.setattr(base, "check_json", counting)
    return seen


def _started_vm(name: str) -> dict:
    return vm(name, namespace="default", instancetype={"kind": "VirtualMachineClusterInstancetype", "name": "small"},
              domain={"devices": {}}, runStrategy="Always")


def test_a_vm_start_walks_the_applied_vm_once(tmp_path, walks):
    with Cluster.open(str(tmp_path / "state.db")) as c:
        c.apply(instancetype_obj("small", kind="VirtualMachineClusterInstancetype"))
        walks.clear()
        c.apply(_started_vm("vm1"))
        assert len(walks) == 1 and walks[0]["metadata"]["name"] == "vm1"
        # ... while the start wrote the VM, its revisions, its VMI and its status
        assert c.store.count("ControllerRevision") >= 2 and c.store.count("VirtualMachineInstance") == 1
        assert c.get("VirtualMachine", "vm1")["status"]["printableStatus"]


def test_writes_outside_the_python_api_are_walked(tmp_path, walks):
    bad = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"}, "spec": {"k": b"bytes"}}
    with Cluster.open(str(tmp_path / "state.db")) as c:
        c.apply(_started_vm("vm1"))
        assert not c.store.json_checked          # the block ended with the write
        with pytest.raises(BadRequest, match="a bytes value is not JSON"):
            c.apply({**_started_vm("vm2"), "spec": {"runStrategy": b"Always"}})
        assert not c.store.json_checked          # ... and with a refused one
        walks.clear()
        with pytest.raises(BadRequest, match="spec.k: a bytes value is not JSON"):
            c.store.create(bad)
        ns = c.store.get("Namespace", "default")
        with pytest.raises(BadRequest, match="a bytes value is not JSON"):
            c.store.update({**ns, "metadata": {**ns["metadata"], "labels": {"a": "b"}}, "spec": b"x"})
        with pytest.raises(BadRequest, match="a bytes value is not JSON"):
            c.store.patch("Namespace", "default", {"spec": {"x": b"y"}})
        assert len(walks) == 3


def test_the_callers_block_nests_and_skips_only_the_walk(tmp_path, walks):
    with Cluster.open(str(tmp_path / "state.db")) as c:
        store = c.store
        walks.clear()
        with store.transaction() as tx, tx.json_checked_by_caller():
            with tx.json_checked_by_caller():
                tx.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "one"}, "spec": {}})
            assert tx.json_checked
            # names, kinds and metadata are still the API server's to check
            with pytest.raises(BadRequest, match="ObjectMeta.metadata.name of type string"):
                tx.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": 5}})
            with pytest.raises(base.Invalid, match="metadata.name"):
                tx.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "Not_A_Name"}})
        assert not store.json_checked and walks == []
        assert store.get("PersistentVolumeClaim", "one")["spec"] == {}
