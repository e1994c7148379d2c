"""Run strategies as KubeVirt v1.9's syncRunStrategy (controller/vmsync/run_strategy.py), and every
VMI change a trigger of its VM, on both stores."""
from __future__ import annotations

import pytest

from tests.controller.day2_helpers import SMALL, edit, vm


@pytest.fixture
def cluster(any_cluster):
    any_cluster.apply(SMALL)
    return any_cluster


def _state(cluster, name="vm1"):
    status = cluster.get("VirtualMachine", name).get("status") or {}
    try:
        vmi = cluster.get("VirtualMachineInstance", name)["metadata"]["uid"]
    except Exception:   # noqa: BLE001 -- NotFound on either store
        vmi = None
    return status.get("printableStatus"), status.get("runStrategy"), vmi


def _strategy(value):
    def change(obj):
        obj["spec"].pop("running", None)
        obj["spec"]["runStrategy"] = value
    return change


def test_status_run_strategy_only_once_a_vmi_was_created(cluster):
    cluster.apply(vm(strategy="Halted"))
    assert _state(cluster) == ("Stopped", None, None)
    cluster.start("vm1")
    printable, strategy, uid = _state(cluster)
    assert (printable, strategy) == ("Running", "Always") and uid
    cluster.stop("vm1")
    assert _state(cluster) == ("Stopped", "Halted", None)


@pytest.mark.parametrize("target", ["RerunOnFailure", "Once", "Always"])
def test_halted_to_a_starting_strategy_starts(cluster, target):
    cluster.apply(vm(strategy="Halted"))
    edit(cluster, "vm1", _strategy(target))
    printable, strategy, uid = _state(cluster)
    assert (printable, strategy) == ("Running", target) and uid


def test_halted_to_manual_starts_nothing(cluster):
    cluster.apply(vm(strategy="Halted"))
    edit(cluster, "vm1", _strategy("Manual"))
    assert _state(cluster) == ("Stopped", None, None)
    cluster.start("vm1")
    assert _state(cluster)[0] == "Running"


def test_rerun_on_failure_stays_stopped_after_a_stop_request(cluster):
    cluster.apply(vm(strategy="RerunOnFailure"))
    cluster.stop("vm1")
    assert _state(cluster) == ("Stopped", "RerunOnFailure", None)
    cluster.start("vm1")
    assert _state(cluster)[0] == "Running"


@pytest.mark.parametrize("strategy", ["Always", "Once"])
def test_a_deleted_vmi_is_started_again(cluster, strategy):
    """Always and Once start a VMI whenever none exists; the VMI's deletion re-queues its VM
    (on the embedded store in the deletion's own transaction)."""
    cluster.apply(vm(strategy=strategy))
    first = _state(cluster)[2]
    cluster.delete("VirtualMachineInstance", "vm1")
    printable, _, second = _state(cluster)
    assert printable == "Running" and second and second != first


def test_manual_leaves_a_deleted_vmi_stopped_and_the_status_says_so(cluster):
    cluster.apply(vm(strategy="Manual"))
    cluster.start("vm1")
    cluster.delete("VirtualMachineInstance", "vm1")
    assert _state(cluster) == ("Stopped", "Manual", None)


def test_wait_as_receiver_creates_a_receiver_vmi(cluster):
    cluster.apply({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                   "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
                   "spec": {"configuration": {"developerConfiguration": {
                       "featureGates": ["DecentralizedLiveMigration"]}}}})
    cluster.apply(vm(strategy="WaitAsReceiver"))
    vmi = cluster.get("VirtualMachineInstance", "vm1")
    assert vmi["metadata"]["annotations"]["kubevirt.io/create-migration-target"] == "true"
    assert vmi["status"]["phase"] == "WaitingForSync"
    assert _state(cluster)[0] == "WaitingForReceiver"
