"""The embedded store's scheduler cache (`controller/node_usage.py`) kept from the change feed
without its objects: the VMIs the controller itself created are known at once (`created`), the
rest read one by one, and what it holds after a batch is what reading every VMI again gives."""
from __future__ import annotations

from instancetype.controller import Cluster
from instancetype.controller.node_usage import NodeUsage
from instancetype.store.sqlite import SqliteStore
from tests import builders


def _rebuilt(store) -> NodeUsage:
    usage = NodeUsage()
    usage.sync(store)          # unanchored: every VMI read
    return usage


def _state(usage: NodeUsage) -> tuple:
    return (dict(usage.placed), dict(usage.pending),
            {node: ({k: v for k, v in u.requested.items() if v}, u.pods) for node, u in usage.by_node.items() if u.pods})


def test_a_batch_placed_and_waiting_is_what_a_full_read_finds(tmp_path):
    with Cluster.open(str(tmp_path / "state.db"), catalog=False) as c:
        c.apply(builders.instancetype_obj("csmall", memory="8Gi"))
        c.apply(builders.preference_obj("cirros"))
        # More VMs than the default node holds: some placed, the rest waiting for a node.
        results = c.apply_all([builders.csmall_vm(f"vm{i}") for i in range(40)])
        assert not [r for r in results if isinstance(r, Exception)]
        usage = c.node_usage
        with c.store.transaction() as tx:
            usage.sync(tx)      # the feed since the last placement (the last VMIs' events)
        placed, pending = len(usage.placed), len(usage.pending)
        assert placed and pending and placed + pending == 40
        assert all(uid for _, uid, _ in usage.placed.values())      # each placement knows its VMI
        assert _state(usage) == _state(_rebuilt(c.store))
        # A VMI deleted: the feed's DELETED event (no object read) frees its node's share.
        gone = next(iter(usage.placed))
        c.delete("VirtualMachineInstance", gone[1], gone[0])
        with c.store.transaction() as tx:
            usage.sync(tx)
        assert _state(usage) == _state(_rebuilt(c.store))


def test_the_follow_reads_no_vmi_the_controller_created(tmp_path):
    with Cluster.open(str(tmp_path / "state.db"), catalog=False) as c:
        c.apply(builders.instancetype_obj("csmall"))
        c.apply(builders.preference_obj("cirros"))
        c.apply(builders.csmall_vm("vm0"))
        store = c.store
        assert isinstance(store, SqliteStore)
        seen: list[str] = []
        store._db.set_trace_callback(seen.append)
        try:
            c.apply(builders.csmall_vm("vm1"))
            with store.transaction() as tx:
                c.node_usage.sync(tx)
        finally:
            store._db.set_trace_callback(None)
    vmi_reads = [s for s in seen if "VirtualMachineInstance" in s and (
        "LEFT JOIN objects" in s or ("FROM objects" in s and "'vm0'" in s))]
    assert any("FROM changes" in s and "VirtualMachineInstance" in s for s in seen)     # the feed was read
    assert not vmi_reads
