"""Deleting a VM as v1.9 does, on both stores (`any_cluster`): the controller's finalizer, the VMI
stopped (the simulated node lets it go at once), `Stopping` / `Terminating` while a finalizer
holds the VMI or the VM, then the finalizer removed and the VM gone. KubeVirt's functional tests
are the model (tests/vm_test.go: test_id 1521 and 1522, "VirtualMachineControllerFinalizer"), and
the command line's `delete` (`--wait`, `--cascade`), with kubectl on the cluster."""
from __future__ import annotations

import pytest

from instancetype.controller.vmsync.deletion import FINALIZER
from instancetype.store.base import NotFound
from tests import builders
from tests.cli._helpers import run_settled

IT = builders.instancetype_obj("csmall", cpu=1, memory="128Mi")
PREF = builders.preference_obj("cirros", {"devices": {"preferredDiskBus": "virtio"}})
CUSTOM = "example.com/custom-finalizer"      # the functional test's customFinalizer


@pytest.fixture
def cluster(any_cluster):
    any_cluster.apply(IT)
    any_cluster.apply(PREF)
    return any_cluster


def _gone(cluster, kind: str, name: str) -> bool:
    try:
        cluster.get(kind, name)
    except NotFound:
        return True
    return False


def _owned_revisions(cluster, vm: dict) -> list[str]:
    uid = vm["metadata"]["uid"]
    return [r["metadata"]["name"] for r in cluster.list("ControllerRevision")
            if any(o.get("uid") == uid for o in r["metadata"].get("ownerReferences") or ())]


def _set_finalizers(cluster, kind: str, name: str, finalizers: list[str]) -> None:
    obj = cluster.get(kind, name)
    obj["metadata"]["finalizers"] = finalizers
    cluster.update(obj)


@pytest.mark.parametrize("propagation", ["Background", "Foreground"])
def test_a_running_vm_is_deleted_with_its_vmi(cluster, propagation):
    """test_id:1521: the VMI goes once the VM is marked for deletion; the finalizer, added when the
    VM was created, is removed and the VM and its revisions go (in the foreground: the garbage
    collector deletes the VMI, the VM waits for it with `foregroundDeletion`)."""
    cluster.apply(builders.csmall_vm("vm1", "Always"))
    vm = cluster.get("VirtualMachine", "vm1")
    assert vm["metadata"]["finalizers"] == [FINALIZER] and vm["status"]["printableStatus"] == "Running"
    assert _owned_revisions(cluster, vm)
    cluster.delete("VirtualMachine", "vm1", propagation=propagation)
    assert _gone(cluster, "VirtualMachine", "vm1") and _gone(cluster, "VirtualMachineInstance", "vm1")
    assert _owned_revisions(cluster, vm) == []


def test_a_stopped_vm_is_deleted(cluster):
    cluster.apply(builders.csmall_vm("vm1", "Halted"))
    assert cluster.get("VirtualMachine", "vm1")["metadata"]["finalizers"] == [FINALIZER]
    cluster.delete("VirtualMachine", "vm1")
    assert _gone(cluster, "VirtualMachine", "vm1")


def test_another_finalizer_keeps_the_vm_terminating(cluster):
    """VirtualMachineControllerFinalizer: added beside the user's finalizer, removed when the VM
    is deleted; the user's keeps the VM, Terminating, until it goes too."""
    vm = builders.csmall_vm("vm1", "Always")
    vm["metadata"]["finalizers"] = [CUSTOM]
    cluster.apply(vm)
    assert cluster.get("VirtualMachine", "vm1")["metadata"]["finalizers"] == [CUSTOM, FINALIZER]
    cluster.delete("VirtualMachine", "vm1")
    vm = cluster.get("VirtualMachine", "vm1")
    assert vm["metadata"]["deletionTimestamp"] and vm["metadata"]["finalizers"] == [CUSTOM]
    assert vm["status"]["printableStatus"] == "Terminating"
    assert _gone(cluster, "VirtualMachineInstance", "vm1")
    _set_finalizers(cluster, "VirtualMachine", "vm1", [])
    assert _gone(cluster, "VirtualMachine", "vm1") and _owned_revisions(cluster, vm) == []


def test_a_vmi_another_finalizer_holds_is_stopping_then_the_vm_terminating(cluster):
    """The VMI's guest stops at once, but a finalizer of the VM's template keeps the VMI: the VM
    is Stopping, then (deleted) Terminating with its finalizer, until the VMI is gone."""
    cluster.apply(builders.csmall_vm("vm1", "Always", template_metadata={"finalizers": [CUSTOM]}))
    cluster.stop("vm1")
    vmi = cluster.get("VirtualMachineInstance", "vm1")
    assert vmi["metadata"]["deletionTimestamp"] and vmi["metadata"]["finalizers"] == [CUSTOM]
    assert cluster.get("VirtualMachine", "vm1")["status"]["printableStatus"] == "Stopping"
    cluster.delete("VirtualMachine", "vm1")
    vm = cluster.get("VirtualMachine", "vm1")
    assert vm["status"]["printableStatus"] == "Terminating" and vm["metadata"]["finalizers"] == [FINALIZER]
    _set_finalizers(cluster, "VirtualMachineInstance", "vm1", [])
    assert _gone(cluster, "VirtualMachineInstance", "vm1") and _gone(cluster, "VirtualMachine", "vm1")


def test_an_orphaned_vmi_keeps_running(cluster):
    """test_id:1522: deleted with the Orphan policy, the VM goes and its VMI stays, unowned."""
    cluster.apply(builders.csmall_vm("vm1", "Always"))
    cluster.delete("VirtualMachine", "vm1", propagation="Orphan")
    assert _gone(cluster, "VirtualMachine", "vm1")
    vmi = cluster.get("VirtualMachineInstance", "vm1")
    assert not vmi["metadata"].get("ownerReferences") and vmi["status"]["phase"] == "Running"
    cluster.delete("VirtualMachineInstance", "vm1")
    assert _gone(cluster, "VirtualMachineInstance", "vm1")


def test_delete_waits_as_kubectl_does(cluster):
    """`delete --wait=false` returns at once (the VM Terminating while a finalizer holds it); the
    default waits until it is gone, within --timeout; on the cluster, kubectl does the same."""
    held = builders.csmall_vm("held", "Always")
    held["metadata"]["finalizers"] = [CUSTOM]
    cluster.apply(held)
    cluster.apply(builders.csmall_vm("plain", "Always"))
    r = run_settled(cluster, "delete", "vm", "held", "--wait=false")
    assert (r.code, r.err) == (0, "") and r.out.startswith('virtualmachine.kubevirt.io "held" deleted')
    r = run_settled(cluster, "get", "vm", "held", "-o", "jsonpath={.status.printableStatus}")
    assert r.out == "Terminating"
    r = run_settled(cluster, "delete", "vm", "held", "--timeout=10ms")
    assert r.code == 1 and r.err == "error: timed out waiting for the condition on virtualmachines/held\n"
    r = run_settled(cluster, "delete", "vm", "plain")
    assert r.code == 0 and _gone(cluster, "VirtualMachine", "plain")
    if cluster.store_name == "kube":
        kubectl = cluster.stack.kube.kubectl
        ns = cluster.namespace
        out = kubectl("get", "vm", "held", "-n", ns, "-o", "jsonpath={.status.printableStatus}").stdout
        assert out == "Terminating"
        kubectl("patch", "vm", "held", "-n", ns, "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
        cluster.apply(builders.csmall_vm("plain", "Always"))
        assert kubectl("delete", "vm", "plain", "-n", ns, "--timeout=60s").returncode == 0
        assert _gone(cluster, "VirtualMachine", "plain") and _gone(cluster, "VirtualMachineInstance", "plain")
    else:
        _set_finalizers(cluster, "VirtualMachine", "held", [])
    r = run_settled(cluster, "delete", "vm", "held", "--ignore-not-found")
    assert r.code == 0 and _gone(cluster, "VirtualMachine", "held")
