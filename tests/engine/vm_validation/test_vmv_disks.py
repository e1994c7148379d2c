"""Disks, volumes and boot order (KubeVirt storage admitters: ValidateDisks, validateBootOrder,
validateVolumes, ValidateContainerDisks)."""
from __future__ import annotations

import pytest
from vmv_helpers import causes, clean_vm, tspec

T = "spec.template.spec"
DISKS = f"{T}.domain.devices.disks"


def _disks(vm):
    return tspec(vm)["domain"]["devices"]["disks"]


@pytest.mark.parametrize("edit, expected", [
    (lambda vm: _disks(vm).append({"name": "extra"}),
     [("FieldValueInvalid", f"{DISKS}[2].Name 'extra' not found.", f"{DISKS}[2].name")]),
    (lambda vm: _disks(vm).append({"name": "rootdisk"}),
     [("FieldValueInvalid", f"{DISKS}[2] and {DISKS}[0] must not have the same Name.", f"{DISKS}[2].name")]),
    (lambda vm: _disks(vm)[0].update(bootOrder=0),
     [("FieldValueInvalid", f"{DISKS}[0] must have a boot order > 0, if supplied", f"{DISKS}[0].bootOrder")]),
    (lambda vm: [d.update(bootOrder=1) for d in _disks(vm)],
     [("FieldValueInvalid", f"Boot order for {DISKS}[1].bootOrder already set for a different device.",
       f"{DISKS}[1].bootOrder")]),
    (lambda vm: _disks(vm)[0].update(disk={"bus": "ide"}),
     [("FieldValueInvalid", "IDE bus is not supported", f"{DISKS}[0].disk.bus")]),
    (lambda vm: _disks(vm)[0].update(disk=None, cdrom={"bus": "virtio"}),
     [("FieldValueInvalid", "Bus type virtio is invalid for CD-ROM device", f"{DISKS}[0].cdrom.bus")]),
    (lambda vm: _disks(vm)[0].update(disk=None, lun={}),
     [("FieldValueInvalid", f"{DISKS}[0].lun can only be mapped to a DataVolume or PersistentVolumeClaim volume.",
       f"{DISKS}[0].lun")]),
    (lambda vm: _disks(vm)[0].update(serial="a b"),
     [("FieldValueInvalid", f"{DISKS}[0] must be made up of the following characters [A-Za-z0-9_.+-], if specified",
       f"{DISKS}[0].serial")]),
    (lambda vm: _disks(vm)[0].update(errorPolicy="explode"),
     [("FieldValueInvalid", f'{DISKS}[0].errorPolicy has invalid value "explode"', f"{DISKS}[0].errorPolicy")]),
    (lambda vm: _disks(vm)[0].update(disk={"bus": "sata"}, dedicatedIOThread=True),
     [("FieldValueNotSupported", "IOThreads are not supported for disks on a sata bus",
       f"{DISKS}.domain.devices.disks[0]")]),
    (lambda vm: _disks(vm)[0].update(disk={"bus": "virtio", "pciAddress": "0000:81:01.10"}),
     [("FieldValueInvalid", f"disk {DISKS}.domain.devices.disks.disk[0].name has malformed PCI address "
       "(0000:81:01.10).", f"{DISKS}.domain.devices.disks.disk[0].pciAddress")]),
])
def test_disk_rules(edit, expected):
    vm = clean_vm()
    edit(vm)
    assert causes(vm) == expected


@pytest.mark.parametrize("name, message", [
    ("root.disk", "must not contain dots"),
    ("a" * 64, "must be no more than 63 characters"),
    ("Root_Disk", "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
     "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
])
def test_disk_names_are_dns_labels(name, message):
    vm = clean_vm()
    _disks(vm)[0]["name"] = name
    tspec(vm)["volumes"][0]["name"] = name
    assert causes(vm) == [("FieldValueInvalid", message, f"{DISKS}.domain.devices.disks[0].name")]


def test_volume_rules():
    vm = clean_vm()
    vols = tspec(vm)["volumes"]
    vols.append({"name": "sa1", "serviceAccount": {"serviceAccountName": "a"}})
    vols.append({"name": "sa2", "serviceAccount": {"serviceAccountName": "b"}})
    vols.append({"name": "hd", "hostDisk": {"path": "/x", "type": "Disk"}})
    assert causes(vm) == [
        ("FieldValueInvalid", "HostDisk feature gate is not enabled", f"{T}.volumes[4]"),
        ("FieldValueInvalid", f"{T}.volumes must have max one serviceAccount volume set", f"{T}.volumes"),
    ]
    assert causes(vm, config={"developerConfiguration": {"featureGates": ["HostDisk"]}}) == [
        ("FieldValueInvalid", f"{T}.volumes must have max one serviceAccount volume set", f"{T}.volumes")]


def test_volume_with_two_sources_and_container_disk_path():
    vm = clean_vm()
    tspec(vm)["volumes"][0]["emptyDisk"] = {"capacity": "1Gi"}
    tspec(vm)["volumes"][0]["containerDisk"]["path"] = "/a/../b"
    assert causes(vm) == [
        ("FieldValueInvalid", f"{T}.volumes[0] must have exactly one source type set", f"{T}.volumes[0]"),
        ("FieldValueInvalid", f"{T}.volumes[0].containerDisk must be an absolute path to a file without relative "
         "components", f"{T}.volumes[0].containerDisk"),
    ]


def test_downward_metrics_volume_needs_a_virtio_disk_and_its_gate():
    vm = clean_vm()
    tspec(vm)["volumes"].append({"name": "metrics", "downwardMetrics": {}})
    _disks(vm).append({"name": "metrics", "cdrom": {"bus": "sata"}})
    assert causes(vm) == [
        ("FieldValueRequired", f"DownwardMetrics volume must be mapped to a disk, but disk is not set on "
         f"{DISKS}[2].disk.", f"{DISKS}[2].disk"),
        ("FieldValueInvalid", "downwardMetrics disks are not allowed: DownwardMetrics feature gate is not enabled.",
         f"{T}.volumes[2]"),
    ]


def test_an_empty_cdrom_needs_declarative_hotplug_a_beta_gate_on_unless_disabled():
    # vmi-create-admitter's validateBootOrder asks DeclarativeHotplugVolumesEnabled(): Beta in
    # v1.9, so an empty CD-ROM (a disk with no volume, to be hot-plugged later) is admitted by default.
    vm = clean_vm()
    _disks(vm).append({"name": "cd", "cdrom": {"bus": "sata"}})
    assert causes(vm) == []
    disabled = {"developerConfiguration": {"disabledFeatureGates": ["DeclarativeHotplugVolumes"]}}
    assert causes(vm, config=disabled) == [
        ("FieldValueInvalid", "DeclarativeHotplugVolumes feature gate not enabled, cannot define an empty CD-ROM disk",
         f"{DISKS}[2].name")]
