"""KubeVirt's ValidateVirtualMachineInstanceSpec (vmi-create-admitter.go) and
ValidateVirtualMachineSpec (vms-admitter.go): every rule module, in KubeVirt's order."""
from __future__ import annotations

from typing import Any

from instancetype.engine.vm_validation import (
    cloudinit, cpu, data_volume_templates, devices, disks, firmware, memory, metadata, networks, probes,
    run_strategy, strategies,
)
from instancetype.engine.vm_validation._common import REQUIRED, Gates, cause, d, items
from instancetype.engine.vmi_defaults import cluster_config


class Context:
    """What the rules read of the cluster configuration."""

    __slots__ = ("raw", "gates", "live_update", "default_arch", "permit_bridge_on_pod", "eviction_strategy")

    def __init__(self, config: Any):
        cfg = cluster_config(config)
        self.raw = d(config)
        self.gates = Gates(config)
        self.live_update = cfg.rollout_live_update
        self.default_arch = cfg.default_architecture
        self.permit_bridge_on_pod = cfg.permit_bridge_on_pod_network
        ev = self.raw.get("evictionStrategy")
        self.eviction_strategy = ev


def validate_vmi_spec(field: str, spec: dict, ctx: Context) -> list:
    """ValidateVirtualMachineInstanceSpec on a VMI spec (a VM's defaulted template copy)."""
    gates = ctx.gates
    domain = d(spec.get("domain"))
    causes = []
    causes += strategies.validate_names(field, spec)
    causes += memory.validate_memory(field, spec, ctx.live_update)
    causes += firmware.validate_emulated_machine(field, spec, ctx.raw)
    causes += firmware.validate_acpi(f"{field}.acpi", spec)
    causes += cpu.validate_cpu_resources(field, spec)
    causes += cpu.validate_cpu_pinning(field, spec, ctx.default_arch)
    causes += cpu.validate_numa(field, spec, gates)
    causes += cpu.validate_cpu_misc(field, spec)
    causes += strategies.validate_start_strategy(field, spec)
    causes += cpu.validate_realtime(field, spec)
    # (validateArchitecture: MultiArchitecture is GA in v1.9, any architecture passes here)
    causes += networks.validate_networks(field, spec, ctx.permit_bridge_on_pod)
    causes += devices.validate_gpus(field, spec, gates)
    causes += disks.validate_boot_order(field, spec, gates)
    causes += devices.validate_input_devices(field, spec)
    causes += strategies.validate_io_threads_policy(field, spec)
    causes += probes.validate_probes(field, spec)
    # validateDomainSpec
    causes += disks.validate_disks(f"{field}.domain.devices.disks", items(d(domain.get("devices")).get("disks")))
    causes += firmware.validate_firmware(f"{field}.domain.firmware", domain.get("firmware"))
    causes += firmware.validate_secure_boot_smm(f"{field}.domain", domain)
    causes += disks.validate_volumes(f"{field}.volumes", items(spec.get("volumes")), gates)
    causes += disks.validate_container_disks(field, spec)
    causes += cloudinit.validate_access_credentials(f"{field}.accessCredentials", items(spec.get("accessCredentials")),
                                                    spec.get("volumes"))
    causes += strategies.validate_dns(field, spec)
    causes += strategies.validate_eviction_strategy(field, spec, ctx.eviction_strategy)
    causes += devices.validate_device_gates(field, spec, gates, ctx.default_arch)
    causes += firmware.validate_launch_security(field, spec, gates)
    causes += devices.validate_device_gates_late(field, spec, gates, ctx.default_arch)
    return causes


def validate_vm_spec(vm_spec: dict, ctx: Context) -> list:
    """ValidateVirtualMachineSpec (for a user, not a KubeVirt service account)."""
    template = vm_spec.get("template")
    if template is None:
        return [cause(REQUIRED, "missing virtual machine template.", "spec.template")]
    template = d(template)
    causes = []
    causes += metadata.validate_metadata("spec.template.metadata", d(template.get("metadata")), ctx.gates)
    causes += validate_vmi_spec("spec.template.spec", d(template.get("spec")), ctx)
    causes += data_volume_templates.validate_data_volume_templates(vm_spec)
    causes += run_strategy.validate_run_strategy(vm_spec, ctx.gates)
    causes += run_strategy.validate_live_update(vm_spec, ctx.live_update)
    return causes
