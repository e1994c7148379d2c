"""Firmware, machine type, architecture and launch security of a VMI spec (KubeVirt
vmi-create-admitter.go: validateFirmwareACPI with validateACPIRef, validateFirmware
(validateBootloader, validateKernelBoot), the SecureBoot/SMM check of validateDomainSpec,
validateEmulatedMachine, validateArchitecture, validateLaunchSecurity)."""
from __future__ import annotations

import fnmatch
from functools import lru_cache
from typing import Any

from instancetype.engine.vm_validation._common import _E, INVALID, REQUIRED, Gates, cause
from instancetype.engine.vm_validation.disks import validate_path

# virt-config's default emulated machines per architecture
DEFAULT_EMULATED_MACHINES = {"amd64": ["q35*", "pc-q35*"], "arm64": ["virt*"], "s390x": ["s390-ccw-virtio*"]}


def validate_acpi(field: str, spec: dict[str, Any]) -> list[Any]:
    """validateFirmwareACPI: `field` is `<spec>.acpi` (KubeVirt's own path)."""
    acpi = ((spec.get("domain") or _E).get("firmware") or _E).get("acpi")
    if acpi is None:
        return []
    acpi = (acpi or _E)
    slic, msdm = (acpi.get("slicNameRef") or ""), (acpi.get("msdmNameRef") or "")
    if not slic and not msdm:
        return [cause(INVALID, "ACPI was set but no SLIC nor MSDM volume reference was set", field)]
    causes = []
    volumes = (spec.get("volumes") or ())
    for ref, key in ((slic, "slicNameRef"), (msdm, "msdmNameRef")):
        if not ref:
            continue
        vol = next((v for v in volumes if (v.get("name") or "") == ref), None)
        if vol is None:
            causes.append(cause(INVALID, f"{field} does not have a matching Volume.", f"{field}.{key}"))
        elif vol.get("secret") is None:
            causes.append(cause(INVALID, f"{field} refers to Volume of unsupported type.", f"{field}.{key}"))
    return causes


def validate_firmware(field: str, firmware: Any) -> list[Any]:
    """validateFirmware: `field` is `<spec>.domain.firmware`."""
    if firmware is None:
        return []
    firmware = (firmware or _E)
    causes = []
    boot = firmware.get("bootloader")
    if boot is not None and (boot or _E).get("efi") is not None and (boot or _E).get("bios") is not None:
        at = f"{field}.bootloader"
        causes.append(cause(INVALID, f"{at} has both EFI and BIOS configured, but they are mutually exclusive.", at))
    kernel = firmware.get("kernelBoot")
    if kernel is not None:
        causes.extend(_kernel_boot(f"{field}.kernelBoot", (kernel or _E)))
    return causes


def _kernel_boot(field: str, kernel: dict[str, Any]) -> list[Any]:
    """validateKernelBoot."""
    container = kernel.get("container")
    if container is None:
        if (kernel.get("kernelArgs") or ""):
            return [cause(INVALID, "kernel arguments cannot be provided without an external kernel",
                          f"{field}.kernelArgs")]
        return []
    container = (container or _E)
    at = f"{field}.container"
    causes = []
    if not (container.get("image") or ""):
        causes.append(cause(REQUIRED, f"{at} must be defined with an image", f"{at}.image"))
    kernel_path, initrd_path = (container.get("kernelPath") or ""), (container.get("initrdPath") or "")
    if not kernel_path and not initrd_path:
        causes.append(cause(REQUIRED, f"{at} must be defined with at least one of the following: kernelPath, "
                            f"initrdPath", at))
    if kernel_path:
        causes.extend(validate_path(f"{at}.kernelPath", kernel_path))
    if initrd_path:
        causes.extend(validate_path(f"{at}.initrdPath", initrd_path))
    return causes


def efi_boot(firmware: Any) -> bool:
    return ((firmware or _E).get("bootloader") or _E).get("efi") is not None


def secure_boot(firmware: Any) -> bool:
    """secureBootEnabled: an EFI bootloader whose secureBoot is unset or true."""
    return efi_boot(firmware) and (((firmware or _E).get("bootloader") or _E).get("efi") or _E).get("secureBoot") is not False


def validate_secure_boot_smm(field: str, domain: dict[str, Any]) -> list[Any]:
    """validateDomainSpec's check: SecureBoot needs SMM (`field` is `<spec>.domain`)."""
    smm = (domain.get("features") or _E).get("smm")
    smm_on = smm is not None and (smm or _E).get("enabled") is not False
    if secure_boot(domain.get("firmware")) and not smm_on:
        return [cause(INVALID, f"{field} has EFI SecureBoot enabled. SecureBoot requires SMM, which is currently "
                      f"disabled.", field)]
    return []


def emulated_machines(config: dict[str, Any], arch: str) -> list[Any]:
    """ClusterConfig.GetEmulatedMachines."""
    old = config.get("emulatedMachines")
    if isinstance(old, list):
        return old
    key = arch if arch in ("arm64", "s390x") else "amd64"
    arch_cfg = ((config.get("architectureConfiguration") or _E).get(key) or _E)
    machines = arch_cfg.get("emulatedMachines")
    return machines if isinstance(machines, list) and machines else DEFAULT_EMULATED_MACHINES[key]


@lru_cache(maxsize=1024)
def _machine_matches(machine_type: str, patterns: tuple[Any, ...]) -> bool:
    """filepath.Match against any of the patterns."""
    return any(fnmatch.fnmatchcase(machine_type, p) for p in patterns if type(p) is str)


def validate_emulated_machine(field: str, spec: dict[str, Any], config: dict[str, Any]) -> list[Any]:
    """validateEmulatedMachine."""
    machine_type = (((spec.get("domain") or _E).get("machine") or _E).get("type") or "")
    if not machine_type:
        return []
    supported = emulated_machines(config, (spec.get("architecture") or ""))
    if _machine_matches(machine_type, tuple(supported)):
        return []
    at = f"{field}.domain.machine.type"
    return [cause(INVALID, f"{at} is not supported: {machine_type} (allowed values: [{' '.join(supported)}])", at)]


def validate_launch_security(field: str, spec: dict[str, Any], gates: Gates) -> list[Any]:
    """validateLaunchSecurity (SEV: UEFI without SecureBoot, paused start for attestation,
    no bootable NICs; s390x Secure Execution needs its gate)."""
    domain = (spec.get("domain") or _E)
    ls = domain.get("launchSecurity")
    if ls is None:
        return []
    ls = (ls or _E)
    at = f"{field}.launchSecurity"
    causes = []
    if spec.get("architecture") == "s390x" and "SecureExecution" not in gates:
        causes.append(cause(INVALID, "SecureExecution feature gate is not enabled in kubevirt-config", at))
    sev = ls.get("sev")
    if sev is not None:
        firmware = domain.get("firmware")
        if not efi_boot(firmware):
            causes.append(cause(INVALID, "SEV requires OVMF (UEFI)", at))
        elif secure_boot(firmware):
            causes.append(cause(INVALID, "SEV does not work along with SecureBoot", at))
        if (sev or _E).get("attestation") is not None and spec.get("startStrategy") != "Paused":
            causes.append(cause(INVALID, "SEV attestation requires VMI StartStrategy 'Paused'", at))
        for iface in ((domain.get("devices") or _E).get("interfaces") or ()):
            if iface.get("bootOrder") is not None:
                causes.append(cause(INVALID, f"SEV does not work with bootable NICs: {(iface.get('name') or '')}", at))
    return causes
