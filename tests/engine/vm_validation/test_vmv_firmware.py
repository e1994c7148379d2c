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
