"""virt-api's `pause`, `unpause` and `softreboot` of a VMI over real HTTP on the embedded store:
v1.9's answers (pkg/virt-api/rest/lifecycle.go) code by code, the option bodies and their dry
run, and the VMI and VM statuses the simulated node and the controller then report."""
from __future__ import annotations

import pytest

from instancetype.controller import Cluster
from instancetype.controller import pause as vmi_verbs
from instancetype.controller import vm as vm_verbs
from instancetype.store.sqlite import SqliteStore
from instancetype.webhook.virtapi.app import VirtAPI

from ._server import request, serving
from .test_http_sqlite import IT, PREF, vm

VMI = "/namespaces/default/virtualmachineinstances"


@pytest.fixture
def env(tmp_path):
    """The embedded store with IT, PREF and a Halted vm1, served by the subresource API."""
    path = str(tmp_path / "state.db")
    with Cluster.open(path) as cluster:
        for obj in (IT, PREF, vm()):
            cluster.apply(obj, namespace="default")
        api = VirtAPI(lambda: SqliteStore(path), vm_verbs=vm_verbs, vmi_verbs=vmi_verbs, insecure=True)
        with serving(api.app()) as port:
            yield cluster, port


def put(port: int, path: str, body=None):
    return request(port, "PUT", "/apis/subresources.kubevirt.io/v1" + path, body)


def _conditions(obj: dict) -> dict:
    """The conditions but virt-handler's LiveMigratable (tests/controller/test_vm_live_update.py)."""
    return {c["type"]: (c["status"], c.get("reason")) for c in obj["status"].get("conditions") or () if c["type"] != "LiveMigratable"}


def _conflict(name: str, detail: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "{name}": {detail}',
            "reason": "Conflict", "details": {"name": name, "group": "kubevirt.io", "kind": "virtualmachineinstance"},
            "code": 409}


def test_pause_unpause_soft_reboot(env):
    cluster, port = env
    # No VMI yet: 404 on virtualmachineinstance, for all three.
    for action in ("pause", "unpause", "softreboot"):
        code, status = put(port, f"{VMI}/vm1/{action}")
        assert (code, status["message"]) == (404, 'virtualmachineinstance.kubevirt.io "vm1" not found')
        assert status["details"] == {"name": "vm1", "group": "kubevirt.io", "kind": "virtualmachineinstance"}
    assert put(port, "/namespaces/default/virtualmachines/vm1/start") == (202, None)

    assert put(port, f"{VMI}/vm1/unpause") == (409, _conflict("vm1", "VMI is not paused"))
    # a dry run checks and changes nothing; a dryRun value other than All is no dry run (no 400)
    before = cluster.get("VirtualMachineInstance", "vm1", "default")
    assert put(port, f"{VMI}/vm1/pause", {"dryRun": ["All"]}) == (202, None)
    assert cluster.get("VirtualMachineInstance", "vm1", "default") == before

    assert put(port, f"{VMI}/vm1/pause", {"dryRun": ["Nope"]}) == (202, None)
    vmi = cluster.get("VirtualMachineInstance", "vm1", "default")
    vm1 = cluster.get("VirtualMachine", "vm1", "default")
    assert vmi["status"]["phase"] == "Running"
    assert _conditions(vmi) == _conditions(vm1) == {"Ready": ("False", "ReadinessGatesNotReady"),
                                                    "Paused": ("True", "PausedByUser")}
    assert vm1["status"]["printableStatus"] == "Paused" and "ready" not in vm1["status"]

    assert put(port, f"{VMI}/vm1/pause") == (409, _conflict("vm1", "VMI is already paused"))
    assert put(port, f"{VMI}/vm1/softreboot") == (409, _conflict("vm1", "VMI is paused"))
    assert put(port, f"{VMI}/vm1/unpause", b"dryRun: [All]\n") == (202, None)
    assert cluster.get("VirtualMachine", "vm1", "default")["status"]["printableStatus"] == "Paused"

    assert put(port, f"{VMI}/vm1/unpause", {}) == (202, None)
    vmi = cluster.get("VirtualMachineInstance", "vm1", "default")
    vm1 = cluster.get("VirtualMachine", "vm1", "default")
    assert _conditions(vmi) == _conditions(vm1) == {"Ready": ("True", "SimulatedNode")}
    assert vm1["status"]["printableStatus"] == "Running" and vm1["status"]["ready"] is True

    # soft reboot: ACPI without a guest agent, accepted; nothing a status shows changes
    assert put(port, f"{VMI}/vm1/softreboot") == (202, None)
    assert cluster.get("VirtualMachineInstance", "vm1", "default") == vmi


def test_option_bodies(env):
    cluster, port = env
    assert put(port, "/namespaces/default/virtualmachines/vm1/start") == (202, None)
    code, status = put(port, f"{VMI}/vm1/pause", {"dryRun": "All"})
    assert (code, status["message"]) == (400, "Can not unmarshal Request body to struct, error: json: cannot "
                                              "unmarshal string into Go struct field PauseOptions.dryRun of type []string")
    code, status = put(port, f"{VMI}/vm1/unpause", b"{")
    assert (code, status["message"]) == (400, "Can not unmarshal Request body to struct, error: "
                                              "unexpected end of JSON input")
    # pause decodes its body before it reads the VMI
    assert put(port, f"{VMI}/nope/pause", b"{")[0] == 400
    # soft reboot reads no body
    assert put(port, f"{VMI}/vm1/softreboot", b"{") == (202, None)


def test_refusals_by_the_vmi_spec_and_the_vm(env):
    cluster, port = env
    probe = vm("probe", "Always")
    probe["spec"]["template"]["spec"]["livenessProbe"] = {"httpGet": {"port": 1500}}
    cluster.apply(probe)
    code, status = put(port, f"{VMI}/probe/pause")
    assert (code, status["reason"], status["message"]) == (
        403, "Forbidden", 'virtualmachineinstance.kubevirt.io "probe" is forbidden: '
                          "Pausing VMIs with a non-GuestAgentPing LivenessProbe is not supported")

    no_acpi = vm("noacpi", "Always")
    no_acpi["spec"]["template"]["spec"]["domain"]["features"] = {"acpi": {"enabled": False}}
    cluster.apply(no_acpi)
    assert put(port, f"{VMI}/noacpi/softreboot") == (
        409, _conflict("noacpi", "VMI neither have the agent connected nor the ACPI feature enabled"))

    # unpause first refuses a VM of that name with a snapshot in progress (before the body)
    assert put(port, f"{VMI}/noacpi/pause") == (202, None)
    stored = cluster.store.get("VirtualMachine", "noacpi", "default")
    cluster.store.update({**stored, "status": {**stored["status"], "snapshotInProgress": "snap1"}},
                         subresource="status")
    code, status = put(port, f"{VMI}/noacpi/unpause", b"{")
    assert (code, status["message"]) == (409, 'Operation cannot be fulfilled on virtualmachine.kubevirt.io '
                                              '"noacpi": VM snapshot is in progress')
    assert status["details"] == {"name": "noacpi", "group": "kubevirt.io", "kind": "virtualmachine"}
