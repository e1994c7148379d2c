"""The VM mutating webhook's instancetype part (step 1 of VM admission).

    mutate_vm(vm, index, *, operation="CREATE", old=None, config=None) -> (list[Cause] | None, dict | None)

Works in place on `vm` (a private copy from `vm_decode.load_vm`). Returns the causes
of a refusal (422) or None, and the preference spec found in step 4 (None when absent or not
found): nothing after step 4 changes the matcher, so the validating step reads the same one;
raises `InferError` when inference fails (a 400).
KubeVirt, in order:

1. UPDATE: a matcher renamed while keeping its revisionName is refused
   (pkg/instancetype/webhooks/vm/mutator.go validateMatcherUpdate);
2. the matchers' shape (validateInstancetypeMatcher / validatePreferenceMatcher);
3. inference from volumes (pkg/instancetype/infer), instancetype then preference;
4. from the preference found (a failed lookup is ignored): `preferredArchitecture`,
   `machine.preferredMachineType` and `volumes.preferredStorageClassName` written into
   the VM where it has none;
5. the VM defaults (pkg/defaults SetVirtualMachineDefaults): the architecture from a
   DataSource's `template.kubevirt.io/architecture` label (setDefaultArchitectureFromDataSource),
   else the cluster default; then the machine type for that architecture.

`set_create_defaults` is the rest of v1.9's VM mutator (vm-mutator.go), on CREATE only and
outside the `admit-vm` contract (whose answers stop at step 5): the template's PCI topology
annotation. v1.9's mutator also gives a created VM a random firmware UUID and serial
(setFirmwareDefaultsIfEmpty), and its VM controller persists the name-based UUID on a VM
without one (the firmware synchronizer); both would change seed 001's shown output (the VM's
template without `firmware`, the VMI's UUID the one derived from the VM's name), and the seeds
win: the VMI alone gets the name-based UUID (setupStableFirmwareUUID, engine/vmi.py).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from instancetype.engine import matchers, vm_fields
from instancetype.engine.find import find_preference_or_none
from instancetype.engine.infer import infer_in_place
from instancetype.engine.jsondata import child
from instancetype.engine.objects import ObjectIndex
from instancetype.engine.results import Cause
from instancetype.engine.virt_config import cluster_config
from instancetype.engine.vmi_mutate import set_default_pci_topology_version, supports_pcie_hotplug

DATASOURCE_ARCH_LABEL = "template.kubevirt.io/architecture"
_KNOWN_ARCHES = ("amd64", "arm64", "s390x")


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def apply_preferred_vm_values(vm: dict[str, Any], preference: dict[str, Any] | None) -> None:
    """Write the preference's architecture, machine type and storage class into the VM."""
    if not preference:
        return
    spec = vm["spec"]
    arch = preference.get("preferredArchitecture")
    tspec = vm_fields.template_spec(spec, create=True)
    if arch and not tspec.get("architecture"):
        tspec["architecture"] = arch
    machine_type = _dict(preference.get("machine")).get("preferredMachineType")
    if machine_type:
        machine = child(child(tspec, "domain"), "machine")
        if not machine.get("type"):
            machine["type"] = machine_type
    storage_class = _dict(preference.get("volumes")).get("preferredStorageClassName")
    if storage_class:
        for dvt in vm_fields.data_volume_templates(spec):
            dvspec = _dict(dvt.get("spec"))
            for claim in ("pvc", "storage"):
                c = dvspec.get(claim)
                if isinstance(c, dict) and c.get("storageClassName") is None:
                    c["storageClassName"] = storage_class


def _architecture_from_datasource(vm: dict[str, Any], index: ObjectIndex) -> str:
    """KubeVirt's setDefaultArchitectureFromDataSource: the first dataVolumeTemplate whose
    sourceRef names a DataSource (any case) that exists and carries a known architecture label."""
    vm_ns = index.default_namespace
    for dvt in vm_fields.data_volume_templates(vm["spec"]):
        ref = _dict(_dict(dvt.get("spec")).get("sourceRef"))
        kind = ref.get("kind")
        if not isinstance(kind, str) or kind.lower() != "datasource":
            continue
        ns = ref.get("namespace") or vm_ns
        ds = index.get("DataSource", ref.get("name") or "", ns)
        if ds is None:
            continue    # "ignoring failure to find datasource during vm mutation"
        source = _dict(_dict(ds.get("spec")).get("source"))
        if source.get("dataSource") is not None:
            # A DataSource pointing at another DataSource: read the target's label. Its
            # namespace is taken as given, as KubeVirt does: an empty one is a GET in
            # namespace "", which finds nothing (and the template is skipped).
            target = _dict(source["dataSource"])
            target_ns = got if isinstance(got := target.get("namespace"), str) else ""
            target_name = got if isinstance(got := target.get("name"), str) else ""
            ds = index.get("DataSource", target_name, target_ns) if target_ns else None
            if ds is None:
                continue
        arch = _dict(_dict(ds.get("metadata")).get("labels")).get(DATASOURCE_ARCH_LABEL)
        if arch is None:
            continue
        if arch in _KNOWN_ARCHES:
            return str(arch)
        # an unknown architecture label is ignored (logged by KubeVirt); try the next template
    return ""


def set_vm_defaults(vm: dict[str, Any], index: ObjectIndex, config: Any = None) -> None:
    """SetVirtualMachineDefaults: architecture (DataSource label, cluster default), machine type."""
    cfg = cluster_config(config)
    tspec = vm_fields.template_spec(vm["spec"], create=True)
    if not tspec.get("architecture"):
        arch = _architecture_from_datasource(vm, index)
        tspec["architecture"] = arch or cfg.default_architecture
    machine = child(child(tspec, "domain"), "machine")
    if not machine.get("type"):
        machine["type"] = cfg.machine_type_for(tspec["architecture"])


def mutate_vm(vm: dict[str, Any], index: ObjectIndex, *, operation: str = "CREATE", old: Mapping[str, Any] | None = None,
              config: Any = None) -> tuple[list[Cause] | None, dict[str, Any] | None]:
    """The VM mutating webhook on `vm` in place: (causes of a refusal, or None when it passes;
    the preference spec it found).

    Raises `InferError` when inference fails (KubeVirt answers 400 with its text).
    """
    if operation == "UPDATE":
        causes = matchers.check_matcher_update(old if old is not None else vm, vm)
        if causes:
            return causes, None
    causes = matchers.check_matcher_shapes(vm)
    if causes:
        return causes, None
    infer_in_place(vm, index)
    preference = find_preference_or_none(vm, index)
    apply_preferred_vm_values(vm, preference)
    set_vm_defaults(vm, index, config)
    return None, preference


def set_create_defaults(vm: dict[str, Any]) -> None:
    """The VM mutator's CREATE-only defaults after SetVirtualMachineDefaults: a template on a
    PCIe topology gets `kubevirt.io/pci-topology-version: v3` in its metadata (unless set), which
    the VMIs started from it carry and which keeps the guest's PCI addresses across restarts."""
    template = vm["spec"].get("template")
    if not isinstance(template, dict):
        return
    spec = template.get("spec")
    if supports_pcie_hotplug(spec if isinstance(spec, dict) else {}):
        set_default_pci_topology_version(child(template, "metadata"))
