"""The VMI mutating webhook's defaults, applied when a new VirtualMachineInstance is created.

    mutate_new_vmi(vmi, config=None, *, network_and_disks_done=False) -> None
        (in place; `vmi` is a private dict; `network_and_disks_done`: the caller built the VMI
        with its default disks and pod network before applying the instancetype and preference,
        as the VM controller does, so step 1 need not run them again: engine/vmi_defaults.py)

KubeVirt: the virt-api VMI mutator on CREATE (pkg/virt-api/webhooks/mutating-webhook/
mutators/vmi-mutator.go) calling SetDefaultVirtualMachineInstance (pkg/defaults), in order:

1. the VMI spec defaults (engine/vmi_defaults.py; may raise DefaultsError);
2. s390x: `features.acpi.enabled: false` unless set (setS390xDefaultFeatures);
3. the API object defaults (SetObjectDefaults_VirtualMachineInstance): features and
   firmware objects, `disk: {}` for a disk without target, cdrom readonly/tray, input
   bus/type, feature states `enabled: true`, spinlocks 4096, probe timings;
4. Hyper-V feature dependencies (SetHypervFeatureDependencies), best effort;
5. architecture defaults (SetArm64Defaults / SetS390xDefaults / SetAmd64Defaults), then the
   cluster CPU model (setDefaultCPUModel);
6. `status.memory` and `status.currentCPUTopology`;
7. CPU and memory hotplug limits (setupHotplug), unless arm64 or not LiveUpdate;
8. the PCI topology annotation, the TDX quote-generation socket annotation,
   `status.runtimeUser` (non-root), the foreground-delete finalizer and `status.phase: Pending`.
"""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from instancetype.engine.virt_config import ClusterConfig

from typing import Any

from instancetype.engine.jsondata import child, dict_items
from instancetype.engine.virt_config import DEFAULT_CPU_MODEL, cluster_config
from instancetype.engine.vmi_defaults import set_vmi_spec_defaults

RUNTIME_USER_NONROOT = 107
FOREGROUND_FINALIZER = "kubevirt.io/foregroundDeleteVirtualMachine"
PCI_TOPOLOGY_ANNOTATION = "kubevirt.io/pci-topology-version"
PCI_TOPOLOGY_V3 = "v3"
QGS_SOCKET_ANNOTATION = "kubevirt.io/qgs-socket-path"
DEFAULT_QGS_SOCKET_PATH = "/var/run/tdx-qgs/qgs.socket"
MAX_VCPUS_FOR_HOTPLUG = 512   # KubeVirt caps maxSockets * cores * threads at this count

_MI = 1024 * 1024
_GI = 1024 * _MI

# Hyper-V features that are plain FeatureStates (SetDefaults_FeatureState).
_HYPERV_STATES = ("relaxed", "vapic", "vpindex", "runtime", "synic", "reset", "vendorid",
                  "frequencies", "reenlightenment", "ipi", "evmcs")
_TIMERS = ("hpet", "kvm", "pit", "rtc", "hyperv")


def _enable_state(state: Any) -> None:
    if isinstance(state, dict) and state.get("enabled") is None:
        state["enabled"] = True


# --- 3.3 API object defaults --------------------------------------------------------------------
def _api_defaults(spec: dict[str, Any], domain: dict[str, Any]) -> None:
    child(domain, "firmware")
    features = child(domain, "features")
    devices = child(domain, "devices")
    for disk in dict_items(devices.get("disks")):
        if disk.get("disk") is None and disk.get("cdrom") is None and disk.get("lun") is None:
            disk["disk"] = {}
        cdrom = disk.get("cdrom")
        if isinstance(cdrom, dict):
            if cdrom.get("readonly") is None:
                cdrom["readonly"] = True
            if not cdrom.get("tray"):
                cdrom["tray"] = "closed"
        block = disk.get("blockSize")
        if isinstance(block, dict):
            _enable_state(block.get("matchVolume"))
    for inp in dict_items(devices.get("inputs")):
        if not inp.get("bus"):
            inp["bus"] = "usb"
        if not inp.get("type"):
            inp["type"] = "tablet"
    for probe_key in ("readinessProbe", "livenessProbe"):
        _probe_defaults(spec.get(probe_key))
    clock = domain.get("clock")
    timer = clock.get("timer") if isinstance(clock, dict) else None
    if isinstance(timer, dict):
        for key in _TIMERS:
            # Go's Timer types call their `Enabled` field `present` on the wire.
            t = timer.get(key)
            if isinstance(t, dict) and t.get("present") is None:
                t["present"] = True
    # ACPI is a plain (non-pointer) FeatureState in Go: it always gets a value.
    acpi = child(features, "acpi")
    if acpi.get("enabled") is None:
        acpi["enabled"] = True
    _enable_state(features.get("apic"))
    _enable_state(features.get("smm"))
    _enable_state(features.get("pvspinlock"))
    hyperv = features.get("hyperv")
    if isinstance(hyperv, dict):
        for key in _HYPERV_STATES:
            _enable_state(hyperv.get(key))
        spinlocks = hyperv.get("spinlocks")
        if isinstance(spinlocks, dict):
            _enable_state(spinlocks)
            if spinlocks.get("enabled") is True and spinlocks.get("spinlocks") is None:
                spinlocks["spinlocks"] = 4096
        for key in ("synictimer", "tlbflush"):
            state = hyperv.get(key)
            if isinstance(state, dict):
                _enable_state(state)
                _enable_state(state.get("direct"))
                _enable_state(state.get("extended"))
    for gpu in dict_items(devices.get("gpus")):
        opts = gpu.get("virtualGPUOptions")
        display = opts.get("display") if isinstance(opts, dict) else None
        if isinstance(display, dict):
            _enable_state(display.get("ramFB"))


def _probe_defaults(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    for key, default in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1),
                         ("failureThreshold", 3)):
        v = probe.get(key)
        if not isinstance(v, int) or v < 1:
            probe[key] = default


# --- 3.4 Hyper-V dependencies ---------------------------------------------------------------------
def _missing(state: Any) -> bool:
    return not isinstance(state, dict) or state.get("enabled") is None


def _enabled(state: Any) -> bool:
    return isinstance(state, dict) and state.get("enabled") is True


# (feature, the feature it needs), leaves first, as KubeVirt's getHypervFeatureDependencies lists them.
_HYPERV_DEPENDENCIES = (("evmcs", "vapic"), ("ipi", "vpindex"), ("tlbflush", "vpindex"),
                        ("synictimer", "synic"), ("synic", "vpindex"))


def _hyperv_dependencies(domain: dict[str, Any]) -> None:
    features = domain.get("features")
    hyperv = features.get("hyperv") if isinstance(features, dict) else None
    if not isinstance(hyperv, dict):
        return
    for feature, needs in _HYPERV_DEPENDENCIES:
        if not _enabled(hyperv.get(feature)):
            continue
        required = hyperv.get(needs)
        if _missing(required):
            if not isinstance(required, dict):
                required = hyperv[needs] = {}
            required["enabled"] = True
        elif not _enabled(required):
            # Explicitly disabled: KubeVirt stops its best-effort fix-ups here (what was
            # added stays) and leaves the refusal to the validating webhook.
            return
    evmcs = hyperv.get("evmcs")
    if isinstance(evmcs, dict) and evmcs.get("enabled") is not False:
        _require_vmx(domain)


def _require_vmx(domain: dict[str, Any]) -> None:
    """setEVMCSDependency: the CPU feature `vmx` with policy `require`."""
    cpu = child(domain, "cpu")
    features = cpu.get("features")
    if not isinstance(features, list) or not features:
        cpu["features"] = [{"name": "vmx", "policy": "require"}]
        return
    for f in features:
        if isinstance(f, dict) and f.get("name") == "vmx":
            if f.get("policy") != "require":
                f["policy"] = "require"
            return
    features.append({"name": "vmx", "policy": "require"})


# --- 3.5 architecture defaults --------------------------------------------------------------------
def _set_disk_buses(devices: dict[str, Any], bus: str) -> None:
    for disk in dict_items(devices.get("disks")):
        for target in ("disk", "cdrom", "lun"):
            t = disk.get(target)
            if isinstance(t, dict) and not t.get("bus"):
                t["bus"] = bus


def _set_watchdog(devices: dict[str, Any], device: str) -> None:
    watchdog = devices.get("watchdog")
    if not isinstance(watchdog, dict):
        return
    dev = child(watchdog, device)
    if not dev.get("action"):
        dev["action"] = "reset"


def _arch_defaults(spec: dict[str, Any], domain: dict[str, Any], cpu_model: str) -> None:
    arch = spec.get("architecture") or ""
    devices = child(domain, "devices")
    if arch == "arm64":
        cpu = child(domain, "cpu")
        if not cpu.get("model"):
            cpu["model"] = "host-passthrough"
        firmware = child(domain, "firmware")
        bootloader = firmware.get("bootloader")
        if not isinstance(bootloader, dict):
            firmware["bootloader"] = {"efi": {"secureBoot": False}}
        else:
            efi = bootloader.get("efi")
            if isinstance(efi, dict) and efi.get("secureBoot") is None:
                efi["secureBoot"] = False
        _set_disk_buses(devices, "virtio")
    elif arch == "s390x":
        _set_disk_buses(devices, "virtio")
        _set_watchdog(devices, "diag288")
    else:
        _set_disk_buses(devices, "sata")
        _set_watchdog(devices, "i6300esb")
    cpu = child(domain, "cpu")
    if not cpu.get("model"):
        cpu["model"] = cpu_model or DEFAULT_CPU_MODEL


# --- 3.7 hotplug ----------------------------------------------------------------------------------
def _u32(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _cpu_hotplug(cpu: dict[str, Any], cfg: ClusterConfig) -> None:
    """setupCPUHotplug: maxSockets from the cluster limit, else sockets x ratio (capped)."""
    if _u32(cpu.get("maxSockets")):
        return
    sockets, cores, threads = _u32(cpu.get("sockets")), _u32(cpu.get("cores")), _u32(cpu.get("threads"))
    max_sockets = _u32(cfg.max_cpu_sockets)
    if max_sockets and sockets > max_sockets:
        max_sockets = sockets
    if not max_sockets:
        max_sockets = sockets * _u32(cfg.max_hotplug_ratio)
        if max_sockets * cores * threads > MAX_VCPUS_FOR_HOTPLUG:
            max_sockets = max(MAX_VCPUS_FOR_HOTPLUG // (cores * threads), sockets)
    if max_sockets:
        cpu["maxSockets"] = max_sockets & 0xFFFFFFFF


@lru_cache(maxsize=1024)
def _hotplug_sizes(guest_text: str | None, max_guest: str | None, ratio: int) -> tuple[Any, ...] | None:
    """(guest bytes or None, maxGuest candidate bytes, its text, guest > candidate): the quantity
    arithmetic of setupMemoryHotplug, a pure function of its texts, done once per triple."""
    from instancetype.api.quantity import Quantity

    guest = Quantity.parse(guest_text) if guest_text is not None else None
    if max_guest is not None:
        candidate = Quantity.parse(max_guest)
    elif guest is not None:
        candidate = Quantity.from_int(guest.value() * ratio, "BinarySI")
    else:
        return None
    if guest is None:
        return None, candidate.value(), str(candidate), False
    return guest.value(), candidate.value(), str(candidate), guest > candidate


def _memory_hotplug(spec: dict[str, Any], domain: dict[str, Any], cfg: ClusterConfig) -> None:
    """setupMemoryHotplug + ValidateLiveUpdateMemory (pkg/liveupdate/memory): maxGuest when allowed."""
    memory = domain.get("memory")
    if not isinstance(memory, dict) or memory.get("maxGuest") is not None:
        return
    sizes = _hotplug_sizes(memory.get("guest"), cfg.max_guest, _u32(cfg.max_hotplug_ratio))
    if sizes is None:
        return
    guest, candidate, candidate_text, too_big = sizes
    cpu = got if isinstance(got := domain.get("cpu"), dict) else {}
    numa = cpu.get("numa")
    if cpu.get("realtime") is not None:
        return      # Memory hotplug is not compatible with realtime VMs
    if isinstance(numa, dict) and numa.get("guestMappingPassthrough") is not None:
        return      # ... with guest mapping passthrough
    if domain.get("launchSecurity") is not None:
        return      # ... with encrypted VMs
    if guest is None or too_big:
        return      # guest memory must be set and not exceed maxGuest
    hugepages = memory.get("hugepages")
    page = hugepages.get("pageSize") if isinstance(hugepages, dict) else None
    align = _GI if page == "1Gi" else 2 * _MI
    if guest % align or candidate % align:
        return      # Guest memory / MaxGuest must be aligned
    if spec.get("architecture") != "amd64":
        return      # Memory hotplug is only available for x86_64 VMs
    if guest < _GI:
        return      # ... only for VMs with at least 1Gi of guest memory
    memory["maxGuest"] = candidate_text


# --- the whole webhook ----------------------------------------------------------------------------
def supports_pcie_hotplug(spec: dict[str, Any]) -> bool:
    """defaults.SupportsPCIeHotplug: a PCIe bus topology (amd64 or arm64, no machine type or a
    q35 / virt one), which takes pcie-root-port controllers for hotplug capacity."""
    if (spec.get("architecture") or "") not in ("", "amd64", "arm64"):
        return False
    domain = spec.get("domain")
    machine = domain.get("machine") if isinstance(domain, dict) else None
    if not isinstance(machine, dict):
        return True
    mtype = machine.get("type")
    if not isinstance(mtype, str):
        mtype = ""
    return "q35" in mtype or mtype.startswith("virt")


def set_default_pci_topology_version(meta: dict[str, Any]) -> None:
    """setDefaultPciTopologyVersion (the VMI mutator, and the VM mutator on CREATE for the
    template's metadata): `kubevirt.io/pci-topology-version: v3` unless one is there."""
    child(meta, "annotations").setdefault(PCI_TOPOLOGY_ANNOTATION, PCI_TOPOLOGY_V3)


def _pci_topology(vmi: dict[str, Any], spec: dict[str, Any]) -> None:
    if supports_pcie_hotplug(spec):
        set_default_pci_topology_version(child(vmi, "metadata"))


def _tdx_qgs_socket(vmi: dict[str, Any], domain: dict[str, Any], raw_config: dict[str, Any]) -> None:
    """A TDX VMI is told where the host's Quote Generation Service listens (KubeVirt CR
    `confidentialCompute.tdx.attestation.qgsSocketPath`, by default the QGS daemon's own path)."""
    ls = domain.get("launchSecurity")
    if not isinstance(ls, dict) or ls.get("tdx") is None:
        return
    path = None
    cc = raw_config.get("confidentialCompute") if isinstance(raw_config, dict) else None
    if isinstance(cc, dict):
        att = (cc.get("tdx") or {}).get("attestation") if isinstance(cc.get("tdx"), dict) else None
        path = att.get("qgsSocketPath") if isinstance(att, dict) else None
    child(child(vmi, "metadata"), "annotations")[QGS_SOCKET_ANNOTATION] = path or DEFAULT_QGS_SOCKET_PATH


def mutate_new_vmi(vmi: dict[str, Any], config: Any = None, *, network_and_disks_done: bool = False) -> None:
    """Default a new VMI (its `spec`, `metadata` and `status`) in place, as virt-api does on CREATE.

    Raises `DefaultsError` when the pod network defaults fail.
    """
    cfg = cluster_config(config)
    spec = child(vmi, "spec")
    set_vmi_spec_defaults(spec, cfg, network_and_disks_done=network_and_disks_done)   # 3.1
    domain = child(spec, "domain")
    arch = spec.get("architecture") or ""
    if arch == "s390x":                                               # 3.2
        acpi = child(child(domain, "features"), "acpi")
        if acpi.get("enabled") is None:
            acpi["enabled"] = False
    _api_defaults(spec, domain)                                       # 3.3
    _hyperv_dependencies(domain)                                      # 3.4
    _arch_defaults(spec, domain, cfg.cpu_model)                       # 3.5
    status = child(vmi, "status")                                      # 3.6
    memory = domain.get("memory")
    guest = memory.get("guest") if isinstance(memory, dict) else None
    if guest is not None:
        status["memory"] = {"guestAtBoot": guest, "guestCurrent": guest, "guestRequested": guest}
    cpu = child(domain, "cpu")
    if status.get("currentCPUTopology") is None:
        status["currentCPUTopology"] = {"sockets": _u32(cpu.get("sockets")), "cores": _u32(cpu.get("cores")),
                                        "threads": _u32(cpu.get("threads"))}
    if arch != "arm64" and cfg.rollout_live_update:                   # 3.7
        _cpu_hotplug(cpu, cfg)
        _memory_hotplug(spec, domain, cfg)
    _pci_topology(vmi, spec)                                          # 3.8
    _tdx_qgs_socket(vmi, domain, cfg.raw)
    status["runtimeUser"] = RUNTIME_USER_NONROOT
    meta = child(vmi, "metadata")
    finalizers = meta.get("finalizers")
    meta["finalizers"] = (list(finalizers) if isinstance(finalizers, list) else []) + [FOREGROUND_FINALIZER]
    status["phase"] = "Pending"
