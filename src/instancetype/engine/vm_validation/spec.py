"""KubeVirt's ValidateVirtualMachineInstanceSpec (vmi-create-admitter.go) and
ValidateVirtualMachineSpec (vms-admitter.go): every rule module, in KubeVirt's order."""
from __future__ import annotations

from typing import Any

from instancetype.engine.cache import ContentCache, content_key
from instancetype.engine.virt_config import cluster_config
from instancetype.engine.vm_validation import (
    cloudinit,
    cpu,
    data_volume_templates,
    disks,
    firmware,
    memory,
    metadata,
    networks,
    probes,
    run_strategy,
    scheduling,
    strategies,
)
from instancetype.engine.vm_validation import devices as devices_rules
from instancetype.engine.vm_validation._common import _E, REQUIRED, Gates, cause


class Context:
    """What the rules read of the cluster configuration."""

    __slots__ = ("cfg", "raw", "gates", "live_update", "default_arch", "permit_bridge_on_pod", "eviction_strategy")

    def __init__(self, config: Any):
        cfg = self.cfg = cluster_config(config)
        self.raw = (cfg.raw or _E)
        self.gates = Gates(self.raw)
        self.live_update = cfg.rollout_live_update
        self.default_arch = cfg.default_architecture
        self.permit_bridge_on_pod = cfg.permit_bridge_on_pod_network
        ev = self.raw.get("evictionStrategy")
        self.eviction_strategy = ev


def context(config: Any) -> Context:
    """The Context of a configuration, memoised on its ClusterConfig (cached by content, read
    from a private copy: engine/virt_config.cluster_config)."""
    cfg = cluster_config(config)
    ctx = cfg.validation_context
    if not isinstance(ctx, Context):        # (None until the first call)
        ctx = cfg.validation_context = Context(cfg)
    return ctx


def validate_vmi_spec(field: str, spec: dict[str, Any], ctx: Context) -> list[Any]:
    """ValidateVirtualMachineInstanceSpec on a VMI spec (a VM's defaulted template copy).

    A rule group whose fields are all absent cannot refuse: it is skipped (the hot path is a
    VM with few devices)."""
    gates = ctx.gates
    get = spec.get
    domain = (get("domain") or _E)
    dget = domain.get
    devices = (dget("devices") or _E)
    causes = []
    if get("hostname") or get("subdomain"):
        causes += strategies.validate_names(field, spec)
    causes += memory.validate_memory(field, spec, ctx.live_update)
    causes += firmware.validate_emulated_machine(field, spec, ctx.raw)
    firmware_spec = dget("firmware")
    if firmware_spec is not None:
        causes += firmware.validate_acpi(f"{field}.acpi", spec)
    res = dget("resources")
    if res and (res.get("requests") or res.get("limits")):
        causes += cpu.validate_cpu_resources(field, spec)
    if dget("cpu") is not None:
        causes += cpu.validate_cpu_pinning(field, spec, ctx.default_arch)
        causes += cpu.validate_numa(field, spec, gates)
        causes += cpu.validate_cpu_misc(field, spec)
    if get("startStrategy") is not None:
        causes += strategies.validate_start_strategy(field, spec)
    if dget("cpu") is not None:
        causes += cpu.validate_realtime(field, spec)
    if get("affinity") is not None:
        causes += scheduling.validate_affinity(field, spec)
    if get("topologySpreadConstraints") is not None:
        causes += scheduling.validate_topology_spread_constraints(field, spec)
    # (validateArchitecture: MultiArchitecture is GA in v1.9, any architecture passes here)
    causes += networks.validate_networks(field, spec, ctx.permit_bridge_on_pod)
    if devices.get("gpus"):
        causes += devices_rules.validate_gpus(field, spec, gates)
    causes += disks.validate_boot_order(field, spec, gates)
    if devices.get("inputs"):
        causes += devices_rules.validate_input_devices(field, spec)
    if dget("ioThreadsPolicy") is not None:
        causes += strategies.validate_io_threads_policy(field, spec)
    if get("readinessProbe") is not None or get("livenessProbe") is not None:
        causes += probes.validate_probes(field, spec)
    # validateDomainSpec
    causes += disks.validate_disks(f"{field}.domain.devices.disks", (devices.get("disks") or ()))
    if firmware_spec is not None:
        causes += firmware.validate_firmware(f"{field}.domain.firmware", firmware_spec)
        causes += firmware.validate_secure_boot_smm(f"{field}.domain", domain)
    causes += disks.validate_volumes(f"{field}.volumes", (get("volumes") or ()), gates)
    causes += disks.validate_container_disks(field, spec)
    if get("accessCredentials"):
        causes += cloudinit.validate_access_credentials(f"{field}.accessCredentials", (get("accessCredentials") or ()),
                                                        get("volumes"))
    if get("dnsPolicy") or get("dnsConfig") is not None:
        causes += strategies.validate_dns(field, spec)
    causes += strategies.validate_eviction_strategy(field, spec, ctx.eviction_strategy)
    causes += devices_rules.validate_device_gates(field, spec, gates, ctx.default_arch)
    if dget("launchSecurity") is not None:
        causes += firmware.validate_launch_security(field, spec, gates, ctx.default_arch)
    causes += devices_rules.validate_device_gates_late(field, spec, gates, ctx.default_arch)
    return causes


# VM specs known to pass ValidateVirtualMachineSpec, by the content of the spec and of the
# configuration (engine/cache.py): the rules read nothing else, and every VM of one template and
# instancetype admitted under one configuration has the same spec (its name and uid are in its
# metadata). Only passes are kept: causes are built again, the caller's to keep.
_PASSED: ContentCache[bool] = ContentCache(1024)


def validate_vm_spec(vm_spec: dict[str, Any], ctx: Context) -> list[Any]:
    """ValidateVirtualMachineSpec (for a user, not a KubeVirt service account)."""
    key = content_key((vm_spec, ctx.cfg.raw))
    if key is not None and _PASSED.hit(key):
        return []
    causes = _validate_vm_spec(vm_spec, ctx)
    if not causes and key is not None:
        _PASSED.put(key, True)
    return causes


def _validate_vm_spec(vm_spec: dict[str, Any], ctx: Context) -> list[Any]:
    template = vm_spec.get("template")
    if template is None:
        return [cause(REQUIRED, "missing virtual machine template.", "spec.template")]
    template = (template or _E)
    causes = []
    causes += metadata.validate_metadata("spec.template.metadata", (template.get("metadata") or _E), ctx.gates)
    causes += validate_vmi_spec("spec.template.spec", (template.get("spec") or _E), ctx)
    causes += data_volume_templates.validate_data_volume_templates(vm_spec)
    causes += run_strategy.validate_run_strategy(vm_spec, ctx.gates)
    causes += run_strategy.validate_live_update(vm_spec, ctx.live_update)
    return causes
