"""The VM mutator's and the VM controller's defaults of v1.9 (engine/vm_mutate.py
`set_create_defaults`, controller/vmsync/pci_topology.py), on both stores."""
from __future__ import annotations

import uuid

from instancetype.engine.vmi import FIRMWARE_UUID_NAMESPACE
from tests.controller.day2_helpers import SMALL, edit, restart_required, vm

PCI = "kubevirt.io/pci-topology-version"
SLOTS = "kubevirt.io/pci-interface-slot-count"


def _template_annotations(obj: dict) -> dict:
    return (obj["spec"]["template"].get("metadata") or {}).get("annotations") or {}


def test_a_created_vm_gets_the_pci_topology_annotation_and_keeps_it(any_cluster):
    """vm-mutator.go on CREATE: v3 on a PCIe topology (q35), kept by the VMI; the controller
    writes it back (syncPCITopologyAnnotationsToVM) once its owner removed it, without a restart;
    the firmware stays the seeds' (seed 001: none on the VM, the name-based UUID on the VMI)."""
    cluster = any_cluster
    cluster.apply(SMALL)
    cluster.apply(vm())
    stored = cluster.get("VirtualMachine", "vm1")
    assert _template_annotations(stored) == {PCI: "v3"}
    assert "firmware" not in stored["spec"]["template"]["spec"]["domain"]
    vmi = cluster.get("VirtualMachineInstance", "vm1")
    assert vmi["metadata"]["annotations"][PCI] == "v3"
    assert vmi["spec"]["domain"]["firmware"]["uuid"] == str(uuid.uuid5(FIRMWARE_UUID_NAMESPACE, "vm1"))

    def remove(obj):
        obj["spec"]["template"]["metadata"]["annotations"].pop(PCI)
    generation = stored["metadata"]["generation"]
    edit(cluster, "vm1", remove)
    again = cluster.get("VirtualMachine", "vm1")
    assert _template_annotations(again) == {PCI: "v3"}
    assert again["metadata"]["generation"] == generation + 2       # the owner's update, the controller's
    assert restart_required(cluster) is None


def test_the_annotation_is_only_given_at_creation_and_never_changed(any_cluster):
    """Not by an update (the mutator's default is CREATE's; a stopped VM has no VMI to copy it
    from), and a version the VM already carries stays as it is, on the VMI too."""
    cluster = any_cluster
    cluster.apply(SMALL)
    cluster.apply(vm("halted", strategy="Halted"))

    def remove(obj):
        obj["spec"]["template"]["metadata"]["annotations"].pop(PCI)
    edit(cluster, "halted", remove)
    assert _template_annotations(cluster.get("VirtualMachine", "halted")) == {}
    older = vm("older", strategy="Halted")
    older["spec"]["template"]["metadata"] = {"annotations": {PCI: "v2", SLOTS: "3"}}
    cluster.apply(older)
    cluster.start("older")
    assert _template_annotations(cluster.get("VirtualMachine", "older")) == {PCI: "v2", SLOTS: "3"}
    assert cluster.get("VirtualMachineInstance", "older")["metadata"]["annotations"][PCI] == "v2"


def test_pcie_hotplug_topologies():
    """defaults.SupportsPCIeHotplug, as the VM and VMI mutators read it."""
    from instancetype.engine.vmi_mutate import supports_pcie_hotplug

    assert supports_pcie_hotplug({})
    assert supports_pcie_hotplug({"architecture": "amd64", "domain": {"machine": {"type": "pc-q35-rhel9.6.0"}}})
    assert supports_pcie_hotplug({"architecture": "arm64", "domain": {"machine": {"type": "virt"}}})
    assert not supports_pcie_hotplug({"architecture": "amd64", "domain": {"machine": {"type": "pc-i440fx-2.12"}}})
    assert not supports_pcie_hotplug({"architecture": "amd64", "domain": {"machine": {}}})
    assert not supports_pcie_hotplug({"architecture": "s390x", "domain": {"machine": {"type": "s390-ccw-virtio"}}})
