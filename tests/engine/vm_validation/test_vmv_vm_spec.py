"""The VM spec's own rules (KubeVirt vms-admitter.go: validateRunStrategy, template metadata,
storage admitters ValidateDataVolumeTemplate and the namespace check, validateVolumeRequests)."""
from __future__ import annotations

import pytest
from vmv_helpers import admit, causes, clean_vm, tspec


@pytest.mark.parametrize("spec, expected", [
    ({"running": True, "runStrategy": "Always"}, [
        ("FieldValueInvalid", "Running and RunStrategy are mutually exclusive. Note that Running is deprecated, please "
         "use RunStrategy instead", "spec.running")]),
    ({"runStrategy": "always"}, [("FieldValueInvalid", "Invalid RunStrategy (always)", "spec.runStrategy")]),
    ({"runStrategy": "WaitAsReceiver"}, [
        ("FieldValueInvalid", "Invalid RunStrategy (WaitAsReceiver), DecentralizedLiveMigration feature gate is not "
         "enabled in kubevirt resource", "spec.runStrategy")]),
    ({}, [("FieldValueInvalid", "RunStrategy must be specified", "spec.running")]),
])
def test_run_strategy(spec, expected):
    vm = clean_vm()
    del vm["spec"]["runStrategy"]
    vm["spec"].update(spec)
    assert causes(vm) == expected


def test_reserved_template_labels():
    vm = clean_vm()
    vm["spec"]["template"]["metadata"]["labels"]["kubevirt.io/created-by"] = "me"
    assert causes(vm) == [("FieldValueNotSupported", "creation of the following reserved kubevirt.io/ labels on a VMI "
                           "object is prohibited", "spec.template.metadata.labels")]


def _dvt(name="root-dv", **spec):
    return {"metadata": {"name": name}, "spec": spec or {"storage": {}, "sourceRef": {"kind": "DataSource", "name": "f"}}}


@pytest.mark.parametrize("dvt, expected", [
    (_dvt(""), [("FieldValueRequired", "'name' field must not be empty for DataVolumeTemplate entry "
                 "spec.dataVolumeTemplate[0].name.", "spec.dataVolumeTemplate[0].name")]),
    (_dvt(sourceRef={"kind": "DataSource", "name": "f"}), [
        ("FieldValueInvalid", "Missing Data volume PVC or Storage", "spec.dataVolumeTemplate[0].PVC.Storage")]),
    (_dvt("other"), [("FieldValueRequired", "DataVolumeTemplate entry spec.dataVolumeTemplate[0] must be referenced "
                      "in the VMI template's 'volumes' list", "spec.dataVolumeTemplate[0]")]),
])
def test_data_volume_templates(dvt, expected):
    vm = clean_vm()
    tspec(vm)["volumes"][0] = {"name": "rootdisk", "dataVolume": {"name": "root-dv"}}
    vm["spec"]["dataVolumeTemplates"] = [dvt]
    assert causes(vm) == expected


def test_data_volume_template_in_another_namespace():
    vm = clean_vm()
    tspec(vm)["volumes"][0] = {"name": "rootdisk", "dataVolume": {"name": "root-dv"}}
    dvt = _dvt()
    dvt["metadata"]["namespace"] = "elsewhere"
    vm["spec"]["dataVolumeTemplates"] = [dvt]
    assert causes(vm) == [("FieldValueInvalid", "Embedded DataVolume namespace elsewhere differs from VM namespace ns",
                           "spec.dataVolumeTemplates[0]")]


def test_status_volume_requests():
    vm = clean_vm()
    vm["status"] = {"volumeRequests": [{"addVolumeOptions": {"name": "hp", "disk": {"name": "hp", "disk": {"bus": "sata"}},
                                                             "volumeSource": {"dataVolume": {"name": "hp"}}}}]}
    assert causes(vm) == [("FieldValueInvalid", "AddVolume request for disk [hp] requires bus to be 'scsi' or "
                           "'virtio'. [sata] is not permitted.", "Status.volumeRequests")]


def test_a_vm_being_deleted_is_let_through():
    vm = clean_vm()
    vm["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    vm["spec"]["runStrategy"] = "bogus"
    assert admit(vm)["allowed"]
