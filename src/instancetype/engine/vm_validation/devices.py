"""Devices of a VMI spec and the feature gates they need (KubeVirt vmi-create-admitter.go:
validateInputDevices, validateMDEVRamFB, validateHostDevicesWithPassthroughEnabled,
validateSoundDevices, validateVSOCK, validatePersistentReservation, validateDownwardMetrics,
validateFilesystemsWithVirtIOFSEnabled, validateVideoConfig, validatePanicDevices;
pkg/dra/admitter ValidateCreation for GPUs)."""
from __future__ import annotations

from typing import Any

from instancetype.engine.vm_validation._common import _E, INVALID, REQUIRED, Gates, cause

_PANIC_MODELS = ("hyperv", "isa", "pvpanic")
_CONFIG_VOLUMES = ("configMap", "secret", "serviceAccount", "downwardAPI")
_STORAGE_VOLUMES = ("persistentVolumeClaim", "dataVolume")


def _devices(spec: dict[str, Any]) -> dict[str, Any]:
    return ((spec.get("domain") or _E).get("devices") or _E)


def validate_input_devices(field: str, spec: dict[str, Any]) -> list[Any]:
    """validateInputDevices."""
    causes = []
    for idx, inp in enumerate(_devices(spec).get("inputs") or ()):
        at = f"{field}.domain.devices.inputs[{idx}]"
        if (inp.get("bus") or "") not in ("virtio", "usb", ""):
            causes.append(cause(INVALID, "Input device can have only virtio or usb bus.", f"{at}.bus"))
        if (inp.get("type") or "") != "tablet":
            causes.append(cause(INVALID, "Input device can have only tablet type.", f"{at}.type"))
    return causes


def validate_gpus(field: str, spec: dict[str, Any], gates: Gates) -> list[Any]:
    """pkg/dra/admitter ValidateCreation: the GPU part (a GPU names a device plugin resource or,
    with GPUsWithDRA, a claim)."""
    gpus = (_devices(spec).get("gpus") or ())
    at = f"{field}.domain.devices.gpus"
    dra = [g for g in gpus if g.get("claimRequest") is not None]
    plain = [g for g in gpus if g.get("claimRequest") is None]
    causes = []
    if plain and dra:
        return [cause(INVALID, "vmi.spec.domain.devices.gpus contains both DRA and non-DRA GPUs; each GPU must be "
                      "either DRA or non-DRA", at)]
    for gpu in plain:
        if not (gpu.get("deviceName") or ""):
            causes.append(cause(REQUIRED, "vmi.spec.domain.devices.gpus contains GPUs without deviceName or "
                                "claimRequest; each GPU must specify either a deviceName or a claimRequest", at))
    if dra and "GPUsWithDRA" not in gates:
        causes.append(cause(INVALID, "vmi.spec.domain.devices.gpus contains DRA enabled GPUs but feature gate is not "
                            "enabled", at))
    return causes


def _ramfb_displays(spec: dict[str, Any]) -> int:
    n = 0
    for gpu in (_devices(spec).get("gpus") or ()):
        display = (gpu.get("virtualGPUOptions") or _E).get("display")
        if display is None:
            continue
        display = (display or _E)
        ramfb = display.get("ramFB")
        if display.get("enabled") is not False and (ramfb is None or (ramfb or _E).get("enabled") is True):
            n += 1
    return n


def validate_device_gates(field: str, spec: dict[str, Any], gates: Gates, default_arch: str) -> list[Any]:
    """The device checks after validateLiveMigration, in KubeVirt's order (MDEV ramfb, host
    devices, sound; launch security is firmware.py's; VSOCK, persistent reservation, downward
    metrics, virtiofs, video, panic devices)."""
    devices = _devices(spec)
    causes = []
    if _ramfb_displays(spec) > 1:
        causes.append(cause(INVALID, "configuring multiple displays with ramfb is not valid ", f"{field}.GPUs"))
    if devices.get("hostDevices") is not None and "HostDevices" not in gates:
        causes.append(cause(INVALID, "Host Devices feature gate is not enabled in kubevirt-config", f"{field}.HostDevices"))
    sound = devices.get("sound")
    if sound is not None:
        model = ((sound or _E).get("model") or "")
        if model and model not in ("ich9", "ac97"):
            causes.append(cause(INVALID, "Sound device type is not supported. Options: 'ich9' or 'ac97'", f"{field}.Sound"))
        if not ((sound or _E).get("name") or ""):
            causes.append(cause(INVALID, "Sound device requires a name field.", f"{field}.Sound"))
    return causes


def validate_device_gates_late(field: str, spec: dict[str, Any], gates: Gates, default_arch: str) -> list[Any]:
    """validateVSOCK .. validatePanicDevices."""
    devices = _devices(spec)
    causes = []
    if devices.get("autoattachVSOCK") is True and "VSOCK" not in gates:
        causes.append(cause(INVALID, "VSOCK feature gate is not enabled in kubevirt-config",
                            f"{field}.domain.devices.autoattachVSOCK"))
    if "PersistentReservation" not in gates and any(
            (disk.get("lun") or _E).get("reservation") is True for disk in (devices.get("disks") or ()) if "lun" in disk):
        causes.append(cause(INVALID, "PersistentReservation feature gate is not enabled in kubevirt-config",
                            f"{field}.domain.devices.disks.luns.reservation"))
    if devices.get("downwardMetrics") is not None and "DownwardMetrics" not in gates:
        causes.append(cause(INVALID, "downwardMetrics virtio serial is not allowed: DownwardMetrics feature gate is not "
                            "enabled", f"{field}.domain.devices.downwardMetrics"))
    filesystems = devices.get("filesystems")
    if filesystems is not None:
        volumes = {(v.get("name") or ""): v for v in (spec.get("volumes") or ())}
        old = "ExperimentalVirtiofsSupport" in gates
        for fs in (filesystems or ()):
            vol = volumes.get(fs.get("name") or "")
            if vol is None:
                continue
            if any(vol.get(k) is not None for k in _CONFIG_VOLUMES) and "EnableVirtioFsConfigVolumes" not in gates \
                    and not old:
                causes.append(cause(INVALID, "virtiofs is not allowed: virtiofs feature gate is not enabled for config "
                                    "volumes", f"{field}.domain.devices.filesystems"))
            elif any(vol.get(k) is not None for k in _STORAGE_VOLUMES) and "EnableVirtioFsStorageVolumes" not in gates \
                    and not old:
                causes.append(cause(INVALID, "virtiofs is not allowed: virtiofs feature gate is not enabled for PVC",
                                    f"{field}.domain.devices.filesystems"))
    # validateVideoConfig (the VideoConfig feature gate is GA in v1.9)
    if devices.get("video") is not None:
        if devices.get("autoattachGraphicsDevice") is False:
            causes.append(cause(INVALID, "Video configuration is not allowed when autoattachGraphicsDevice is set to "
                                "false", f"{field}.video"))
    panic = devices.get("panicDevices")
    if type(panic) is list and panic:
        at = f"{field}.domain.devices.panicDevices"
        # (the PanicDevices feature gate is GA in v1.9)
        arch = (spec.get("architecture") or "") or default_arch
        if arch in ("s390x", "ppc64le"):
            causes.append(cause(INVALID, f"custom panic devices are not supported on {arch} architecture", at))
        for idx, dev in enumerate(panic or ()):
            model = dev.get("model")
            if model is not None and model not in _PANIC_MODELS:
                causes.append(cause(INVALID, f"invalid PanicDeviceModel: {model}", f"{at}[{idx}].model"))
    return causes


# pkg/virt-config/featuregate: the discontinued gates and the spec fields that use them
_DISCONTINUED = (
    ("Passt", "passt", "Passt network binding is discontinued since v1.3. Please refer to Kubevirt user guide for "
                       "alternatives."),
    ("Macvtap", "macvtap", "Macvtap network binding is discontinued since v1.3. Please refer to Kubevirt user guide "
                           "for alternatives."),
)


def validate_discontinued_gates(config: dict[str, Any], spec: dict[str, Any]) -> list[Any]:
    """featuregate.ValidateFeatureGates (VM CREATE): an enabled discontinued gate whose API the
    template uses is refused with the gate's message (a cause without a field)."""
    enabled = ((config.get("developerConfiguration") or _E).get("featureGates") or ())
    if not enabled:
        return []
    ifaces = ((_devices(spec).get("interfaces")) or ())
    causes = []
    for name in enabled:
        for gate, key, message in _DISCONTINUED:
            if name == gate and any(i.get(key) is not None for i in ifaces if type(i) is dict):
                causes.append(cause("FieldValueNotSupported", message, ""))
    return causes
