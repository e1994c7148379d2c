"""What each field does, for `explain` and for the CRDs `install` writes (so the real `kubectl
explain` shows the same): every field of the four instancetype.kubevirt.io kinds, and the
VirtualMachine fields instancetypes and preferences touch (matchers, run strategy, domain CPU,
memory, resources, devices, firmware, features). Our words, a line or two each, saying what the
field does and which side sets it: an instancetype's fields are the VM's (a VM that sets one too
is refused as a conflict); a preference's only fill what the VM leaves unset.

Public: `INSTANCETYPE_DOCS`, `PREFERENCE_DOCS`, `VM_DOCS` (path from the object's root -> text),
`describe(schema, docs)` (the schema with descriptions added, in place), `doc_for(docs, path)`.
"""
from __future__ import annotations

from typing import Any

_IT = " Set by the instancetype: a VM that sets it as well is refused (conflict)."
_PREF = " A preference: applied only when the VM leaves it unset."
_PREF_ONLY = " Read from the preference (a VM does not set it)."

_COMMON_TOP = {
    "apiVersion": "The versioned schema of this object: instancetype.kubevirt.io/v1beta1.",
    "kind": "The kind of this object.",
    "metadata": "Standard object metadata (name, namespace, labels, annotations).",
}

_SEV = {
    "": "AMD Secure Encrypted Virtualization (SEV) for the guest's memory.",
    ".policy": "The SEV guest policy.",
    ".policy.encryptedState": "Whether the guest's CPU state is encrypted too (SEV-ES).",
    ".attestation": "Ask for SEV attestation before the guest boots (virt-launcher pauses it until then).",
    ".session": "The base64 session parameters blob for SEV attestation.",
    ".dhCert": "The base64 guest owner's Diffie-Hellman key for SEV attestation.",
}


def _launch_security(prefix: str, side: str) -> dict[str, str]:
    out = {prefix: "Confidential computing for the VM's memory (SEV, SNP or TDX)." + side}
    for suffix, text in _SEV.items():
        out[f"{prefix}.sev{suffix}"] = text + (side if not suffix else "")
    out[f"{prefix}.snp"] = "AMD SEV-SNP (secure nested paging) for the guest." + side
    out[f"{prefix}.tdx"] = "Intel Trust Domain Extensions (TDX) for the guest." + side
    return out


def _devices(prefix: str, what: str) -> dict[str, str]:
    """The GPUs and host devices an instancetype gives the VM (the same fields)."""
    return {
        prefix: f"{what} passed through to the VM." + _IT,
        f"{prefix}.name": "The device's name in the VM's spec (unique among the VM's devices).",
        f"{prefix}.deviceName": "The resource name the node advertises for the device (e.g. nvidia.com/GP102GL).",
        f"{prefix}.tag": "A tag exposed to the guest in the device metadata, to find the device from inside.",
        f"{prefix}.claimName": "The VM's resourceClaims entry that allocates the device (DRA).",
        f"{prefix}.requestName": "The request within that resource claim that names the device (DRA).",
    }


_VGPU = {
    "": "Options of a virtual GPU's display.",
    ".display": "The virtual GPU's display.",
    ".display.enabled": "Whether the virtual GPU's display is shown (default true).",
    ".display.ramFB": "The RAM framebuffer used as the boot display of the virtual GPU.",
    ".display.ramFB.enabled": "Whether the RAM framebuffer is enabled.",
}

INSTANCETYPE_DOCS: dict[str, str] = {
    **_COMMON_TOP,
    "spec": "The resources and performance settings every VM using this instancetype gets. A VM may not "
            "set the same fields itself; it is refused with a conflict naming them.",
    "spec.nodeSelector": "Labels a node must have to run the VM (the VMI's nodeSelector)." + _IT,
    "spec.schedulerName": "The Kubernetes scheduler that places the VM's pod (the VMI's schedulerName)." + _IT,
    "spec.cpu": "The guest's vCPUs and how they are placed on host CPUs." + _IT,
    "spec.cpu.guest": "The number of vCPUs of the guest (required). Laid out as sockets, cores or threads by "
                      "the preference's preferredCPUTopology (sockets by default).",
    "spec.cpu.model": "The CPU model the guest sees (e.g. host-passthrough, or a named libvirt model)." + _IT,
    "spec.cpu.dedicatedCPUPlacement": "Pin each vCPU to its own host CPU (needs the CPU manager on the node)." + _IT,
    "spec.cpu.numa": "Expose a NUMA topology to the guest." + _IT,
    "spec.cpu.numa.guestMappingPassthrough": "Mirror the host's NUMA topology of the pinned vCPUs in the guest "
                                             "(needs dedicatedCPUPlacement and hugepages).",
    "spec.cpu.isolateEmulatorThread": "Give QEMU's emulator thread a host CPU of its own, apart from the vCPUs "
                                      "(with dedicatedCPUPlacement)." + _IT,
    "spec.cpu.realtime": "Tune the vCPUs for realtime workloads (with dedicatedCPUPlacement)." + _IT,
    "spec.cpu.realtime.mask": "The vCPUs given the realtime scheduler, as a libvirt range (e.g. 0-3,^1); all "
                              "when empty.",
    "spec.cpu.maxSockets": "The most sockets the guest may grow to by CPU hotplug." + _IT,
    "spec.memory": "The guest's memory." + _IT,
    "spec.memory.guest": "The memory the guest sees (required), e.g. 2Gi.",
    "spec.memory.hugepages": "Back the guest's memory with hugepages of one size." + _IT,
    "spec.memory.hugepages.pageSize": "The hugepage size, e.g. 2Mi or 1Gi (the node must offer them).",
    "spec.memory.overcommitPercent": "How much less memory the pod requests than the guest sees, in percent "
                                     "(0-100; e.g. 10: the request is 90% of guest)." + _IT,
    "spec.memory.maxGuest": "The most memory the guest may grow to by memory hotplug." + _IT,
    **_devices("spec.gpus", "GPUs"),
    **{f"spec.gpus.virtualGPUOptions{k}": v for k, v in _VGPU.items()},
    **_devices("spec.hostDevices", "Host devices (PCI or mediated)"),
    "spec.ioThreadsPolicy": "How disks get I/O threads: shared (one for all), auto (a pool), or "
                            "supplementalPool (ioThreads.supplementalPoolThreadCount threads)." + _IT,
    "spec.ioThreads": "The I/O threads of the supplementalPool policy." + _IT,
    "spec.ioThreads.supplementalPoolThreadCount": "The number of I/O threads shared by the disks.",
    **_launch_security("spec.launchSecurity", _IT),
    "spec.annotations": "Annotations added to the VM's VirtualMachineInstance and so to its pod; the VM's "
                        "own annotations of the same key win.",
}

_TIMER = {
    "hpet": "the HPET (high precision event timer)",
    "kvm": "the KVM paravirtual clock",
    "pit": "the PIT (programmable interval timer)",
    "rtc": "the RTC (real-time clock)",
    "hyperv": "the Hyper-V reference time counter",
}
_TICK = "What the timer does with ticks the guest missed: delay, catchup, merge or discard."

_HYPERV = {
    "relaxed": "relaxed timing (no watchdog timeouts in a guest paused by the host)",
    "vapic": "the virtual APIC, which saves exits on interrupts",
    "spinlocks": "spinlock retries before the guest tells the host it waits",
    "vpindex": "virtual processor indexes",
    "runtime": "the virtual processor run time",
    "synic": "the synthetic interrupt controller",
    "synictimer": "the synthetic timers (need synic and vpindex)",
    "reset": "guest-triggered reset through Hyper-V",
    "vendorid": "a Hyper-V vendor id the guest sees",
    "frequencies": "the TSC and APIC frequencies the guest reads",
    "reenlightenment": "re-enlightenment notifications after a migration changes the TSC frequency",
    "tlbflush": "paravirtual TLB flushes",
    "ipi": "paravirtual inter-processor interrupts",
    "evmcs": "the enlightened VMCS for nested virtualisation (needs vapic)",
}


def _preference_features() -> dict[str, str]:
    p = "spec.features"
    out = {
        p: "Guest features (ACPI, APIC, Hyper-V, KVM, SMM...) the VM gets unless it sets them." + _PREF,
        f"{p}.preferredAcpi": "ACPI for the guest." + _PREF,
        f"{p}.preferredAcpi.enabled": "Whether the feature is on (default true).",
        f"{p}.preferredApic": "The APIC for the guest." + _PREF,
        f"{p}.preferredApic.enabled": "Whether the feature is on (default true).",
        f"{p}.preferredApic.endOfInterrupt": "Expose EOI (end of interrupt) to the guest.",
        f"{p}.preferredHyperv": "Hyper-V enlightenments, for Windows guests." + _PREF,
        f"{p}.preferredKvm": "KVM features for the guest." + _PREF,
        f"{p}.preferredKvm.hidden": "Hide the KVM hypervisor signature from the guest (some GPU drivers need it).",
        f"{p}.preferredPvspinlock": "Paravirtual spinlocks." + _PREF,
        f"{p}.preferredPvspinlock.enabled": "Whether the feature is on (default true).",
        f"{p}.preferredSmm": "System management mode (needed by EFI secure boot)." + _PREF,
        f"{p}.preferredSmm.enabled": "Whether the feature is on (default true).",
    }
    for name, what in _HYPERV.items():
        base = f"{p}.preferredHyperv.{name}"
        out[base] = f"Hyper-V {what}."
        out[f"{base}.enabled"] = "Whether the enlightenment is on (default true)."
    out[f"{p}.preferredHyperv.spinlocks.spinlocks"] = "The retries before a spinlock notifies the host (at least 4096)."
    out[f"{p}.preferredHyperv.vendorid.vendorid"] = "The vendor id, at most 12 characters."
    for sub, what in (("synictimer.direct", "direct mode of the synthetic timers"),
                      ("tlbflush.direct", "direct TLB flush (the guest flushes without the hypervisor)"),
                      ("tlbflush.extended", "extended TLB flush hypercalls")):
        out[f"{p}.preferredHyperv.{sub}"] = f"Hyper-V {what}."
        out[f"{p}.preferredHyperv.{sub}.enabled"] = "Whether it is on (default true)."
    return out


def _preference_clock() -> dict[str, str]:
    p = "spec.clock"
    out = {
        p: "The guest's clock and timers." + _PREF,
        f"{p}.preferredClockOffset": "How the guest's clock is set at boot: UTC with an offset, or a time zone." + _PREF,
        f"{p}.preferredClockOffset.utc": "The guest clock in UTC, plus offsetSeconds.",
        f"{p}.preferredClockOffset.utc.offsetSeconds": "Seconds added to UTC for the guest's clock.",
        f"{p}.preferredClockOffset.timezone": "The time zone the guest's clock starts in (e.g. Europe/Paris).",
        f"{p}.preferredTimer": "The timers the guest gets." + _PREF,
    }
    for name, what in _TIMER.items():
        out[f"{p}.preferredTimer.{name}"] = f"The guest's {what}."
        out[f"{p}.preferredTimer.{name}.present"] = "Whether the timer is there (default true)."
        if name in ("hpet", "pit", "rtc"):
            out[f"{p}.preferredTimer.{name}.tickPolicy"] = _TICK
    out[f"{p}.preferredTimer.rtc.track"] = "What the RTC follows: guest or wall time."
    return out


_DEVICE_PREFS = {
    "preferredAutoattachGraphicsDevice": "Attach a graphics device (VNC) to the VM.",
    "preferredAutoattachMemBalloon": "Attach a memory balloon device (the guest's memory statistics).",
    "preferredAutoattachPodInterface": "Attach the pod network interface by default.",
    "preferredAutoattachSerialConsole": "Attach a serial console.",
    "preferredAutoattachInputDevice": "Attach an input device (a tablet) for the graphical console.",
    "preferredDisableHotplug": "Turn off volume and interface hotplug for the VM.",
    "preferredVirtualGPUOptions": "Display options of the VM's virtual GPUs.",
    "preferredSoundModel": "The sound device model: ich9 or ac97.",
    "preferredUseVirtioTransitional": "Use virtio transitional devices, for guests too old for virtio 1.0 "
                                      "(e.g. RHEL 6).",
    "preferredInputBus": "The bus of input devices: usb or virtio.",
    "preferredInputType": "The type of input devices: tablet.",
    "preferredDiskBus": "The bus of disks that name none: virtio, sata or scsi.",
    "preferredLunBus": "The bus of LUN disks that name none: sata or scsi.",
    "preferredCdromBus": "The bus of CD-ROMs that name none: sata or scsi.",
    "preferredDiskDedicatedIoThread": "Give each disk an I/O thread of its own.",
    "preferredDiskCache": "The cache mode of disks: none, writethrough or writeback.",
    "preferredDiskIO": "The I/O mode of disks: native, threads or default.",
    "preferredDiskBlockSize": "The block sizes disks report to the guest.",
    "preferredDiskBlockSize.custom": "Block sizes given explicitly.",
    "preferredDiskBlockSize.custom.logical": "The logical block size in bytes (e.g. 512).",
    "preferredDiskBlockSize.custom.physical": "The physical block size in bytes (e.g. 4096).",
    "preferredDiskBlockSize.custom.discardGranularity": "The discard granularity in bytes.",
    "preferredDiskBlockSize.matchVolume": "Report the block sizes of the volume behind each disk.",
    "preferredDiskBlockSize.matchVolume.enabled": "Whether the sizes come from the volume.",
    "preferredInterfaceModel": "The model of network interfaces that name none (e.g. virtio, e1000e).",
    "preferredRng": "Attach a virtio random number generator.",
    "preferredBlockMultiQueue": "Give virtio disks one queue per vCPU.",
    "preferredNetworkInterfaceMultiQueue": "Give virtio network interfaces one queue per vCPU.",
    "preferredTPM": "Attach an emulated TPM (needed by Windows 11).",
    "preferredTPM.enabled": "Whether the TPM is attached.",
    "preferredTPM.persistent": "Keep the TPM's state across reboots and migrations.",
    "preferredInterfaceMasquerade": "Connect pod network interfaces with masquerade binding.",
    "preferredPanicDeviceModel": "The model of the panic device: hyperv, isa or pvpanic.",
    "preferredVideoType": "The video device type (e.g. virtio, vga, bochs).",
}


def _preference_docs() -> dict[str, str]:
    out = {
        **_COMMON_TOP,
        "spec": "Defaults for a VM's guest-facing settings: each applies only where the VM leaves the field "
                "unset, so a VM can always override a preference.",
        "spec.cpu": "How the instancetype's vCPUs are laid out for the guest, and CPU features." + _PREF,
        "spec.cpu.preferredCPUTopology": "How guest vCPUs become sockets, cores and threads: sockets (default), "
                                         "cores, threads, spread or any." + _PREF_ONLY,
        "spec.cpu.spreadOptions": "With the spread topology: what the vCPUs spread across, and in which ratio.",
        "spec.cpu.spreadOptions.across": "SocketsCores (default), SocketsCoresThreads or CoresThreads.",
        "spec.cpu.spreadOptions.ratio": "The ratio of the spread, e.g. 2: twice as many cores as sockets "
                                        "(default 2).",
        "spec.cpu.preferredCPUFeatures": "CPU features added to the guest's CPU model." + _PREF,
        "spec.cpu.preferredCPUFeatures.name": "The CPU feature's name (e.g. vmx).",
        "spec.cpu.preferredCPUFeatures.policy": "How the feature is asked for: force, require, optional, "
                                                "disable or forbid (default require).",
        "spec.devices": "Device defaults: buses, models and the devices attached automatically." + _PREF,
        **{f"spec.devices.{k}": v + (_PREF if "." not in k else "") for k, v in _DEVICE_PREFS.items()},
        **{f"spec.devices.preferredVirtualGPUOptions{k}": v for k, v in _VGPU.items() if k},
        "spec.firmware": "The guest's firmware: BIOS or EFI, secure boot." + _PREF,
        "spec.firmware.preferredUseBios": "Boot with BIOS." + _PREF,
        "spec.firmware.preferredUseBiosSerial": "Show the BIOS on the serial console." + _PREF,
        "spec.firmware.preferredUseEfi": "Boot with EFI (deprecated: use preferredEfi)." + _PREF,
        "spec.firmware.preferredUseSecureBoot": "Boot with EFI secure boot (deprecated: use preferredEfi)." + _PREF,
        "spec.firmware.preferredEfi": "Boot with EFI, with these settings." + _PREF,
        "spec.firmware.preferredEfi.secureBoot": "EFI secure boot (needs SMM; default true).",
        "spec.firmware.preferredEfi.persistent": "Keep the EFI variables (NVRAM) across reboots.",
        "spec.machine": "The emulated machine." + _PREF,
        "spec.machine.preferredMachineType": "The machine type (e.g. q35, pc-q35-rhel9.2.0)." + _PREF,
        "spec.volumes": "Defaults of the VM's volumes." + _PREF,
        "spec.volumes.preferredStorageClassName": "The storage class of the VM's dataVolumeTemplates that "
                                                  "name none." + _PREF,
        "spec.preferredSubdomain": "The guest's DNS subdomain (the VMI's subdomain)." + _PREF,
        "spec.preferredTerminationGracePeriodSeconds": "Seconds the guest gets to shut down before it is "
                                                       "stopped." + _PREF,
        "spec.requirements": "The least CPU and memory an instancetype (or the VM) must give for this "
                             "preference; less is refused." + _PREF_ONLY,
        "spec.requirements.cpu": "The least vCPUs.",
        "spec.requirements.cpu.guest": "The least number of guest vCPUs.",
        "spec.requirements.memory": "The least memory.",
        "spec.requirements.memory.guest": "The least guest memory, e.g. 2Gi.",
        "spec.requirements.architecture": "The architecture the VM must have (e.g. amd64).",
        "spec.annotations": "Annotations added to the VM's VirtualMachineInstance where the VM has none of "
                            "that key.",
        "spec.preferSpreadSocketToCoreRatio": "Deprecated: the ratio of the spread topology (use "
                                              "cpu.spreadOptions.ratio)." + _PREF_ONLY,
        "spec.preferredArchitecture": "The VM's architecture (e.g. amd64, arm64)." + _PREF,
        **_launch_security("spec.preferredLaunchSecurity", _PREF),
    }
    out.update(_preference_features())
    out.update(_preference_clock())
    return out


PREFERENCE_DOCS = _preference_docs()

_MATCHER = {
    "name": "The name of the {what} to use.",
    "kind": "Its kind: {kinds} (the cluster-wide one when empty).",
    "revisionName": "The ControllerRevision the {what} was captured in at the VM's first start; written by "
                    "the controller, so later edits of the {what} do not change this VM.",
    "inferFromVolume": "The volume (a DataVolume, PVC or DataSource) whose default-{what} labels name the "
                       "{what}; name and kind are filled from them at creation.",
    "inferFromVolumeFailurePolicy": "What happens when inference fails: Reject (the default: the VM is "
                                    "refused) or Ignore (the VM is kept without a {what}).",
}
_DOMAIN = "spec.template.spec.domain"
_BY_INSTANCETYPE = " An instancetype sets it: a VM using one may not."
_BY_PREFERENCE = " A preference may fill it when the VM leaves it unset."


def _vm_docs() -> dict[str, str]:
    out = {
        "spec.instancetype": "The instancetype the VM takes its CPU, memory and related settings from.",
        "spec.preference": "The preference the VM takes defaults from for what it leaves unset.",
        "spec.runStrategy": "When the VM runs: Always, RerunOnFailure, Once, Manual or Halted (virtctl start "
                            "and stop change it).",
        "spec.running": "Deprecated: true or false for runStrategy Always or Halted (give one of the two).",
        "spec.template": "The VirtualMachineInstance the VM starts, with the instancetype and preference applied.",
        "spec.template.spec": "The spec of the VirtualMachineInstance.",
        "spec.template.spec.domain": "The virtual hardware of the guest.",
        f"{_DOMAIN}.cpu": "The guest's vCPUs and their topology." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.cpu.sockets": "vCPU sockets; with an instancetype, from its cpu.guest and the preference's "
                                  "preferredCPUTopology.",
        f"{_DOMAIN}.cpu.cores": "Cores per socket; with an instancetype, from its cpu.guest and the preference's "
                                "preferredCPUTopology.",
        f"{_DOMAIN}.cpu.threads": "Threads per core; with an instancetype, from its cpu.guest and the "
                                  "preference's preferredCPUTopology.",
        f"{_DOMAIN}.cpu.model": "The CPU model the guest sees." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.cpu.dedicatedCpuPlacement": "Pin each vCPU to a host CPU." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.cpu.isolateEmulatorThread": "A host CPU for QEMU's emulator thread." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.cpu.numa": "The guest's NUMA topology." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.cpu.realtime": "Realtime tuning of the vCPUs." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.cpu.maxSockets": "The most sockets for CPU hotplug." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.cpu.features": "CPU features added to the model (a preference's preferredCPUFeatures fill "
                                   "it when empty).",
        f"{_DOMAIN}.memory": "The guest's memory." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.memory.guest": "The memory the guest sees." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.memory.hugepages": "Hugepages backing the memory." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.memory.maxGuest": "The most memory for memory hotplug." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.memory.reservedOverhead": "Memory added to the pod's request for the VM's own overhead.",
        f"{_DOMAIN}.resources": "The pod's resource requests and limits. With an instancetype, the CPU and "
                                "memory requests come from it and the VM may not set them.",
        f"{_DOMAIN}.resources.requests": "Requested resources (cpu, memory); an instancetype's VM may not set "
                                         "cpu or memory here.",
        f"{_DOMAIN}.resources.limits": "Resource limits; an instancetype's VM may not set cpu or memory here.",
        f"{_DOMAIN}.resources.overcommitGuestOverhead": "Leave the VM's overhead out of the memory request.",
        f"{_DOMAIN}.devices": "The guest's devices: disks, interfaces, GPUs and the automatically attached ones."
                              + _BY_PREFERENCE,
        f"{_DOMAIN}.devices.gpus": "GPUs passed through." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.devices.hostDevices": "Host devices passed through." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.devices.disks": "The disks; a preference's preferredDiskBus and related fields fill what each "
                                    "leaves unset.",
        f"{_DOMAIN}.devices.interfaces": "The network interfaces; a preference's preferredInterfaceModel fills "
                                         "the model they leave unset.",
        f"{_DOMAIN}.devices.inputs": "Input devices; a preference's preferredInputBus and Type fill them.",
        f"{_DOMAIN}.firmware": "The guest's firmware (BIOS or EFI, serial, UUID)." + _BY_PREFERENCE,
        f"{_DOMAIN}.firmware.bootloader": "BIOS or EFI (a preference's preferredUseBios/preferredEfi fill it).",
        f"{_DOMAIN}.features": "Guest features: ACPI, APIC, Hyper-V, KVM, SMM, pvspinlock." + _BY_PREFERENCE,
        f"{_DOMAIN}.ioThreadsPolicy": "How disks get I/O threads." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.launchSecurity": "Confidential computing (SEV, SNP, TDX)." + _BY_INSTANCETYPE,
        f"{_DOMAIN}.machine": "The emulated machine type." + _BY_PREFERENCE,
        f"{_DOMAIN}.clock": "The guest's clock and timers." + _BY_PREFERENCE,
    }
    for key, text in _DEVICE_PREFS.items():
        if "." in key:
            continue
        field = key[len("preferred"):]
        field = field[0].lower() + field[1:]
        out.setdefault(f"{_DOMAIN}.devices.{field}", text + _BY_PREFERENCE)
    for feature in ("acpi", "apic", "hyperv", "kvm", "pvspinlock", "smm"):
        out[f"{_DOMAIN}.features.{feature}"] = (f"The {feature} feature of the guest (a preference's "
                                                f"preferred{feature[0].upper() + feature[1:]} fills it).")
    for side, what, kinds in (("instancetype", "instancetype",
                               "VirtualMachineInstancetype or VirtualMachineClusterInstancetype"),
                              ("preference", "preference", "VirtualMachinePreference or VirtualMachineClusterPreference")):
        for field, text in _MATCHER.items():
            out[f"spec.{side}.{field}"] = text.format(what=what, kinds=kinds)
    return out


VM_DOCS = _vm_docs()
# The VMI's spec is the VM's template spec.
VMI_DOCS = {k[len("spec.template."):]: v for k, v in VM_DOCS.items() if k.startswith("spec.template.spec")}


def doc_for(docs: dict[str, str], path: tuple[str, ...] | list[str]) -> str | None:
    return docs.get(".".join(path))


def describe(schema: dict[str, Any], docs: dict[str, str], path: tuple[str, ...] = ()) -> dict[str, Any]:
    """Add `description` to every property of `schema` (an OpenAPI v3 object schema) that `docs`
    names, in place; an array's items and a map's values are walked as the field itself."""
    for name, sub in (schema.get("properties") or {}).items():
        if not isinstance(sub, dict):
            continue
        here = (*path, name)
        text = docs.get(".".join(here))
        if text and not sub.get("description"):
            sub["description"] = text
        inner: Any = sub
        while isinstance(inner, dict) and (inner.get("items") or isinstance(inner.get("additionalProperties"), dict)):
            inner = inner.get("items") or inner["additionalProperties"]
        if isinstance(inner, dict):
            describe(inner, docs, here)
    return schema
