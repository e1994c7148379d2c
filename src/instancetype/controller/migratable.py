"""The VMI's `LiveMigratable` condition, as virt-handler computes it on the node that runs the VMI
(`calculateLiveMigrationCondition`, pkg/virt-handler/vm.go), here on the simulated node.

    condition(vmi, claims, config) -> {"type": "LiveMigratable", "status": "True" | "False", ...}
    migratable(vmi) -> bool          the condition read back (`vmi.IsMigratable()`)

The checks in v1.9's order, the first that fails giving the reason and message:
1. the pod network's interface (`VerifyVMIMigratable`): masquerade or passt; a bridge only with
   the `kubevirt.io/allow-pod-bridge-network-live-migration` annotation; a binding plugin only
   when the cluster's `network.binding` entry has a `migration` setting;
2. (the CPU model host-model: the simulated node has a host model, so that passes);
3. host devices and GPUs (`vmiContainsNonMigratablePCIHostDevices`);
4. SEV or SEV-SNP, TDX, then s390x Secure Execution (a launchSecurity on s390x);
5. (the TSC frequency: the simulated node reports one, so that passes);
6. Hyper-V passthrough;
7. the volumes (`checkVolumesForMigration`): every PVC and DataVolume must be shared
   (ReadWriteMany; `claims` gives a claim's access modes as the VMI controller's volume status
   holds them, None for one not found), a host disk too; other volumes mean a block
   migration, which is still a migration.
"""
from __future__ import annotations

from collections.abc import Callable

CONDITION = "LiveMigratable"            # VirtualMachineInstanceIsMigratable
BRIDGE_MIGRATION_ANNOTATION = "kubevirt.io/allow-pod-bridge-network-live-migration"
INTERFACE_NOT_MIGRATABLE = "InterfaceNotLiveMigratable"
HOST_DEVICE_NOT_MIGRATABLE = "HostDeviceNotLiveMigratable"
SEV_NOT_MIGRATABLE = "SEVNotLiveMigratable"
TDX_NOT_MIGRATABLE = "TDXNotLiveMigratable"
SECURE_EXECUTION_NOT_MIGRATABLE = "SecureExecutionNotLiveMigratable"
HYPERV_PASSTHROUGH_NOT_MIGRATABLE = "HypervPassthroughNotLiveMigratable"
DISKS_NOT_MIGRATABLE = "DisksNotLiveMigratable"
SHARED_PVC = "live migration requires that all PVCs must be shared (using ReadWriteMany access mode)"

Claims = Callable[[str], "list[str] | None"]


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _list(v) -> list:
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []


def _interfaces(vmi: dict, config: dict | None) -> str | None:
    """VerifyVMIMigratable (pkg/network/vmispec)."""
    spec = _dict(vmi.get("spec"))
    interfaces = _list(_dict(_dict(spec.get("domain")).get("devices")).get("interfaces"))
    if not interfaces:
        return None
    pod = next((n for n in _list(spec.get("networks")) if "pod" in n), None)
    if pod is None:
        return None
    primary = next((i for i in interfaces if i.get("name") == pod.get("name")), None)
    if primary is None:
        return f"no primary interface found for network {pod.get('name')}"
    if "masquerade" in primary or "passtBinding" in primary:
        return None
    annotations = _dict(_dict(vmi.get("metadata")).get("annotations"))
    if "bridge" in primary and BRIDGE_MIGRATION_ANNOTATION in annotations:
        return None
    if "binding" in primary:
        plugins = _dict(_dict(_dict(config).get("network")).get("binding"))
        plugin = plugins.get(_dict(primary.get("binding")).get("name"))
        if isinstance(plugin, dict) and plugin.get("migration") is not None:
            return None
    return "cannot migrate VMI which does not use masquerade or a migratable plugin to connect to the pod network"


def _host_devices(vmi: dict, config: dict | None) -> str | None:
    """vmiContainsNonMigratablePCIHostDevices."""
    devices = _dict(_dict(_dict(vmi.get("spec")).get("domain")).get("devices"))
    if _list(devices.get("hostDevices")):
        return "VMI specifies non-migratable generic PCI host device"
    gpus = _list(devices.get("gpus"))
    if len(gpus) > 1:
        return "VMI specifies too many GPUs"
    if len(gpus) == 1:
        gates = _dict(_dict(config).get("developerConfiguration")).get("featureGates") or []
        if "VGPULiveMigration" not in gates:
            return "VMI specifies a GPU but feature gate VGPULiveMigration is not enabled"
        mdevs = _list(_dict(_dict(config).get("permittedHostDevices")).get("mediatedDevices"))
        if not any(m.get("resourceName") == gpus[0].get("deviceName") for m in mdevs):
            return "VMI specifies non-migratable GPU device"
    return None


def _volumes(vmi: dict, claims: Claims) -> str | None:
    """checkVolumesForMigration's error (a block migration is no error)."""
    spec = _dict(vmi.get("spec"))
    for volume in _list(spec.get("volumes")):
        if "persistentVolumeClaim" in volume or "dataVolume" in volume:
            source = _dict(volume.get("persistentVolumeClaim")) or _dict(volume.get("dataVolume"))
            claim = source.get("claimName") if "persistentVolumeClaim" in volume else source.get("name")
            modes = claims(str(claim or ""))
            if modes is None:
                return f"cannot migrate VMI: Unable to determine if PVC {claim} is shared, {SHARED_PVC}"
            if "ReadWriteMany" not in modes:
                return f"cannot migrate VMI: PVC {claim} is not shared, {SHARED_PVC}"
        elif "hostDisk" in volume and _dict(volume.get("hostDisk")).get("shared") is not True:
            return "cannot migrate VMI with non-shared HostDisk"
    return None


def _not_migratable(vmi: dict, claims: Claims, config: dict | None) -> tuple[str, str] | None:
    spec = _dict(vmi.get("spec"))
    domain = _dict(spec.get("domain"))
    if (message := _interfaces(vmi, config)) is not None:
        return INTERFACE_NOT_MIGRATABLE, message
    if (message := _host_devices(vmi, config)) is not None:
        return HOST_DEVICE_NOT_MIGRATABLE, message
    launch = domain.get("launchSecurity")
    if isinstance(launch, dict) and (launch.get("sev") is not None or launch.get("snp") is not None):
        return SEV_NOT_MIGRATABLE, "VMI uses SEV"
    if isinstance(launch, dict) and launch.get("tdx") is not None:
        return TDX_NOT_MIGRATABLE, "VMI uses TDX"
    if launch is not None and spec.get("architecture") == "s390x":
        return SECURE_EXECUTION_NOT_MIGRATABLE, "VMI uses Secure Execution"
    if _dict(_dict(domain.get("features")).get("hypervPassthrough")).get("enabled") is True:
        return HYPERV_PASSTHROUGH_NOT_MIGRATABLE, "VMI uses hyperv passthrough"
    if (message := _volumes(vmi, claims)) is not None:
        return DISKS_NOT_MIGRATABLE, message
    return None


def condition(vmi: dict, claims: Claims, config: dict | None = None) -> dict:
    """The condition virt-handler puts on the VMI (no probe or transition times, as its)."""
    refused = _not_migratable(vmi, claims, config)
    if refused is None:
        return {"type": CONDITION, "status": "True", "lastProbeTime": None, "lastTransitionTime": None}
    reason, message = refused
    return {"type": CONDITION, "status": "False", "reason": reason, "message": message,
            "lastProbeTime": None, "lastTransitionTime": None}


def migratable(vmi: dict) -> bool:
    """VirtualMachineInstance.IsMigratable: its LiveMigratable condition is True."""
    return any(isinstance(c, dict) and c.get("type") == CONDITION and c.get("status") == "True"
               for c in _dict(vmi.get("status")).get("conditions") or ())
