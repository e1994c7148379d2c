"""Device preferences (the `devices` block): single-valued device settings,
the five auto-attach switches, inputs and panic devices; disks and interfaces
live in disks.py / interfaces.py.

KubeVirt: pkg/instancetype/preference/apply/device.go (ApplyDevicePreferences,
ApplyAutoAttachPreferences).
"""
from __future__ import annotations

from typing import Any

from ._util import child, copy_value, devices, dict_items
from .disks import apply_disks
from .interfaces import apply_interfaces

# preference key -> VMI `domain.devices` key; applied only where the VM's value is absent.
_FILL_IF_ABSENT = (
    ("preferredUseVirtioTransitional", "useVirtioTransitional"),
    ("preferredBlockMultiQueue", "blockMultiQueue"),
    # the VMI JSON spells it with a lower-case q
    ("preferredNetworkInterfaceMultiQueue", "networkInterfaceMultiqueue"),
)

AUTOATTACH = (
    ("preferredAutoattachGraphicsDevice", "autoattachGraphicsDevice"),
    ("preferredAutoattachMemBalloon", "autoattachMemBalloon"),
    ("preferredAutoattachPodInterface", "autoattachPodInterface"),
    ("preferredAutoattachSerialConsole", "autoattachSerialConsole"),
    ("preferredAutoattachInputDevice", "autoattachInputDevice"),
)


def apply_autoattach_block(pref_devices: dict[str, Any], spec: dict[str, Any]) -> None:
    """Each preferred auto-attach bool (true or false) fills a VM value left unset."""
    devs = None
    for pkey, vkey in AUTOATTACH:
        v = pref_devices.get(pkey)
        if v is None:
            continue
        if devs is None:
            devs = devices(spec)
        if devs.get(vkey) is None:
            devs[vkey] = v


def apply_devices(pref_devices: dict[str, Any], spec: dict[str, Any]) -> None:
    devs = devices(spec)
    for pkey, vkey in _FILL_IF_ABSENT:
        v = pref_devices.get(pkey)
        if v is not None and devs.get(vkey) is None:
            devs[vkey] = v

    # Go: DisableHotplug is a plain bool on the VMI, so the preference always overrides it.
    v = pref_devices.get("preferredDisableHotplug")
    if v is not None:
        devs["disableHotplug"] = v

    # The sound model is only filled in on a sound device the VM already has.
    model = pref_devices.get("preferredSoundModel")
    sound = devs.get("sound")
    if model and type(sound) is dict and not sound.get("model"):
        sound["model"] = model

    for pkey, vkey in (("preferredRng", "rng"), ("preferredTPM", "tpm")):
        v = pref_devices.get(pkey)
        if v is not None and devs.get(vkey) is None:
            devs[vkey] = copy_value(v)

    video_type = pref_devices.get("preferredVideoType")
    if video_type is not None:
        video = child(devs, "video")
        if not video.get("type"):
            video["type"] = video_type

    apply_autoattach_block(pref_devices, spec)
    apply_disks(pref_devices, devs)
    apply_interfaces(pref_devices, devs, spec)
    _apply_inputs(pref_devices, devs)
    _apply_panic(pref_devices, devs)


def _apply_inputs(pref_devices: dict[str, Any], devs: dict[str, Any]) -> None:
    bus = pref_devices.get("preferredInputBus")
    typ = pref_devices.get("preferredInputType")
    if not bus and not typ:
        return
    for inp in dict_items(devs.get("inputs")):
        if bus and not inp.get("bus"):
            inp["bus"] = bus
        if typ and not inp.get("type"):
            inp["type"] = typ


def _apply_panic(pref_devices: dict[str, Any], devs: dict[str, Any]) -> None:
    model = pref_devices.get("preferredPanicDeviceModel")
    if model is None:
        return
    panics = devs.get("panicDevices")
    if not panics:
        devs["panicDevices"] = [{"model": model}]
        return
    # A present model, even "", counts as set (PanicDevice.Model is a *string).
    for p in dict_items(panics):
        if p.get("model") is None:
            p["model"] = model
