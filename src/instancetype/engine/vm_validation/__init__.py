"""KubeVirt v1.9's VirtualMachine validation rules, one module per concern.

    check_vm_schema(vm) -> list[Cause]                      schema.py (ValidateSchema)
    validate_vm_after_apply(vm, tspec, tmeta, *, operation, old, config) -> (causes, warnings)
        everything the VM validating webhook checks after the instancetype is applied and the
        VMI spec defaults are set on its copy of the template (`tspec`, `tmeta`): on CREATE the
        network validator's creation rules; ValidateVirtualMachineSpec; the storage admitter;
        the status volume requests; then the warnings (`spec.running`).

The modules: schema, metadata, disks (disks, volumes, boot order), cloudinit (cloud-init and
access credentials), cpu, memory (and hugepages), firmware (and machine type, architecture,
launch security), networks (and interfaces), probes, strategies (start, eviction, IO threads,
DNS, names), devices (and their feature gates), run_strategy (and live-update limits),
data_volume_templates, volume_requests; spec.py runs them in KubeVirt's order. `Gates` reads the
feature gates as virt-config does (a Beta gate on unless disabled): every layer asks it.
"""
from __future__ import annotations

from instancetype.engine.vm_validation._common import Gates
from instancetype.engine.vm_validation.schema import check_vm_schema
from instancetype.engine.vm_validation.validate import validate_vm_after_apply

__all__ = ["Gates", "check_vm_schema", "validate_vm_after_apply"]
