"""pause, unpause and soft reboot on both stores (`any_cluster`): virt-api's checks as v1.9
answers them, the VMI's `Paused` condition reported by the simulated node, the VM's conditions
and printable status following it; KubeVirt's functional test of pausing (tests/vm_test.go,
tests/compute/pause: pause, the VMI paused, unpause, running and Ready again) on the simulated node."""
from __future__ import annotations

import pytest

from instancetype.store.base import Conflict, Forbidden, NotFound
from tests import builders

IT = builders.instancetype_obj("csmall", cpu=1, memory="128Mi")
PREF = builders.preference_obj("cirros", {"devices": {"preferredDiskBus": "virtio"}})


def _conditions(obj: dict) -> dict:
    """The conditions but virt-handler's LiveMigratable (tests/controller/test_vm_live_update.py)."""
    return {c["type"]: (c["status"], c.get("reason")) for c in (obj.get("status") or {}).get("conditions") or () if c["type"] != "LiveMigratable"}


def _refused(action, name: str, error: type, message: str) -> None:
    with pytest.raises(error) as e:
        action(name)
    assert str(e.value) == message


def _vmi_conflict(name: str, detail: str) -> str:
    return f'Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "{name}": {detail}'


@pytest.fixture
def cluster(any_cluster):
    any_cluster.apply(IT)
    any_cluster.apply(PREF)
    return any_cluster


def test_pause_and_unpause_a_running_vm(cluster):
    cluster.apply(builders.csmall_vm("vm1", "Always"))
    cluster.pause("vm1")
    vmi, vm = cluster.get("VirtualMachineInstance", "vm1"), cluster.get("VirtualMachine", "vm1")
    assert vmi["status"]["phase"] == "Running"
    paused = next(c for c in vmi["status"]["conditions"] if c["type"] == "Paused")
    assert (paused["reason"], paused["message"]) == ("PausedByUser", "VMI was paused by user")
    assert _conditions(vmi) == _conditions(vm) == {"Ready": ("False", "ReadinessGatesNotReady"),
                                                  "Paused": ("True", "PausedByUser")}
    assert vm["status"]["printableStatus"] == "Paused" and "ready" not in vm["status"]

    _refused(cluster.pause, "vm1", Conflict, _vmi_conflict("vm1", "VMI is already paused"))
    _refused(cluster.soft_reboot, "vm1", Conflict, _vmi_conflict("vm1", "VMI is paused"))

    cluster.unpause("vm1")
    vmi, vm = cluster.get("VirtualMachineInstance", "vm1"), cluster.get("VirtualMachine", "vm1")
    assert _conditions(vmi) == _conditions(vm) == {"Ready": ("True", "SimulatedNode")}
    assert vm["status"]["printableStatus"] == "Running" and vm["status"]["ready"] is True
    _refused(cluster.unpause, "vm1", Conflict, _vmi_conflict("vm1", "VMI is not paused"))

    # Soft reboot: no guest agent in the simulation, ACPI on: accepted, nothing shows it.
    rv = vmi["metadata"]["resourceVersion"]
    cluster.soft_reboot("vm1")
    assert cluster.get("VirtualMachineInstance", "vm1")["metadata"]["resourceVersion"] == rv


def test_unpause_a_vm_started_paused(cluster):
    cluster.apply(builders.csmall_vm("vm1", "Manual"))
    cluster.start("vm1", paused=True)
    assert cluster.get("VirtualMachine", "vm1")["status"]["printableStatus"] == "Paused"
    cluster.unpause("vm1")
    vm = cluster.get("VirtualMachine", "vm1")
    assert vm["status"]["printableStatus"] == "Running" and _conditions(vm) == {"Ready": ("True", "SimulatedNode")}
    # the VMI keeps its startStrategy: the next pause is by the user again
    assert cluster.get("VirtualMachineInstance", "vm1")["spec"]["startStrategy"] == "Paused"
    cluster.pause("vm1")
    assert cluster.get("VirtualMachine", "vm1")["status"]["printableStatus"] == "Paused"


def test_refusals(cluster):
    cluster.apply(builders.csmall_vm("halted", "Halted"))
    for action in (cluster.pause, cluster.unpause, cluster.soft_reboot):
        _refused(action, "halted", NotFound, 'virtualmachineinstance.kubevirt.io "halted" not found')

    probe = builders.csmall_vm("probe", "Always")
    probe["spec"]["template"]["spec"]["livenessProbe"] = {"httpGet": {"port": 1500}}
    cluster.apply(probe)
    _refused(cluster.pause, "probe", Forbidden, 'virtualmachineinstance.kubevirt.io "probe" is forbidden: '
             "Pausing VMIs with a non-GuestAgentPing LivenessProbe is not supported")
    agent_ping = builders.csmall_vm("ping", "Always")
    agent_ping["spec"]["template"]["spec"]["livenessProbe"] = {"guestAgentPing": {}}
    cluster.apply(agent_ping)
    cluster.pause("ping")

    no_acpi = builders.csmall_vm("noacpi", "Always")
    no_acpi["spec"]["template"]["spec"]["domain"]["features"] = {"acpi": {"enabled": False}}
    cluster.apply(no_acpi)
    _refused(cluster.soft_reboot, "noacpi", Conflict,
             _vmi_conflict("noacpi", "VMI neither have the agent connected nor the ACPI feature enabled"))
