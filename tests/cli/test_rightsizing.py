"""Right-sizing on both stores: `catalog fit` over the store's or cluster's instancetypes (ranges,
memory per vCPU, a preference's requirements, `--for vm/NAME`), `catalog list -o matrix` and
`catalog volumes`. Each answer is the engine's (check_requirements with admission=True)."""
from __future__ import annotations

import json

import pytest

from ._helpers import manifest, on_cluster, run


def _it(name: str, cpu: int, memory: str) -> dict:
    return {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
            "metadata": {"name": name}, "spec": {"cpu": {"guest": cpu}, "memory": {"guest": memory}}}


TYPES = manifest(_it("rs1.2xlarge", 8, "32Gi"), _it("rs1.small", 1, "2Gi"), _it("rs1.large", 2, "8Gi"),
                 _it("rs1.medium", 1, "4Gi"), _it("rs1.xlarge", 4, "16Gi"))
NEEDS_4GI = manifest({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
                      "metadata": {"name": "needs4gi"},
                      "spec": {"requirements": {"memory": {"guest": "4Gi"}, "cpu": {"guest": 2}}}})


def _names(target, *args: str) -> list[str]:
    r = run(target, "catalog", "fit", "--class", "rs1", "--all", *args, "-o", "name")
    assert r.code == 0, r.err
    return r.out.split()


def test_fit_over_the_stores_types(target):
    assert run(target, "apply", "-f", "-", stdin=TYPES + "---\n" + NEEDS_4GI).code == 0
    kind = "virtualmachineinstancetype/"
    assert _names(target) == [kind + n for n in ("rs1.small", "rs1.medium", "rs1.large", "rs1.xlarge", "rs1.2xlarge")]
    assert _names(target, "--cpu", "2-4") == [kind + "rs1.large", kind + "rs1.xlarge"]
    assert _names(target, "--memory-per-cpu", "4Gi-4Gi") == [kind + n for n in (
        "rs1.medium", "rs1.large", "rs1.xlarge", "rs1.2xlarge")]
    assert _names(target, "--exclude", "*.xlarge,*.2xlarge", "--cpu", "2") == [kind + "rs1.large"]
    assert _names(target, "--preference", "virtualmachinepreference/needs4gi") == [
        kind + n for n in ("rs1.large", "rs1.xlarge", "rs1.2xlarge")]
    r = run(target, "catalog", "fit", "--class", "rs1", "--cpu", "1-1", "--preference",
            "virtualmachinepreference/needs4gi")
    assert r.code == 1 and r.err.startswith("error: no instancetype fits: rs1.small: insufficient CPU resources")
    data = json.loads(run(target, "catalog", "fit", "--class", "rs1", "--cpu", "3", "-o", "json").out)
    assert [(d["name"], d["kind"], d["extraCPU"]) for d in data] == [("rs1.xlarge", "VirtualMachineInstancetype", 1)]


def test_fit_for_a_vm_lists_what_it_can_move_to(target):
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "vm1"},
          "spec": {"runStrategy": "Halted",
                   "instancetype": {"kind": "VirtualMachineInstancetype", "name": "rs1.large"},
                   "preference": {"kind": "VirtualMachinePreference", "name": "needs4gi"},
                   "template": {"spec": {"domain": {"devices": {}}}}}}
    assert run(target, "apply", "-f", "-", stdin=TYPES + "---\n" + NEEDS_4GI + "---\n" + manifest(vm)).code == 0
    kind = "virtualmachineinstancetype/"
    assert _names(target, "--for", "vm/vm1") == [kind + n for n in ("rs1.large", "rs1.xlarge", "rs1.2xlarge")]
    r = run(target, "catalog", "fit", "--for", "vm/nope")
    assert r.code == 1 and "nope" in r.err and r.err.count("\n") == 1
    r = run(target, "catalog", "fit", "--for", "pod/x")
    assert r.code == 1 and r.err == 'error: invalid value for --for: "pod/x" (vm/NAME)\n'


def test_volumes_lists_the_bootable_ones(target):
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    boot = {**pvc, "metadata": {"name": "boot", "labels": {
        "instancetype.kubevirt.io/default-instancetype": "rs1.small",
        "instancetype.kubevirt.io/default-instancetype-kind": "VirtualMachineInstancetype",
        "instancetype.kubevirt.io/default-preference": "needs4gi",
        "instancetype.kubevirt.io/default-preference-kind": "VirtualMachinePreference",
        "template.kubevirt.io/architecture": "arm64"}}}
    plain = {**pvc, "metadata": {"name": "plain"}}
    assert run(target, "apply", "-f", "-", stdin=NEEDS_4GI + "---\n" + manifest(boot, plain)).code == 0
    r = run(target, "catalog", "volumes")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "OS", "ARCH", "INSTANCETYPE", "PREFERENCE"]
    assert [l.split() for l in lines[1:]] == [["boot", "PersistentVolumeClaim", "-", "arm64", "rs1.small", "needs4gi"]]
    assert run(target, "catalog", "volumes", "-o", "name").out == "persistentvolumeclaim/boot\n"


def test_describe_vm_shows_what_it_resolves_to(target):
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "vm1"},
          "spec": {"runStrategy": "Halted",
                   "instancetype": {"kind": "VirtualMachineInstancetype", "name": "rs1.large"},
                   "preference": {"kind": "VirtualMachinePreference", "name": "bus"},
                   "template": {"spec": {"domain": {"devices": {"disks": [{"name": "root", "disk": {}}]}},
                                         "volumes": [{"name": "root", "containerDisk": {"image": "x"}}]}}}}
    bus = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
           "metadata": {"name": "bus"}, "spec": {"devices": {"preferredDiskBus": "sata"},
                                                  "cpu": {"preferredCPUTopology": "cores"},
                                                  "firmware": {"preferredUseEfi": True, "preferredUseSecureBoot": False}}}
    assert run(target, "apply", "-f", "-", stdin=TYPES + "---\n" + manifest(bus, vm)).code == 0
    r = run(target, "describe", "vm", "vm1")
    assert r.code == 0, r.err
    section = r.out[r.out.index("\nResolved:\n"):].splitlines()
    fields = {l.split(":", 1)[0].strip(): l.split(":", 1)[1].strip() for l in section[2:] if ":" in l}
    assert fields["Instancetype"] == "virtualmachineinstancetype/rs1.large (not pinned yet: pinned at the first start)"
    assert fields["CPU"] == "2 vCPUs (1 socket x 2 cores x 1 thread)"
    assert fields["Memory"] == "8Gi guest"
    assert fields["Disks"] == "root: disk sata"
    assert fields["Firmware"] == "efi"
    assert fields["Restart Required"] == "no"



def test_fit_for_a_running_vm_marks_live_or_restart(target):
    """Each type is marked as `set instancetype` would say it: the controller's steps run on an
    in-memory overlay of the store, nothing written."""
    if on_cluster(target):
        pytest.skip("the target cluster runs no controller, so no VM starts there (a running VM on a cluster: "
                    "tests/cli/test_set.py runs set's decisions with the controller)")
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "vm1"},
          "spec": {"runStrategy": "Always",
                   "instancetype": {"kind": "VirtualMachineInstancetype", "name": "rs1.medium"},
                   "template": {"spec": {"domain": {"devices": {"interfaces": [{"name": "default", "masquerade": {}}]}},
                                         "networks": [{"name": "default", "pod": {}}]}}}}
    assert run(target, "apply", "-f", "-", stdin=TYPES + "---\n" + manifest(vm)).code == 0
    data = json.loads(run(target, "catalog", "fit", "--for", "vm/vm1", "--class", "rs1", "-o", "json").out)
    first = {d["name"]: d["reasons"][0] for d in data}
    assert first["rs1.medium"] == "current"
    assert first["rs1.small"] == ("restart required (memory updated in template spec to a value lower than what "
                                  "the VM started with)")
    assert first["rs1.large"] == "live (sockets 1 -> 2, memory 4Gi -> 8Gi)"
    r = run(target, "get", "vm", "vm1", "-o", "json")
    assert json.loads(r.out)["spec"]["instancetype"]["name"] == "rs1.medium"        # nothing written
