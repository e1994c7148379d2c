"""VM admission: the mutating step then the validating one (engine/vm_admission.py)."""
from __future__ import annotations

import copy

from tests.builders import vm

import instancetype as it


def admit_it(vm, **kw):
    """The instancetype part of VM admission (the admit-vm contract)."""
    return it.admit_vm(vm, whole=False, **kw)

IT = {"cpu": {"guest": 2}, "memory": {"guest": "1Gi"}}
CLUSTER_IT = "VirtualMachineClusterInstancetype"


def test_allowed_vm_is_defaulted_and_inputs_untouched():
    v = vm(instancetype={"name": "u1.small"})
    before = copy.deepcopy(v)
    res = admit_it(v, instancetype=IT)
    assert v == before
    assert res.allowed and res.stage == "validate"
    tspec = res.vm["spec"]["template"]["spec"]
    assert tspec["architecture"] == "amd64" and tspec["domain"]["machine"] == {"type": "q35"}
    assert "cpu" not in tspec["domain"]        # the validating copy is not stored
    assert res.to_dict()["allowed"] is True


def test_matcher_shape_refused_by_the_mutating_step():
    res = admit_it(vm(instancetype={"revisionName": "r"}))
    d = res.to_dict()
    assert (d["allowed"], d["code"], d["reason"], d["stage"]) == (False, 422, "Invalid", "mutate")
    assert d["message"] == "Either Name or InferFromVolume should be provided within the InstancetypeMatcher"
    assert "vm" not in d


def test_update_rename_with_kept_revision():
    old = vm(instancetype={"name": "a", "revisionName": "r"})
    new = vm(instancetype={"name": "b", "revisionName": "r"})
    res = admit_it(new, operation="UPDATE", old=old)
    assert res.causes[0].field == "spec.instancetype.revisionName" and res.stage == "mutate"
    assert admit_it(new, operation="CREATE", old=old).stage == "validate"   # CREATE ignores `old`
    assert admit_it(vm(instancetype={"name": "b", "revisionName": "r2"}), operation="UPDATE", old=old).stage \
        == "validate"


def test_failed_inference_is_a_400_without_causes():
    res = admit_it(vm(instancetype={"inferFromVolume": "root"}))
    d = res.to_dict()
    assert (d["code"], d["message"], d["stage"]) == (400, "unable to find volume root to infer defaults", "mutate")
    assert d["causes"] == [] and "reason" not in d


def test_inferred_instancetype_is_found_and_applied():
    pvc = {"kind": "PersistentVolumeClaim", "metadata": {"name": "disk",
           "labels": {"instancetype.kubevirt.io/default-instancetype": "u1.small"}}}
    stored = {"kind": CLUSTER_IT, "metadata": {"name": "u1.small"}, "spec": {"cpu": {"guest": 1},
                                                                              "memory": {"guest": "1Gi"}}}
    v = vm(instancetype={"inferFromVolume": "root"}, domain={"memory": {"guest": "2Gi"}},
           volumes=[{"name": "root", "persistentVolumeClaim": {"claimName": "disk"}}])
    res = admit_it(v, objects=[pvc, stored])
    # Reject keeps the template memory, which then conflicts with the instancetype
    assert res.stage == "validate" and [c.field for c in res.causes] == ["spec.template.spec.domain.memory.guest"]
    assert res.vm["spec"]["instancetype"] == {"name": "u1.small"}


def test_conflicts_are_one_cause_each():
    res = admit_it(vm(instancetype={"name": "x"}, domain={"cpu": {"sockets": 2, "cores": 2},
                                                          "memory": {"guest": "1Gi"}}), instancetype=IT)
    assert [c.field for c in res.causes] == ["spec.template.spec.domain.cpu.sockets",
                                             "spec.template.spec.domain.cpu.cores",
                                             "spec.template.spec.domain.memory.guest"]
    assert res.message == ", ".join(c.message for c in res.causes)
    assert res.causes[0].message == ("VM field(s) spec.template.spec.domain.cpu.sockets conflicts with "
                                     "selected instance type")


def test_spread_check_runs_before_apply():
    res = admit_it(vm(instancetype={"name": "x"}, preference={"name": "p"}),
                      instancetype={"cpu": {"guest": 3}, "memory": {"guest": "1Gi"}},
                      preference={"cpu": {"preferredCPUTopology": "spread"}})
    assert [(c.reason, c.field) for c in res.causes] == [("FieldValueInvalid", "instancetype.spec.cpu.guest")]
    assert res.causes[0].message.startswith("3 vCPUs provided by the instance type are not divisible")


def test_requirements_failure_is_one_not_found_cause():
    res = admit_it(vm(preference={"name": "p"}),
                      preference={"requirements": {"cpu": {"guest": 2}}})
    assert [c.reason for c in res.causes] == ["FieldValueNotFound"]
    assert res.message == ("failure checking preference requirements: insufficient CPU resources of 1 vCPU "
                           "provided by VirtualMachine, preference requires 2 vCPU provided as sockets")
    assert res.causes[0].field == "spec.template.spec.domain.cpu.sockets"


def test_missing_objects_and_unknown_kinds_are_admitted():
    assert admit_it(vm(instancetype={"name": "nope"})).allowed
    assert admit_it(vm(instancetype={"name": "x", "kind": "vmf"}), instancetype=IT).allowed
    # a whole object is stored under its own name: the matcher's name does not find it
    whole = {"kind": CLUSTER_IT, "metadata": {"name": "other"}, "spec": {"cpu": {"guest": 2},
                                                                         "memory": {"guest": "1Gi"}}}
    assert admit_it(vm(instancetype={"name": "x"}, domain={"cpu": {"sockets": 4}}), instancetype=whole).allowed
    assert not admit_it(vm(instancetype={"name": "x"}, domain={"cpu": {"sockets": 4}}), instancetype=IT).allowed


def test_preferred_values_written_into_the_vm():
    dvts = [{"metadata": {"name": "d1"}, "spec": {"pvc": {}}},
            {"metadata": {"name": "d2"}, "spec": {"storage": {"storageClassName": "mine"}}}]
    res = admit_it(vm(preference={"name": "p"}, dataVolumeTemplates=dvts), preference={
        "preferredArchitecture": "arm64", "machine": {"preferredMachineType": "virt-9"},
        "volumes": {"preferredStorageClassName": "fast"}})
    assert res.allowed
    tspec = res.vm["spec"]["template"]["spec"]
    assert tspec["architecture"] == "arm64" and tspec["domain"]["machine"]["type"] == "virt-9"
    assert res.vm["spec"]["dataVolumeTemplates"][0]["spec"]["pvc"]["storageClassName"] == "fast"
    assert res.vm["spec"]["dataVolumeTemplates"][1]["spec"]["storage"]["storageClassName"] == "mine"


def test_architecture_from_a_datasource_label_and_per_arch_machine_type():
    dvts = [{"metadata": {"name": "d"}, "spec": {"sourceRef": {"kind": "datasource", "name": "ds"}}}]
    ds = {"kind": "DataSource", "metadata": {"name": "ds", "labels": {"template.kubevirt.io/architecture": "s390x"}}}
    res = admit_it(vm(dataVolumeTemplates=dvts), objects=[ds])
    tspec = res.vm["spec"]["template"]["spec"]
    assert tspec["architecture"] == "s390x" and tspec["domain"]["machine"]["type"] == "s390-ccw-virtio"
    ds["metadata"]["labels"]["template.kubevirt.io/architecture"] = "riscv"   # unknown: ignored
    assert admit_it(vm(dataVolumeTemplates=dvts), objects=[ds]).vm["spec"]["template"]["spec"]["architecture"] == "amd64"


def test_defaults_failure_is_a_400_in_the_validating_step():
    cfg = {"network": {"defaultNetworkInterface": "bridge", "permitBridgeInterfaceOnPodNetwork": False}}
    d = admit_it(vm(), config=cfg).to_dict()
    assert (d["code"], d["message"], d["stage"]) == (400, "bridge interface is not enabled in kubevirt-config",
                                                     "validate")
    assert "vm" in d


def test_deleted_vm_is_let_through():
    v = vm(instancetype={"revisionName": "r"})
    v["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert admit_it(v).allowed


def test_malformed_vm_is_a_400():
    d = admit_it({"spec": {"instancetype": "u1.small"}}).to_dict()
    assert d["code"] == 400 and "spec.instancetype" in d["message"]
