"""A preference compiled once into the steps that have something to do.

    compile_preference(preference) -> tuple[step, ...]      step(spec, metadata) -> None

vmiApplier.Apply (pkg/instancetype/preference/apply/vmi.go) reads every `preferred*` field on
every call; most are absent in any one preference. A preference spec is normalised once and
never mutated (engine/spec.py), so what it asks for can be decided once: the steps are the block
appliers of this package, in Apply's order, with only the parts that can change a VM kept. The
steps keep every side effect of the full appliers (a present `devices` block creates
`domain.devices` and gives target-less disks a `disk`; a `firmware` block creates
`firmware.bootloader`; a `clock` block creates `clock`), so running them is running
`apply_preference`'s blocks (tests/engine/test_preference_plan.py compares the two).

A block's module is imported when a preference has that block (cpu's and the top level's are
the package's own imports): a command line pays for every module it loads.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._util import child, copy_value, devices, domain
from .cpu import apply_cpu
from .toplevel import apply_annotations, apply_toplevel

Step = Callable[[dict[str, Any], "dict[str, Any] | None"], None]


def _fresh(v: Any) -> Any:
    """copy_value, with the common empty object made without a round trip."""
    if type(v) is dict and not v:
        return {}
    return copy_value(v)


def _devices_step(pd: dict[str, Any]) -> Step:
    from .devices import _FILL_IF_ABSENT, AUTOATTACH, _apply_inputs, _apply_panic
    from .disks import disk_applier
    from .interfaces import apply_interfaces

    fills = tuple((vkey, v) for pkey, vkey in _FILL_IF_ABSENT if (v := pd.get(pkey)) is not None)
    fills += tuple((vkey, v) for pkey, vkey in AUTOATTACH if (v := pd.get(pkey)) is not None)
    hotplug = pd.get("preferredDisableHotplug")
    sound = pd.get("preferredSoundModel")
    copies = tuple((vkey, v) for pkey, vkey in (("preferredRng", "rng"), ("preferredTPM", "tpm"))
                   if (v := pd.get(pkey)) is not None)
    video = pd.get("preferredVideoType")
    interfaces = bool(pd.get("preferredInterfaceModel")) or pd.get("preferredInterfaceMasquerade") is not None
    inputs = bool(pd.get("preferredInputBus")) or bool(pd.get("preferredInputType"))
    panic = pd.get("preferredPanicDeviceModel") is not None
    apply_disks = disk_applier(pd)

    # The order of apply_devices: fill-if-absent, hotplug, sound, rng/tpm, video, auto-attach,
    # disks, interfaces, inputs, panic (the auto-attach fills commute with the ones before them:
    # distinct keys, same rule).
    def step(spec: dict[str, Any], metadata: dict[str, Any] | None) -> None:
        devs = devices(spec)
        for vkey, v in fills:
            if devs.get(vkey) is None:
                devs[vkey] = v
        if hotplug is not None:
            devs["disableHotplug"] = hotplug
        if sound:
            s = devs.get("sound")
            if type(s) is dict and not s.get("model"):
                s["model"] = sound
        for vkey, v in copies:
            if devs.get(vkey) is None:
                devs[vkey] = _fresh(v)
        if video is not None:
            vid = child(devs, "video")
            if not vid.get("type"):
                vid["type"] = video
        apply_disks(devs)
        if interfaces:
            apply_interfaces(pd, devs, spec)
        if inputs:
            _apply_inputs(pd, devs)
        if panic:
            _apply_panic(pd, devs)

    return step


def _features_step(pf: dict[str, Any]) -> Step:
    from .features import apply_features

    if pf.get("preferredAcpi") is not None or type(pf.get("preferredHyperv")) is dict:
        return lambda spec, metadata: apply_features(pf, spec)
    fills = tuple((vkey, v) for pkey, vkey in (("preferredApic", "apic"), ("preferredKvm", "kvm"),
                                               ("preferredPvspinlock", "pvspinlock"),
                                               ("preferredSmm", "smm"))
                  if (v := pf.get(pkey)) is not None)

    def step(spec: dict[str, Any], metadata: dict[str, Any] | None) -> None:
        feats = child(domain(spec), "features")
        for vkey, v in fills:
            if feats.get(vkey) is None:
                feats[vkey] = _fresh(v)

    return step


def _firmware_step(pf: dict[str, Any]) -> Step:
    from .firmware import apply_firmware

    if pf.get("preferredUseBios") is True or pf.get("preferredUseBiosSerial") is not None \
            or pf.get("preferredEfi") is not None:
        return _block(apply_firmware, pf)
    use_efi = pf.get("preferredUseEfi") is True
    secure = pf.get("preferredUseSecureBoot")

    # apply_firmware without its BIOS and preferredEfi branches (none of them applies)
    def step(spec: dict[str, Any], metadata: dict[str, Any] | None) -> None:
        boot = child(child(domain(spec), "firmware"), "bootloader")
        if use_efi and boot.get("efi") is None and boot.get("bios") is None:
            boot["efi"] = {}
        if secure is not None:
            efi = boot.get("efi")
            if type(efi) is dict and efi.get("secureBoot") is None:
                efi["secureBoot"] = secure

    return step


def _block(apply_block: Callable[[dict[str, Any], dict[str, Any]], None], block: dict[str, Any]) -> Step:
    return lambda spec, metadata: apply_block(block, spec)


def compile_preference(preference: dict[str, Any]) -> tuple[Step, ...]:
    steps: list[Step] = []
    cpu = preference.get("cpu")
    if type(cpu) is dict and cpu.get("preferredCPUFeatures"):
        steps.append(_block(apply_cpu, cpu))
    block = preference.get("devices")
    if type(block) is dict:
        steps.append(_devices_step(block))
    block = preference.get("features")
    if type(block) is dict:
        steps.append(_features_step(block))
    block = preference.get("firmware")
    if type(block) is dict:
        steps.append(_firmware_step(block))
    block = preference.get("machine")
    if type(block) is dict and block.get("preferredMachineType"):
        from .machine import apply_machine

        steps.append(_block(apply_machine, block))
    block = preference.get("clock")
    if type(block) is dict:
        from .clock import apply_clock

        steps.append(_block(apply_clock, block))
    # (a present preferredSubdomain, even "", is written; an empty preferredArchitecture is not)
    if preference.get("preferredArchitecture") or any(
            preference.get(k) is not None for k in ("preferredSubdomain", "preferredTerminationGracePeriodSeconds",
                                                      "preferredLaunchSecurity")):
        steps.append(lambda spec, metadata: apply_toplevel(preference, spec))
    ann = preference.get("annotations")
    if ann and type(ann) is dict:
        steps.append(lambda spec, metadata: apply_annotations(preference, metadata))
    return tuple(steps)
