"""Firmware, machine type and launch security (KubeVirt validateDomainSpec's SecureBoot check,
validateFirmware, validateEmulatedMachine, validateLaunchSecurity)."""
from __future__ import annotations

from vmv_helpers import admit, causes, clean_vm, tspec

T = "spec.template.spec"


def test_secure_boot_needs_smm_also_from_a_preference():
    vm = clean_vm()
    vm["spec"]["preference"] = {"name": "efi"}
    res = admit(vm, preference={"firmware": {"preferredUseEfi": True}})
    assert res["causes"] == [{"reason": "FieldValueInvalid", "field": f"{T}.domain", "message":
                              f"{T}.domain has EFI SecureBoot enabled. SecureBoot requires SMM, which is currently "
                              "disabled."}]


def test_efi_and_bios_together():
    vm = clean_vm()
    tspec(vm)["domain"]["firmware"] = {"bootloader": {"efi": {"secureBoot": False}, "bios": {}}}
    at = f"{T}.domain.firmware.bootloader"
    assert causes(vm) == [("FieldValueInvalid", f"{at} has both EFI and BIOS configured, but they are mutually "
                           "exclusive.", at)]


def test_kernel_boot():
    vm = clean_vm()
    tspec(vm)["domain"]["firmware"] = {"kernelBoot": {"container": {"kernelPath": "/boot/vmlinuz"}}}
    at = f"{T}.domain.firmware.kernelBoot.container"
    assert causes(vm) == [("FieldValueRequired", f"{at} must be defined with an image", f"{at}.image")]
    tspec(vm)["domain"]["firmware"] = {"kernelBoot": {"kernelArgs": "console=ttyS0"}}
    assert causes(vm) == [("FieldValueInvalid", "kernel arguments cannot be provided without an external kernel",
                           f"{T}.domain.firmware.kernelBoot.kernelArgs")]


def test_machine_type_of_another_architecture():
    vm = clean_vm()
    tspec(vm)["architecture"] = "s390x"
    tspec(vm)["domain"]["machine"] = {"type": "pc-q35-rhel9.4.0"}
    at = f"{T}.domain.machine.type"
    assert causes(vm) == [("FieldValueInvalid", f"{at} is not supported: pc-q35-rhel9.4.0 (allowed values: "
                           "[s390-ccw-virtio*])", at)]


def test_sev_requires_uefi():
    vm = clean_vm()
    tspec(vm)["domain"]["launchSecurity"] = {"sev": {}}
    assert causes(vm) == [("FieldValueInvalid", "SEV requires OVMF (UEFI)", f"{T}.launchSecurity")]


# ValidateLaunchSecurityAmd64 (pkg/virt-api/webhooks/amd64.go), message for message.
import pytest  # noqa: E402

EFI = {"bootloader": {"efi": {"secureBoot": False}}}
SEV_ON = {"developerConfiguration": {"featureGates": ["WorkloadEncryptionTDX"]}}


@pytest.mark.parametrize(("ls", "firmware", "extra", "config", "expected"), [
    ({"sev": {}}, EFI, {}, None, []),
    ({"sev": {}, "snp": {}}, EFI, {}, None, [("FieldValueForbidden", "One and only one launchSecurity type can be set")]),
    ({}, EFI, {}, None, [("FieldValueForbidden", "One and only one launchSecurity type can be set")]),
    ({"sev": {}}, EFI, {}, {"developerConfiguration": {"disabledFeatureGates": ["WorkloadEncryptionSEV"]}},
     [("FieldValueInvalid", "WorkloadEncryptionSEV feature gate is not enabled in kubevirt-config")]),
    ({"tdx": {}}, EFI, {}, None, [("FieldValueInvalid", "WorkloadEncryptionTDX feature gate is not enabled in "
                                                        "kubevirt-config")]),
    ({"snp": {}}, {"bootloader": {"efi": {}}}, {}, None, [("FieldValueInvalid", "SNP does not work along with SecureBoot")]),
    ({"snp": {}}, {"bootloader": {"efi": {"secureBoot": False, "persistent": True}}}, {}, None,
     [("FieldValueInvalid", "SNP does not work along with Persistent EFI variables")]),
    ({"tdx": {}}, {"bootloader": {"efi": {"secureBoot": False}}}, {"features": {"smm": {"enabled": True}}}, SEV_ON,
     [("FieldValueInvalid", "TDX does not work along with SMM")]),
    ({"tdx": {}}, None, {}, SEV_ON, [("FieldValueInvalid", "TDX requires OVMF (UEFI)")]),
    ({"sev": {"attestation": {}}}, EFI, {}, None,
     [("FieldValueInvalid", "SEV attestation requires VMI StartStrategy 'Paused'")]),
])
def test_launch_security_amd64(ls, firmware, extra, config, expected):
    vm = clean_vm()
    domain = tspec(vm)["domain"]
    domain["launchSecurity"] = ls
    domain.update(extra)
    if firmware is not None:
        domain["firmware"] = firmware
    got = [(r, m) for r, m, f in causes(vm, config=config) if f == f"{T}.launchSecurity"]
    assert got == expected


def test_launch_security_of_another_architecture():
    vm = clean_vm()
    tspec(vm)["architecture"] = "arm64"
    tspec(vm)["domain"]["launchSecurity"] = {"sev": {}}
    assert ("FieldValueInvalid", "No launchSecurity support for architecture: arm64", f"{T}.architecture") in causes(vm)


def test_panic_devices():
    vm = clean_vm()
    tspec(vm)["domain"]["devices"]["panicDevices"] = [{"model": "bogus"}]
    at = f"{T}.domain.devices.panicDevices"
    assert causes(vm) == [("FieldValueInvalid", "invalid PanicDeviceModel(bogus)", f"{at}[0].model")]
    tspec(vm)["domain"]["devices"]["panicDevices"] = [{"model": "isa"}]
    tspec(vm)["architecture"] = "ppc64le"
    assert not [c for c in causes(vm) if c[2].startswith(at)]
