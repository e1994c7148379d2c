"""Firmware, machine type, architecture and launch security of a VMI spec (KubeVirt
vmi-create-admitter.go: validateFirmwareACPI with validateACPIRef, validateFirmware
(validateBootloader, validateKernelBoot), the SecureBoot/SMM check of validateDomainSpec,
validateEmulatedMachine, validateArchitecture, validateLaunchSecurity)."""
from __future__ import annotations

import fnmatch
from functools import lru_cache
from typing import Any

from instancetype.engine.vm_validation._common import _E, FORBIDDEN, INVALID, REQUIRED, Gates, cause
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


def validate_launch_security(field: str, spec: dict[str, Any], gates: Gates, default_arch: str = "amd64") -> list[Any]:
    """validateLaunchSecurity: by architecture; amd64's rules are ValidateLaunchSecurityAmd64
    (pkg/virt-api/webhooks/amd64.go); s390x's Secure Execution has none (its gate is GA)."""
    domain = (spec.get("domain") or _E)
    if domain.get("launchSecurity") is None:
        return []
    arch = spec.get("architecture") or default_arch     # the VM mutator's default, set before
    if arch == "amd64":
        return _launch_security_amd64(field, spec, gates)
    if arch == "s390x":
        return []
    return [cause(INVALID, f"No launchSecurity support for architecture: {arch}", f"{field}.architecture")]


def _launch_security_amd64(field: str, spec: dict[str, Any], gates: Gates) -> list[Any]:
    """ValidateLaunchSecurityAmd64: exactly one of SEV, SNP, TDX, its gate enabled, then UEFI
    (without SecureBoot for SEV/SNP, without persistent EFI variables for SNP/TDX), no SMM for
    TDX, a paused start for SEV attestation, no bootable NICs."""
    domain = (spec.get("domain") or _E)
    ls = (domain.get("launchSecurity") or _E)
    at = f"{field}.launchSecurity"
    selected = [name for key, name in (("sev", "SEV"), ("snp", "SNP"), ("tdx", "TDX")) if ls.get(key) is not None]
    gate = "WorkloadEncryptionTDX" if ls.get("tdx") is not None else "WorkloadEncryptionSEV" if selected else ""
    if len(selected) != 1:
        return [cause(FORBIDDEN, "One and only one launchSecurity type can be set", at)]
    # WorkloadEncryptionSEV is Beta in v1.9 (on unless disabled), WorkloadEncryptionTDX Alpha.
    if not (gates.beta(gate) if gate == "WorkloadEncryptionSEV" else gate in gates):
        return [cause(INVALID, f"{gate} feature gate is not enabled in kubevirt-config", at)]
    kind, sev_like = selected[0], ls.get("sev") is not None or ls.get("snp") is not None
    causes = []
    smm = ((domain.get("features") or _E).get("smm"))
    if ls.get("tdx") is not None and smm is not None and (smm or _E).get("enabled") is not False:
        causes.append(cause(INVALID, "TDX does not work along with SMM", at))
    firmware = domain.get("firmware")
    if not efi_boot(firmware):
        causes.append(cause(INVALID, f"{kind} requires OVMF (UEFI)", at))
    else:
        efi = (((firmware or _E).get("bootloader") or _E).get("efi") or _E)
        if sev_like and efi.get("secureBoot") is not False:
            causes.append(cause(INVALID, f"{kind} does not work along with SecureBoot", at))
        if (ls.get("snp") is not None or ls.get("tdx") is not None) and efi.get("persistent") is True:
            causes.append(cause(INVALID, f"{kind} does not work along with Persistent EFI variables", at))
    if ls.get("sev") is not None and spec.get("startStrategy") != "Paused" \
            and (ls.get("sev") or _E).get("attestation") is not None:
        causes.append(cause(INVALID, "SEV attestation requires VMI StartStrategy 'Paused'", at))
    for iface in ((domain.get("devices") or _E).get("interfaces") or ()):
        if iface.get("bootOrder") is not None:
            causes.append(cause(INVALID, f"{kind} does not work with bootable NICs: {(iface.get('name') or '')}", at))
    return causes
