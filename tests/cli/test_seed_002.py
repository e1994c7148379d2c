"""Seed 002 (VirtualMachineFlavor update #1): flavor API objects, start, wait, default devices."""
from __future__ import annotations

import pytest

from ._helpers import CLOUD_INIT_ECHO, get_json, instancetype, manifest, preference, run, run_process, vm

EXAMPLE = manifest(
    instancetype("small", 2, version="v1alpha1", kind="VirtualMachineFlavor"),
    preference("virtio", {"devices": {"preferredDiskBus": "virtio", "preferredInterfaceModel": "virtio"}},
               version="v1alpha1", group="flavor.kubevirt.io"),
    vm("example", instancetype="small", preference="virtio", matcher="flavor", cloud_init=CLOUD_INIT_ECHO))


@pytest.fixture
def state(tmp_path):
    """A state file holding the seed's example, applied as the seed applies it."""
    state = tmp_path / "state.db"
    r = run(state, "apply", "-f", "-", stdin=EXAMPLE)
    assert (r.code, r.out) == (0, "virtualmachineinstancetype.instancetype.kubevirt.io/small created\n"
                                  "virtualmachinepreference.instancetype.kubevirt.io/virtio created\n"
                                  "virtualmachine.kubevirt.io/example created\n"), r.err
    return state


def test_start_wait_and_default_devices(state):
    assert run(state, "get", "vmis").err == "No resources found in default namespace.\n"
    r = run_process(state, "start", "example")
    assert (r.code, r.out) == (0, "VM example was scheduled to start\n")
    r = run_process(state, "wait", "vms/example", "--for=condition=Ready")
    assert (r.code, r.out) == (0, "virtualmachine.kubevirt.io/example condition met\n")
    vmi = get_json(state, "vmis/example")
    devices = vmi["spec"]["domain"]["devices"]
    assert devices["disks"] == [{"disk": {"bus": "virtio"}, "name": "containerdisk"},
                                {"disk": {"bus": "virtio"}, "name": "cloudinitdisk"}]
    assert devices["interfaces"] == [{"bridge": {}, "model": "virtio", "name": "default"}]
    assert vmi["spec"]["domain"]["cpu"]["sockets"] == 2


def test_wait_times_out_and_reports(state):
    r = run(state, "wait", "vm/example", "--for=condition=Ready", "--timeout=0.2s")
    assert (r.code, r.err) == (1, "error: timed out waiting for the condition on virtualmachines/example\n")
    r = run(state, "wait", "vm/nope", "--for=condition=Ready", "--timeout=1s")
    assert (r.code, r.err) == (1, 'Error from server (NotFound): virtualmachines.kubevirt.io "nope" not found\n')
    r = run(state, "wait", "vm", "example", "--for=condition=Ready=false", "--timeout=1s")
    assert (r.code, r.out) == (0, "virtualmachine.kubevirt.io/example condition met\n")


def test_wait_forms_as_kubectl(state):
    r = run(state, "wait", "vm/example", "--for=condition=Ready", "--timeout=0")
    assert (r.code, r.err) == (1, "error: condition not met for virtualmachines/example\n")
    r = run(state, "wait", "vm/example", "--for=jsonpath={.status.printableStatus}=Stopped", "--timeout=0")
    assert (r.code, r.out) == (0, "virtualmachine.kubevirt.io/example condition met\n")
    r = run(state, "wait", "vm/example", "--for=jsonpath={.spec.template.spec.volumes[1].name}='cloudinitdisk'",
            "--timeout=0")
    assert (r.code, r.out) == (0, "virtualmachine.kubevirt.io/example condition met\n"), r.err
    r = run(state, "wait", "vm/example", "--for=jsonpath={.spec.template}=x")
    assert (r.code, r.err) == (1, "error: jsonpath leads to a nested object or list which is not supported\n")
    # --for=delete of an object already gone: kubectl's silent success.
    assert run(state, "wait", "vm/gone", "--for=delete") == run(state, "wait", "vm", "--for=delete", "-n", "kube-public")
    assert run(state, "wait", "vm/gone", "--for=delete").code == 0
    r = run(state, "wait", "vm/example", "--for=delete", "--timeout=0")
    assert (r.code, r.err) == (1, "error: condition not met for virtualmachines/example\n")
    assert run(state, "wait", "vm/example").err == 'error: unrecognized condition: ""\n'
    assert run(state, "wait", "vm/example", "--for=condition=Ready", "--timeout=soon").err == (
        'error: invalid argument "soon" for "--timeout" flag: time: invalid duration "soon"\n')
    assert run(state, "wait", "vm", "--for=condition=Ready", "-n", "kube-public").err == (
        "error: no matching resources found\n")
