"""The embedded store's nodes kept by the scheduler cache (`NodeUsage.nodes`): read once and then
followed through the change feed, not listed and decoded at every placement; a node written by
anyone (this cluster, another handle on the file) is seen at the next placement, and a rolled-back
write never stays in what is kept."""
from __future__ import annotations

import pytest

from instancetype.controller import Cluster
from instancetype.controller.node_usage import NodeUsage
from instancetype.controller.nodes import DEFAULT_NODE_NAME
from instancetype.store.sqlite import SqliteStore
from tests import builders

NO_SCHEDULE = {"key": "maintenance", "value": "true", "effect": "NoSchedule"}


def _tainted(node: dict) -> dict:
    node = {**node, "spec": {**(node.get("spec") or {}), "taints": [NO_SCHEDULE]}}
    node["metadata"] = {k: v for k, v in node["metadata"].items() if k != "resourceVersion"}
    return node


def _names(nodes: list[dict]) -> dict[str, list]:
    return {n["metadata"]["name"]: (n.get("spec") or {}).get("taints") or [] for n in nodes}


@pytest.fixture
def cluster(tmp_path):
    with Cluster.open(str(tmp_path / "state.db"), catalog=False) as c:
        c.apply(builders.instancetype_obj("csmall"))
        c.apply(builders.preference_obj("cirros"))
        c.apply(builders.csmall_vm("vm0", "Always"))        # the first placement reads the nodes
        yield c


def _phase(c: Cluster, name: str) -> tuple[str, str | None]:
    status = c.get("VirtualMachineInstance", name)["status"]
    return status["phase"], status.get("nodeName")


def test_a_placement_reads_no_node_once_they_are_kept(cluster):
    store = cluster.store
    assert isinstance(store, SqliteStore)
    seen: list[str] = []
    store._db.set_trace_callback(seen.append)
    try:
        cluster.apply(builders.csmall_vm("vm1", "Always"))
    finally:
        store._db.set_trace_callback(None)
    assert _phase(cluster, "vm1") == ("Running", DEFAULT_NODE_NAME)
    assert any("FROM changes" in s and "'Node'" in s for s in seen)          # the feed was asked
    assert not [s for s in seen if "FROM objects" in s and "'Node'" in s]    # no node was read


def test_a_node_written_by_this_cluster_is_seen_at_the_next_placement(cluster):
    cluster.apply(_tainted(cluster.get("Node", DEFAULT_NODE_NAME)))
    cluster.apply(builders.csmall_vm("vm1", "Always"))
    assert _phase(cluster, "vm1") == ("Scheduling", None)
    cluster.delete("Node", DEFAULT_NODE_NAME)
    assert _names(cluster.node_usage.nodes(cluster.store)) == {}


def test_a_node_written_through_another_handle_is_seen_at_the_next_placement(cluster):
    with SqliteStore(cluster.store.path) as other:
        other.update(_tainted(other.get("Node", DEFAULT_NODE_NAME)))
    cluster.apply(builders.csmall_vm("vm1", "Always"))
    assert _phase(cluster, "vm1") == ("Scheduling", None)
    with SqliteStore(cluster.store.path) as other:
        node = other.get("Node", DEFAULT_NODE_NAME)
        other.update({**node, "spec": {}})
    cluster.apply(builders.csmall_vm("vm2", "Always"))
    assert _phase(cluster, "vm2") == ("Running", DEFAULT_NODE_NAME)


@pytest.mark.parametrize("depth", ["transaction", "savepoint"])
def test_a_node_read_in_a_write_rolled_back_is_not_kept(cluster, depth):
    usage: NodeUsage = cluster.node_usage
    store = cluster.store

    def taint_and_read(tx) -> None:
        tx.update(_tainted(tx.get("Node", DEFAULT_NODE_NAME)))
        assert _names(usage.nodes(tx)) == {DEFAULT_NODE_NAME: [NO_SCHEDULE]}
        raise RuntimeError("undone")

    with pytest.raises(RuntimeError):
        if depth == "transaction":
            with store.transaction() as tx:
                taint_and_read(tx)
        else:
            with store.transaction() as outer, outer.transaction() as tx:
                taint_and_read(tx)
    # The rolled-back write's resourceVersion handed out again, to another write of the same node.
    node = store.get("Node", DEFAULT_NODE_NAME)
    store.update({**node, "metadata": {**node["metadata"], "labels": {**node["metadata"]["labels"], "x": "y"}}})
    kept = usage.nodes(store)
    assert _names(kept) == {DEFAULT_NODE_NAME: []}
    assert kept[0]["metadata"]["labels"]["x"] == "y"
    cluster.apply(builders.csmall_vm("vm1", "Always"))
    assert _phase(cluster, "vm1") == ("Running", DEFAULT_NODE_NAME)


# --- the KubeVirt object, kept by the Cluster for its settings ------------------------------------

def _opt_in(store, on: bool) -> None:
    from instancetype.engine.shared_revisions import ANNOTATION_SHARED_REVISIONS

    kv = store.get("KubeVirt", "kubevirt", "kubevirt")
    kv["metadata"]["annotations"] = {ANNOTATION_SHARED_REVISIONS: "true" if on else "false"}
    store.update(kv)


def _shared_pins(c: Cluster, name: str) -> bool:
    from instancetype.engine.shared_revisions import is_shared_name

    spec = c.get("VirtualMachine", name)["spec"]
    return all(is_shared_name(spec[side]["revisionName"]) for side in ("instancetype", "preference"))


def test_a_kubevirt_object_written_through_another_handle_is_seen_at_the_next_write(cluster):
    assert not _shared_pins(cluster, "vm0")
    with SqliteStore(cluster.store.path) as other:
        _opt_in(other, True)
    cluster.apply(builders.csmall_vm("vm1", "Always"))
    assert _shared_pins(cluster, "vm1")
    _opt_in(cluster.store, False)       # through the store, not the Cluster: the feed still tells
    cluster.apply(builders.csmall_vm("vm2", "Always"))
    assert not _shared_pins(cluster, "vm2")


def test_each_write_gets_its_own_copy_of_the_settings(cluster):
    with cluster.store.transaction() as tx:
        first, second = cluster._settings(tx), cluster._settings(tx)
    assert first == second and first.config is not second.config
    assert first.shared_revisions is False
