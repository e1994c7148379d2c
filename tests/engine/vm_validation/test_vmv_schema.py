"""The VirtualMachine schema check (KubeVirt ValidateSchema): refused by the mutating webhook."""
from __future__ import annotations

import pytest
from vmv_helpers import admit, clean_vm, tspec

from instancetype.engine.vm_validation import check_vm_schema


def _schema_message(vm):
    res = admit(vm)
    assert res["stage"] == "mutate" and res["code"] == 422 and res["reason"] == "Invalid"
    assert len(res["causes"]) == 1
    return res["message"]


@pytest.mark.parametrize("edit, message", [
    (lambda vm: vm["spec"].pop("template"), "spec.template in body is required"),
    (lambda vm: vm["spec"].update(runstrategy="Always"), "spec.runstrategy in body is a forbidden property"),
    (lambda vm: vm["spec"].update(instanceType={"name": "u1.small"}), "spec.instanceType in body is a forbidden property"),
    (lambda vm: tspec(vm)["domain"].update(devcies={}), "spec.template.spec.domain.devcies in body is a forbidden property"),
    (lambda vm: tspec(vm)["domain"]["devices"]["disks"][0].update(size="10Gi"),
     "spec.template.spec.domain.devices.disks.size in body is a forbidden property"),
    (lambda vm: tspec(vm).update(tolerations={"key": "a"}),
     'spec.template.spec.tolerations in body must be of type array: "object"'),
    (lambda vm: tspec(vm).update(affinity=[]), 'spec.template.spec.affinity in body must be of type object: "array"'),
    (lambda vm: tspec(vm).update(nodeSelector={"nodeAffinity": {}}),
     'spec.template.spec.nodeSelector.nodeAffinity in body must be of type string: "object"'),
    (lambda vm: tspec(vm).update(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Is"}]}]}}}),
     "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms."
     "matchExpressions.operator in body should be one of [DoesNotExist Exists Gt In Lt NotIn]"),
    (lambda vm: tspec(vm)["domain"]["devices"]["disks"][0].pop("name"),
     "spec.template.spec.domain.devices.disks.name in body is required"),
])
def test_schema_causes(edit, message):
    vm = clean_vm()
    edit(vm)
    assert _schema_message(vm) == message


def test_metadata_is_open_and_null_is_absent():
    vm = clean_vm()
    vm["metadata"]["anything"] = {"goes": 1}
    tspec(vm)["hostname"] = None
    assert check_vm_schema(vm) == []


def test_causes_carry_only_a_message():
    vm = clean_vm()
    vm["spec"]["bogus"] = 1
    assert admit(vm)["causes"] == [{"reason": "", "message": "spec.bogus in body is a forbidden property", "field": ""}]


@pytest.mark.parametrize("sockets, message", [
    (2.0, "json: cannot unmarshal number 2.0 into Go struct field VirtualMachine.spec.template.spec.domain.cpu.sockets "
          "of type uint32"),
    (-1, "json: cannot unmarshal number -1 into Go struct field VirtualMachine.spec.template.spec.domain.cpu.sockets "
         "of type uint32"),
])
def test_what_the_schema_accepts_but_go_cannot_decode_is_a_400(sockets, message):
    vm = clean_vm()
    tspec(vm)["domain"]["cpu"] = {"sockets": sockets}
    res = admit(vm)
    assert (res["code"], res["message"], res["stage"]) == (400, message, "mutate")


def test_a_null_list_item_decodes_as_the_zero_value():
    vm = clean_vm()
    tspec(vm)["domain"]["devices"]["disks"].append(None)
    res = admit(vm)
    # Go's zero Disk has no name: no volume of that name, and "" is not a DNS label.
    assert [c["field"] for c in res["causes"]][:1] == ["spec.template.spec.domain.devices.disks[2].name"]


def test_a_null_item_where_the_decoder_does_not_look_is_the_zero_value_too():
    vm = clean_vm()
    tspec(vm)["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [None]}]}}}
    at = ("spec.template.spec.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
          "matchExpressions[0]")
    res = admit(vm)
    assert res["causes"][0]["field"] == f"{at}.operator"


def test_metadata_fields_keep_their_types():
    vm = clean_vm()
    vm["metadata"]["labels"] = ["a"]
    assert _schema_message(vm) == 'metadata.labels in body must be of type object: "array"'


def test_managed_fields_are_opaque():
    """metav1.FieldsV1 is opaque JSON (x-kubernetes-preserve-unknown-fields): the field sets the
    API server records (`f:spec`, `.`) are neither refused nor reported as unknown fields."""
    from instancetype.engine.vm_validation.schema import unknown_fields

    vm = clean_vm()
    vm["metadata"]["managedFields"] = [{
        "manager": "kubectl", "operation": "Update", "apiVersion": "kubevirt.io/v1", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {".": {}, "f:runStrategy": {}}}}]
    assert check_vm_schema(vm) == []
    assert unknown_fields(vm) == []
    assert admit(vm)["allowed"] is True
