"""Firmware preferences (the `firmware` block).

KubeVirt: pkg/instancetype/preference/apply/firmware.go (applyFirmwarePreferences).
"""
from __future__ import annotations

from typing import Any

from ._util import child, copy_value, domain


def apply_firmware(pref_fw: dict[str, Any], spec: dict[str, Any]) -> None:
    # The firmware and bootloader objects are created even if nothing else applies.
    boot = child(child(domain(spec), "firmware"), "bootloader")

    if pref_fw.get("preferredUseBios") is True and boot.get("bios") is None and boot.get("efi") is None:
        boot["bios"] = {}

    serial = pref_fw.get("preferredUseBiosSerial")
    bios = boot.get("bios")
    if serial is not None and type(bios) is dict and bios.get("useSerial") is None:
        bios["useSerial"] = serial

    efi_pref = pref_fw.get("preferredEfi")
    if efi_pref is not None and boot.get("efi") is None and boot.get("bios") is None:
        boot["efi"] = copy_value(efi_pref)
        # Applying preferredEfi skips the two legacy keys below.
        return

    if pref_fw.get("preferredUseEfi") is True and boot.get("efi") is None and boot.get("bios") is None:
        boot["efi"] = {}

    secure = pref_fw.get("preferredUseSecureBoot")
    efi = boot.get("efi")
    if secure is not None and type(efi) is dict and efi.get("secureBoot") is None:
        efi["secureBoot"] = secure
