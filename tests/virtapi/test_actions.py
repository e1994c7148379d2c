"""The subresource actions on a store other than the embedded one (an API server's, here the
embedded store behind a wrapper that plays a concurrent writer): the run strategy change is the
request and the controller watching the store does the rest; a resourceVersion conflict with
another writer is retried from a fresh read, a rule's conflict is not."""
from __future__ import annotations

from contextlib import nullcontext

import pytest

from instancetype.controller import Cluster
from instancetype.controller import vm as vm_verbs
from instancetype.store.base import Conflict, Store
from instancetype.webhook.virtapi.actions import vm_action
from tests import builders


class RacingStore(Store):
    """Every call goes to `base`; before each of the first `races` VM updates, another writer
    changes that VM's status first, so the update's resourceVersion is stale (a real Conflict)."""

    def __init__(self, base, races: int):
        self.base, self.races, self.updates = base, races, 0

    def update(self, obj, *, subresource=None):
        if obj.get("kind") == "VirtualMachine" and subresource is None and self.races > 0:
            self.races -= 1
            meta = obj["metadata"]
            current = self.base.get("VirtualMachine", meta["name"], meta.get("namespace"))
            current["status"] = {**(current.get("status") or {}), "printableStatus": f"Racing{self.races}"}
            self.base.update(current, subresource="status")
        self.updates += 1
        return self.base.update(obj, subresource=subresource)

    def __getattribute__(self, name):
        if name in ("get", "list", "count", "create", "patch", "delete", "changes", "resource_version"):
            return getattr(object.__getattribute__(self, "base"), name)
        return object.__getattribute__(self, name)

    def transaction(self):
        """As an API server's store: no multi-object transactions, each write on its own."""
        return nullcontext(self)

    # the rest of the interface, served by `base` through __getattribute__ above
    get = list = count = create = patch = delete = changes = resource_version = None


@pytest.fixture
def cluster(tmp_path):
    with Cluster.open(str(tmp_path / "state.db")) as c:
        c.apply(builders.vm("vm1", namespace=None, runStrategy="Halted", domain={"devices": {}}), namespace="default")
        yield c


def test_start_is_the_run_strategy_change_retried_past_another_writer(cluster):
    store = RacingStore(cluster.store, races=2)
    vm_action(store, "start", "default", "vm1", b"", vm_verbs)
    vm = cluster.get("VirtualMachine", "vm1", "default")
    assert vm["spec"]["runStrategy"] == "Always"
    assert vm["status"]["printableStatus"] == "Racing0"        # the other writer's status is kept
    # the VMI is the controller's to make on such a store
    assert cluster.store.count("VirtualMachineInstance", "default") == 0


def test_a_writer_that_never_stops_racing_ends_in_conflict(cluster):
    store = RacingStore(cluster.store, races=100)
    with pytest.raises(Conflict, match="the object has been modified"):
        vm_action(store, "start", "default", "vm1", b"", vm_verbs)
    assert cluster.get("VirtualMachine", "vm1", "default")["spec"]["runStrategy"] == "Halted"


def test_a_rules_conflict_is_answered_at_once(cluster):
    cluster.start("vm1", "default")
    store = RacingStore(cluster.store, races=0)
    with pytest.raises(Conflict, match="VM is already running"):
        vm_action(store, "start", "default", "vm1", b"", vm_verbs)
    assert store.updates == 0


def test_a_manual_start_is_a_request_the_controller_carries_out(tmp_path):
    """virt-api's part of a Manual VM's start is one status write (a Start request on
    status.stateChangeRequests); the VMI is the watching controller's to create: virt-api
    creating it raced that controller on a real API server."""
    with Cluster.open(str(tmp_path / "state.db")) as c:
        c.apply(builders.vm("vm1", namespace=None, runStrategy="Manual", domain={"devices": {}}), namespace="default")
        store = RacingStore(c.store, races=0)
        vm_action(store, "start", "default", "vm1", b"", vm_verbs)
        assert c.store.count("VirtualMachineInstance", "default") == 0
        status = c.get("VirtualMachine", "vm1", "default")["status"]
        assert status["stateChangeRequests"] == [{"action": "Start"}]
        assert store.updates == 1


def test_a_manual_stop_is_a_request_for_the_running_vmi(tmp_path):
    with Cluster.open(str(tmp_path / "state.db")) as c:
        c.apply(builders.vm("vm1", namespace=None, runStrategy="Manual", domain={"devices": {}}), namespace="default")
        c.start("vm1", "default")
        uid = c.get("VirtualMachineInstance", "vm1", "default")["metadata"]["uid"]
        store = RacingStore(c.store, races=0)
        vm_action(store, "stop", "default", "vm1", b"", vm_verbs)
        assert c.store.count("VirtualMachineInstance", "default") == 1
        status = c.get("VirtualMachine", "vm1", "default")["status"]
        assert status["stateChangeRequests"] == [{"action": "Stop", "uid": uid}]
        assert store.updates == 1
