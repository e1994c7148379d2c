"""Devices and their feature gates, probes, strategies, cloud-init and access credentials
(KubeVirt vmi-create-admitter.go)."""
from __future__ import annotations

import base64

import pytest
from vmv_helpers import causes, clean_vm, tspec

T = "spec.template.spec"


def _devices(vm):
    return tspec(vm)["domain"]["devices"]


@pytest.mark.parametrize("edit, expected", [
    (lambda vm: _devices(vm).update(hostDevices=[{"name": "h", "deviceName": "vendor.com/dev"}]), [
        ("FieldValueInvalid", "Host Devices feature gate is not enabled in kubevirt-config", f"{T}.HostDevices")]),
    (lambda vm: _devices(vm).update(autoattachVSOCK=True), [
        ("FieldValueInvalid", "VSOCK feature gate is not enabled in kubevirt-config",
         f"{T}.domain.devices.autoattachVSOCK")]),
    (lambda vm: _devices(vm).update(inputs=[{"name": "kbd", "type": "keyboard", "bus": "ps2"}]), [
        ("FieldValueInvalid", "Input device can have only virtio or usb bus.", f"{T}.domain.devices.inputs[0].bus"),
        ("FieldValueInvalid", "Input device can have only tablet type.", f"{T}.domain.devices.inputs[0].type")]),
    (lambda vm: _devices(vm).update(gpus=[{"name": "gpu1"}]), [
        ("FieldValueRequired", "vmi.spec.domain.devices.gpus contains GPUs without deviceName or claimRequest; each "
         "GPU must specify either a deviceName or a claimRequest", f"{T}.domain.devices.gpus")]),
    (lambda vm: tspec(vm).update(livenessProbe={"exec": {"command": ["true"]}, "guestAgentPing": {}}), [
        ("FieldValueInvalid", f"{T}.livenessProbe must have exactly one probe type set", f"{T}.livenessProbe")]),
    (lambda vm: tspec(vm).update(startStrategy="Stopped"), [
        ("FieldValueInvalid", f"{T}.startStrategy is set with an unrecognized option: Stopped", f"{T}.startStrategy")]),
    (lambda vm: tspec(vm).update(evictionStrategy="Migrate"), [
        ("FieldValueInvalid", f"{T}.evictionStrategy is set with an unrecognized option: Migrate",
         f"{T}.evictionStrategy")]),
    (lambda vm: tspec(vm).update(hostname="My_Host"), [
        ("FieldValueInvalid", f"{T}.hostname does not conform to the kubernetes DNS_LABEL rules : a lowercase RFC 1123 "
         "label must consist of lower case alphanumeric characters or '-', and must start and end with an "
         "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')", f"{T}.hostname")]),
    (lambda vm: tspec(vm)["domain"].update(ioThreadsPolicy="dedicated"), [
        ("FieldValueInvalid", "Invalid IOThreadsPolicy (dedicated)", f"{T}.domain.ioThreadsPolicy")]),
])
def test_device_and_strategy_rules(edit, expected):
    vm = clean_vm()
    edit(vm)
    assert causes(vm) == expected


def test_feature_gates_from_the_configuration():
    vm = clean_vm()
    _devices(vm).update(autoattachVSOCK=True, hostDevices=[{"name": "h", "deviceName": "vendor.com/dev"}])
    assert causes(vm, config={"developerConfiguration": {"featureGates": ["VSOCK", "HostDevices"]}}) == []


def _cloud_init(vm):
    return tspec(vm)["volumes"][1]["cloudInitNoCloud"]


@pytest.mark.parametrize("source, message, field", [
    ({"userData": "x" * 2049}, f"{T}.volumes[1].cloudInitNoCloud userdata exceeds 2048 byte limit. Should use "
     "UserDataSecretRef for larger data.", f"{T}.volumes[1].cloudInitNoCloud"),
    ({"userData": "#cloud-config", "userDataBase64": base64.b64encode(b"#cloud-config").decode()},
     f"{T}.volumes[1].cloudInitNoCloud must have only one userdatasource set.", f"{T}.volumes[1].cloudInitNoCloud"),
    ({"userDataBase64": "!!"}, f"{T}.volumes[1].cloudInitNoCloud.userDataBase64.cloudInitNoCloud.userDataBase64 is "
     "not a valid base64 value.", f"{T}.volumes[1].cloudInitNoCloud.userDataBase64"),
    ({}, f"{T}.volumes[1].cloudInitNoCloud must have at least one userdatasource or one networkdatasource set.",
     f"{T}.volumes[1].cloudInitNoCloud"),
])
def test_cloud_init(source, message, field):
    vm = clean_vm()
    tspec(vm)["volumes"][1]["cloudInitNoCloud"] = source
    assert causes(vm) == [("FieldValueInvalid", message, field)]


def test_cloud_init_secret_ref_is_a_user_data_source():
    vm = clean_vm()
    tspec(vm)["volumes"][1]["cloudInitNoCloud"] = {"secretRef": {"name": "s"}}
    assert causes(vm) == []


def test_access_credentials():
    vm = clean_vm()
    tspec(vm)["accessCredentials"] = [{"sshPublicKey": {"source": {"secret": {"secretName": "k"}},
                                                        "propagationMethod": {"configDrive": {}}}},
                                      {"sshPublicKey": {"source": {"secret": {"secretName": "k"}},
                                                        "propagationMethod": {}}}]
    at = f"{T}.accessCredentials"
    assert causes(vm) == [
        ("FieldValueInvalid", f"{at}[0] requires a configDrive volume to exist when the configDrive propagationMethod "
         "is in use.", f"{at}[0].sshPublicKey.propagationMethod"),
        ("FieldValueInvalid", f"{at}[1] must have exactly one propagationMethod set",
         f"{at}[1].sshPublicKey.propagationMethod"),
    ]


@pytest.mark.parametrize("edit, expected", [
    (lambda vm: tspec(vm).update(topologySpreadConstraints=[{"maxSkew": 0, "topologyKey": "zone",
                                                              "whenUnsatisfiable": "DoNotSchedule"}]),
     [("FieldValueInvalid", f"{T}.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
       f"{T}.topologySpreadConstraints[0].maxSkew")]),
    (lambda vm: tspec(vm).update(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In"}]}]}}}),
     [("FieldValueInvalid", f"{T}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
       "matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
       f"{T}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
       "matchExpressions[0].values")]),
    (lambda vm: tspec(vm).update(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": ""}]}}),
     [("FieldValueInvalid", f"{T}.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: "
       "Required value: can not be empty",
       f"{T}.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"),
      ("FieldValueInvalid", f'{T}.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: '
       'Invalid value: "": name part must be non-empty',
       f"{T}.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"),
      ("FieldValueInvalid", f'{T}.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: '
       "Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
       "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
       "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
       f"{T}.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey")]),
])
def test_scheduling_rules(edit, expected):
    vm = clean_vm()
    edit(vm)
    assert causes(vm) == expected


def test_valid_scheduling_is_admitted():
    vm = clean_vm()
    tspec(vm).update(nodeSelector={"disk": "ssd"}, tolerations=[{"key": "gpu", "operator": "Exists"}],
                     affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                         "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In",
                                                                       "values": ["a"]}]}]}}},
                     topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone",
                                                 "whenUnsatisfiable": "ScheduleAnyway"}])
    assert causes(vm) == []
