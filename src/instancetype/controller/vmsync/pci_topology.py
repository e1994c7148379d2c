"""The VMI's PCI topology annotations kept on the VM (KubeVirt's `syncPCITopologyAnnotationsToVM`,
pkg/virt-controller/watch/vm/vm.go).

The VM mutator gives a VM created on a PCIe topology `kubevirt.io/pci-topology-version: v3` in its
template's metadata (engine/vm_mutate.py `set_create_defaults`), and the VMI mutator gives it to
every such VMI. A VM whose template has none (created before, or its owner removed it) while its
VMI has one gets the VMI's version, and its `kubevirt.io/pci-interface-slot-count` when the VMI
has one, written into the template: the next VMI keeps the guest's PCI addresses. An annotation
the template already has is never changed.
"""
from __future__ import annotations

from instancetype.engine.vmi_mutate import PCI_TOPOLOGY_ANNOTATION

from .state import VMSync

SLOT_COUNT_ANNOTATION = "kubevirt.io/pci-interface-slot-count"     # PciInterfaceSlotCountAnnotation


def _annotations(meta) -> dict:
    got = meta.get("annotations") if isinstance(meta, dict) else None
    return got if isinstance(got, dict) else {}


def sync(s: VMSync) -> dict | None:
    if s.vmi is None:
        return None
    vmi_annotations = _annotations(s.vmi.get("metadata"))
    version = vmi_annotations.get(PCI_TOPOLOGY_ANNOTATION)
    if not version:
        return None
    spec = s.stored.get("spec") or {}
    template = spec.get("template")
    if not isinstance(template, dict) or _annotations(template.get("metadata")).get(PCI_TOPOLOGY_ANNOTATION):
        return None
    meta = template.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    annotations = {**_annotations(meta), PCI_TOPOLOGY_ANNOTATION: version}
    if SLOT_COUNT_ANNOTATION in vmi_annotations:
        annotations[SLOT_COUNT_ANNOTATION] = vmi_annotations[SLOT_COUNT_ANNOTATION]
    new_spec = {**spec, "template": {**template, "metadata": {**meta, "annotations": annotations}}}
    # The VM updated on the resourceVersion read (v1.9's final Update of the VM); the steps go
    # on from the VM as written.
    return s.restart_from(s.store.update({**s.stored, "spec": new_spec}))
