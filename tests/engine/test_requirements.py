"""Preference requirements (preference/requirements/*_test.go vectors) and the
admission-mode sequence of the VM webhook."""
from __future__ import annotations

import pytest
from tests.builders import vm

from instancetype.engine.requirements import check, check_requirements
from instancetype.errors import ConflictError, DefaultsError, RequirementsError, SpreadError

CPU = "spec.template.spec.domain.cpu"


def pref(topology=None, cpu=None, memory=None, arch=None, **extra):
    p: dict = dict(extra)
    if topology is not None:
        p.setdefault("cpu", {})["preferredCPUTopology"] = topology
    req = {}
    if cpu is not None:
        req["cpu"] = {"guest": cpu}
    if memory is not None:
        req["memory"] = {"guest": memory}
    if arch is not None:
        req["architecture"] = arch
    p["requirements"] = req
    return p


def vm_spec(cpu=None, memory=None, arch=None):
    dom: dict = {}
    if cpu is not None:
        dom["cpu"] = cpu
    if memory is not None:
        dom["memory"] = {"guest": memory}
    s: dict = {"domain": dom}
    if arch is not None:
        s["architecture"] = arch
    return s


def it(cpu=2, memory="1Gi"):
    return {"cpu": {"guest": cpu}, "memory": {"guest": memory}}


FAILS = [
    ("it-cpu", pref(cpu=2), it(cpu=1), vm_spec(),
     "insufficient CPU resources of 1 vCPU provided by instance type, preference requires 2 vCPU", ["spec.instancetype"]),
    ("sockets", pref("sockets", cpu=2), None, vm_spec(cpu={"sockets": 1}),
     "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 2 vCPU provided as sockets",
     [CPU + ".sockets"]),
    ("default-sockets", pref(cpu=2), None, vm_spec(cpu={"sockets": 1}),
     "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 2 vCPU provided as sockets",
     [CPU + ".sockets"]),
    ("cores", pref("preferCores", cpu=2), None, vm_spec(cpu={"cores": 1}),
     "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 2 vCPU provided as cores",
     [CPU + ".cores"]),
    ("threads", pref("threads", cpu=2), None, vm_spec(cpu={"threads": 1}),
     "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 2 vCPU provided as threads",
     [CPU + ".threads"]),
    ("spread", pref("spread", cpu=4), None, vm_spec(cpu={"cores": 1, "sockets": 1}),
     "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 4 vCPU provided as SocketsCores",
     [CPU + ".sockets", CPU + ".cores"]),
    ("spread-ct", pref("spread", cpu=4) | {"cpu": {"preferredCPUTopology": "spread",
                                                    "spreadOptions": {"across": "CoresThreads"}}},
     None, vm_spec(cpu={"cores": 1, "threads": 1}),
     "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 4 vCPU provided as CoresThreads",
     [CPU + ".cores", CPU + ".threads"]),
    ("spread-sct", pref("spread", cpu=4) | {"cpu": {"preferredCPUTopology": "spread",
                                                     "spreadOptions": {"across": "SocketsCoresThreads"}}},
     None, vm_spec(cpu={"sockets": 1, "cores": 1, "threads": 1}),
     "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 4 vCPU provided as "
     "SocketsCoresThreads", [CPU + ".sockets", CPU + ".cores", CPU + ".threads"]),
    ("any", pref("any", cpu=4), None, vm_spec(cpu={"sockets": 2, "cores": 1, "threads": 1}),
     "insufficient CPU resources of 2 vCPU provided by VirtualMachine, preference requires 4 vCPU provided as "
     "cores, sockets and threads", [CPU + ".cores", CPU + ".sockets", CPU + ".threads"]),
    ("seed-cores-0", pref("cores", cpu=2), None, vm_spec(cpu={"sockets": 1, "threads": 1}),
     "insufficient CPU resources of 0 vCPU provided by VirtualMachine, preference requires 2 vCPU provided as cores",
     [CPU + ".cores"]),
    ("no-cpu", pref(cpu=10), None, vm_spec(),
     "no CPU resources provided by VirtualMachine, preference requires 10 vCPU", [CPU]),
    ("it-mem", pref(memory="2Gi"), it(memory="1Gi"), vm_spec(),
     "insufficient Memory resources of 1Gi provided by instance type, preference requires 2Gi", ["spec.instancetype"]),
    ("vm-mem", pref(memory="2Gi"), None, vm_spec(memory="1Gi"),
     "insufficient Memory resources of 1Gi provided by VirtualMachine, preference requires 2Gi",
     ["spec.template.spec.domain.memory"]),
    # a JSON number decodes as a DecimalSI quantity (Go's test builds a BinarySI one in code)
    ("vm-mem-number", pref(memory="2Gi"), None, vm_spec(memory=1073741824),
     "insufficient Memory resources of 1073741824 provided by VirtualMachine, preference requires 2Gi",
     ["spec.template.spec.domain.memory"]),
    ("vm-mem-none", pref(memory="2Gi"), None, vm_spec(),
     "insufficient Memory resources of 0 provided by VirtualMachine, preference requires 2Gi",
     ["spec.template.spec.domain.memory"]),
    ("vm-mem-empty", pref(memory="2Gi"), None, {"domain": {"memory": {}}},
     "insufficient Memory resources of 0 provided by VirtualMachine, preference requires 2Gi",
     ["spec.template.spec.domain.memory"]),
    ("seed-mem", pref(memory="512Mi"), it(memory="128Mi"), vm_spec(),
     "insufficient Memory resources of 128Mi provided by instance type, preference requires 512Mi",
     ["spec.instancetype"]),
    # the VM's guest memory replaces the instancetype's value, wording and path stay
    ("vm-mem-over-it", pref(memory="2Gi"), it(memory="4Gi"), vm_spec(memory="1Gi"),
     "insufficient Memory resources of 1Gi provided by instance type, preference requires 2Gi", ["spec.instancetype"]),
    ("arch", pref(arch="amd64"), None, vm_spec(arch="arm64"),
     "preference requires architecture amd64 but arm64 is being requested", ["spec.template.spec.architecture"]),
    ("arch-empty", pref(arch="amd64"), None, vm_spec(),
     "preference requires architecture amd64 but  is being requested", ["spec.template.spec.architecture"]),
    # cpu comes first, then memory
    ("order", pref(cpu=4, memory="2Gi", arch="s390x"), it(cpu=1, memory="1Gi"), vm_spec(),
     "insufficient CPU resources of 1 vCPU provided by instance type, preference requires 4 vCPU", ["spec.instancetype"]),
]


@pytest.mark.parametrize("name,p,itype,spec,msg,fields", FAILS, ids=[f[0] for f in FAILS])
def test_check_fails(name, p, itype, spec, msg, fields):
    err = check(p, itype, spec)
    assert isinstance(err, RequirementsError)
    assert str(err) == msg
    assert err.fields == fields


PASSES = [
    (pref(cpu=2), it(cpu=2), vm_spec()),
    (pref(cpu=2), it(cpu=4), vm_spec(cpu={"sockets": 1})),  # VM CPU ignored with an instancetype
    (pref("sockets", cpu=2), None, vm_spec(cpu={"sockets": 2})),
    (pref("cores", cpu=2), None, vm_spec(cpu={"cores": 2})),
    (pref("threads", cpu=2), None, vm_spec(cpu={"threads": 2})),
    (pref("spread", cpu=6), None, vm_spec(cpu={"cores": 2, "sockets": 3})),
    ({"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "CoresThreads"}},
      "requirements": {"cpu": {"guest": 6}}}, None, vm_spec(cpu={"threads": 2, "cores": 3})),
    ({"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "SocketsCoresThreads"}},
      "requirements": {"cpu": {"guest": 8}}}, None, vm_spec(cpu={"threads": 2, "cores": 2, "sockets": 2})),
    (pref("any", cpu=4), None, vm_spec(cpu={"sockets": 2, "cores": 2, "threads": 1})),
    (pref("bogus", cpu=4), None, vm_spec(cpu={})),
    (pref(memory="1Gi"), it(memory="1Gi"), vm_spec()),
    (pref(memory="1Gi"), None, vm_spec(memory="1024Mi")),
    (pref(arch="arm64"), None, vm_spec(arch="arm64")),
    ({}, None, vm_spec()),
    (None, it(cpu=1), vm_spec()),
    ({"cpu": {"preferredCPUTopology": "cores"}}, None, vm_spec()),
]


@pytest.mark.parametrize("p,itype,spec", PASSES)
def test_check_passes(p, itype, spec):
    assert check(p, itype, spec) is None


def test_public_plain_mode_checks_template_as_given():
    with pytest.raises(RequirementsError) as e:
        check_requirements(vm(), instancetype=None, preference=pref(cpu=2))
    assert str(e.value) == "no CPU resources provided by VirtualMachine, preference requires 2 vCPU"
    check_requirements(vm(), preference=None)


def test_public_accepts_whole_objects():
    obj = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
           "metadata": {"name": "p"}, "spec": pref(memory="512Mi")}
    with pytest.raises(RequirementsError) as e:
        check_requirements(vm(), instancetype=it(memory="128Mi"), preference=obj)
    assert str(e.value) == "insufficient Memory resources of 128Mi provided by instance type, preference requires 512Mi"


def test_admission_defaults_memory_from_requests():
    spec = {"domain": {"resources": {"requests": {"memory": "512Mi"}}}}
    with pytest.raises(RequirementsError) as e:
        check_requirements(vm(template=spec), preference=pref(memory="1Gi"), admission=True)
    assert str(e.value) == ("insufficient Memory resources of 512Mi provided by VirtualMachine, "
                            "preference requires 1Gi")


def test_admission_defaults_architecture_and_topology():
    with pytest.raises(RequirementsError) as e:
        check_requirements(vm(), preference=pref(arch="arm64"), admission=True)
    assert str(e.value) == "preference requires architecture arm64 but amd64 is being requested"
    # preferredArchitecture is applied before the defaults
    check_requirements(vm(), preference=pref(arch="arm64", preferredArchitecture="arm64"),
                       admission=True)
    with pytest.raises(RequirementsError) as e:
        check_requirements(vm(), preference=pref("sockets", cpu=2), admission=True)
    assert e.value.fields == [CPU + ".sockets"]


def test_admission_applies_instancetype_topology():
    # the instancetype is applied (4 vCPUs as cores) before the check: exactly enough passes
    p = pref("cores", cpu=4, memory="2Gi")
    assert check_requirements(vm(), instancetype=it(cpu=4, memory="2Gi"), preference=p,
                              admission=True) is None
    # ... and the instancetype's own amounts are what the check compares (checkCPU, checkMemory)
    with pytest.raises(RequirementsError) as e:
        check_requirements(vm(), instancetype=it(cpu=3, memory="2Gi"), preference=p, admission=True)
    assert str(e.value) == "insufficient CPU resources of 3 vCPU provided by instance type, preference requires 4 vCPU"
    assert e.value.fields == ["spec.instancetype"]
    with pytest.raises(RequirementsError) as e:
        check_requirements(vm(), instancetype=it(cpu=4, memory="1Gi"), preference=p, admission=True)
    assert str(e.value) == ("insufficient Memory resources of 1Gi provided by instance type, "
                            "preference requires 2Gi")


def test_admission_spread_before_apply():
    p = {"cpu": {"preferredCPUTopology": "spread"}, "requirements": {"cpu": {"guest": 1}}}
    with pytest.raises(SpreadError) as e:
        check_requirements(vm(template={"domain": {"cpu": {"sockets": 2}}}), instancetype=it(cpu=3), preference=p,
                           admission=True)
    assert e.value.fields == ["instancetype.spec.cpu.guest"]


def test_admission_conflicts():
    with pytest.raises(ConflictError) as e:
        check_requirements(vm(template={"domain": {"cpu": {"sockets": 2}}}), instancetype=it(cpu=2),
                           preference=pref(cpu=1), admission=True)
    assert not isinstance(e.value, SpreadError)
    assert e.value.fields == ["spec.template.spec.domain.cpu.sockets"]
    assert str(e.value) == ("VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected "
                            "instance type")


def test_admission_defaults_error():
    cfg = {"network": {"defaultNetworkInterface": "bridge", "permitBridgeInterfaceOnPodNetwork": False}}
    with pytest.raises(DefaultsError) as e:
        check_requirements(vm(), preference=pref(cpu=1), config=cfg, admission=True)
    assert str(e.value) == "bridge interface is not enabled in kubevirt-config"


def test_admission_does_not_mutate_vm():
    v = vm(template={"domain": {"devices": {"disks": [{"name": "a"}]}}, "volumes": [{"name": "b"}]})
    before = repr(v)
    check_requirements(v, instancetype=it(), preference=pref(memory="1Gi"), admission=True)
    assert repr(v) == before
