"""Live update of a running VM (KubeVirt's `handleCPUChangeRequest` and `handleMemoryHotplugRequest`,
pkg/virt-controller/watch/vm/vm.go; `ValidateLiveUpdateMemory`, pkg/liveupdate/memory).

Under the `LiveUpdate` rollout strategy (the default; `vmRolloutStrategy: Stage` turns it off), on
a VM without `RestartRequired`, the VM expanded with its pinned instancetype and preference
(`ApplyToVM`) is compared with the running VMI: more sockets (up to the VMI's `maxSockets`) and
more guest memory (up to its `maxGuest`) are patched into the VMI, tested against the values read,
its CPU and memory requests and limits moved by the same amount. Every case v1.9 cannot carry
out live sets `RestartRequired` with v1.9's message instead; a hotplug already in progress or a
migration running is a `Failure` (HotPlugCPUError / HotPlugMemoryError), retried.

What happens to the patched VMI (its HotVCPUChange / HotMemoryChange conditions, the migration
that carries the change out, its status) is the simulated node's: controller/hotplug.py.
"""
from __future__ import annotations

from instancetype.api.quantity import Quantity
from instancetype.errors import Error
from instancetype.jsonutil import clone
from instancetype.store.source import StoreObjects

from .. import hotplug, node
from ..migratable import migratable
from . import generation
from .restart_required import has_condition, live_update_enabled, set_condition
from .state import VMSync

CPU_ERROR, MEMORY_ERROR = "HotPlugCPUError", "HotPlugMemoryError"
HOTPLUG_ALIGNMENT = 2 * 1024 * 1024                  # HotplugBlockAlignmentBytes
HOTPLUG_ALIGNMENT_1G = 1024 * 1024 * 1024            # Hotplug1GHugePagesBlockAlignmentBytes
MIN_GUEST = 1024 * 1024 * 1024                       # requiredMinGuestMemory


class _SyncFailure(Error):
    pass


def sync(s: VMSync) -> None:
    if not live_update_enabled(s.config) or s.restart_required or has_condition(s.vm):
        return
    if s.vmi is None or node.terminating(s.vmi):
        return
    if not s.changed_since_start and not hotplug.touched(s.vmi):
        return      # the VMI runs the spec it started from, which is the VM's: nothing to expand
    wanted = _expanded(s)
    if wanted is None:
        return
    try:
        _cpu(s, wanted)
    except _SyncFailure as e:
        s.failure = (CPU_ERROR, f"Error encountered while handling CPU change request: {e}")
        return
    try:
        _memory(s, wanted)
    except _SyncFailure as e:
        s.failure = (MEMORY_ERROR, f"error encountered while handling memory hotplug requests: {e}")
        return
    s.vmi = hotplug.progress(s.store, s.vmi, s.config)


def _expanded(s: VMSync) -> dict | None:
    """ApplyToVM: the VM's template spec with its pinned instancetype and preference applied."""
    import instancetype

    try:
        vm = instancetype.expand({**s.vm, "spec": generation.revision_spec(s.vm)}, objects=StoreObjects(s.store),
                                 config=s.config)
    except Error:
        return None
    return ((vm.get("spec") or {}).get("template") or {}).get("spec") or {}


def _has_condition(vmi: dict, kind: str, status: str) -> bool:
    return any(isinstance(c, dict) and c.get("type") == kind and c.get("status") == status
               for c in (vmi.get("status") or {}).get("conditions") or ())


def _u32(v) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _vcpus(cpu: dict) -> int:
    """hardware.GetNumberOfVCPUs: sockets x cores x threads, an unset one counting 1."""
    return (_u32(cpu.get("sockets")) or 1) * (_u32(cpu.get("cores")) or 1) * (_u32(cpu.get("threads")) or 1)


def _cpu(s: VMSync, wanted: dict) -> None:
    """handleCPUChangeRequest."""
    running_vmi = s.vmi
    assert running_vmi is not None
    want_cpu = (wanted.get("domain") or {}).get("cpu")
    vmi_cpu = ((running_vmi.get("spec") or {}).get("domain") or {}).get("cpu")
    if not isinstance(want_cpu, dict) or not isinstance(vmi_cpu, dict):
        return
    sockets, running = _u32(want_cpu.get("sockets")), _u32(vmi_cpu.get("sockets"))
    if sockets == running:
        return
    if _has_condition(running_vmi, hotplug.VCPU_CHANGE, "True"):
        raise _SyncFailure("another CPU hotplug is in progress")
    if hotplug.migrating(running_vmi):
        raise _SyncFailure("CPU hotplug is not allowed while VMI is migrating")
    if sockets > _u32(vmi_cpu.get("maxSockets")):
        set_condition(s.vm, "CPU sockets updated in template spec to a value higher than what's available")
        return
    if sockets < running:
        set_condition(s.vm, "Reduction of CPU socket count requires a restart")
        return
    if ((s.vm.get("spec") or {}).get("template") or {}).get("spec", {}).get("architecture") == "arm64":
        set_condition(s.vm, "ARM doesn't support CPU hotplug")
        return
    _patch_cpu(s, wanted, want_cpu, vmi_cpu)


def _patch_cpu(s: VMSync, wanted: dict, want_cpu: dict, vmi_cpu: dict) -> None:
    """VMICPUsPatch: sockets, and the CPU requests and limits by the vCPUs added over the
    cluster's cpuAllocationRatio."""
    running_vmi = s.vmi
    assert running_vmi is not None
    vmi = clone(running_vmi)
    domain = vmi["spec"]["domain"]
    domain["cpu"]["sockets"] = want_cpu.get("sockets")
    ratio = _u32(((s.config or {}).get("developerConfiguration") or {}).get("cpuAllocationRatio")) or 10
    delta = (_vcpus({**vmi_cpu, "sockets": want_cpu.get("sockets")}) - _vcpus(vmi_cpu)) * (1000 // ratio)
    template_resources = (wanted.get("domain") or {}).get("resources") or {}
    for kind in ("requests", "limits"):
        if not _nonzero((template_resources.get(kind) or {}).get("cpu")):
            continue
        current = (domain.get("resources") or {}).get(kind, {}).get("cpu") or "0"
        total = Quantity.parse(current).milli_value() + delta
        domain.setdefault("resources", {}).setdefault(kind, {})["cpu"] = str(Quantity.from_milli(total, "DecimalSI"))
    s.vmi = _update_vmi(s, vmi)


def _nonzero(q) -> bool:
    try:
        return q is not None and not Quantity.parse(q).is_zero()
    except Error:
        return False


def _memory(s: VMSync, wanted: dict) -> None:
    """handleMemoryHotplugRequest."""
    running_vmi = s.vmi
    assert running_vmi is not None
    want_memory = (wanted.get("domain") or {}).get("memory") or {}
    vmi_memory = ((running_vmi.get("spec") or {}).get("domain") or {}).get("memory") or {}
    memory_status = (running_vmi.get("status") or {}).get("memory") or {}
    if want_memory.get("guest") is None or vmi_memory.get("guest") is None or memory_status.get("guestCurrent") is None:
        return
    if _has_condition(running_vmi, hotplug.MEMORY_CHANGE, "False"):
        set_condition(s.vm, "memory updated in template spec. Memory-hotplug failed and is not available for this "
                            "VM configuration")
        return
    guest = Quantity.parse(want_memory["guest"])
    if guest.cmp(Quantity.parse(vmi_memory["guest"])) == 0:
        return
    if not migratable(running_vmi):
        set_condition(s.vm, "memory updated in template spec. Memory-hotplug is only available for migratable VMs")
        return
    max_guest = vmi_memory.get("maxGuest")
    if max_guest is None:
        set_condition(s.vm, "memory updated in template spec. Memory-hotplug is not available for this VM configuration")
        return
    if _has_condition(running_vmi, hotplug.MEMORY_CHANGE, "True"):
        raise _SyncFailure("another memory hotplug is in progress")
    if hotplug.migrating(running_vmi):
        raise _SyncFailure("memory hotplug is not allowed while VMI is migrating")
    refused = validate_live_update_memory(wanted, Quantity.parse(max_guest))
    if refused:
        set_condition(s.vm, f"memory hotplug not supported, {refused}")
        return
    at_boot = memory_status.get("guestAtBoot")
    if at_boot is not None and guest.cmp(Quantity.parse(at_boot)) < 0:
        set_condition(s.vm, "memory updated in template spec to a value lower than what the VM started with")
        return
    if guest.cmp(Quantity.parse(max_guest)) > 0:
        set_condition(s.vm, "memory updated in template spec to a value higher than what's available")
        return
    _patch_memory(s, wanted, guest, Quantity.parse(memory_status["guestCurrent"]))


def validate_live_update_memory(spec: dict, max_guest: Quantity | None) -> str | None:
    """ValidateLiveUpdateMemory: why memory hotplug cannot work for this VMI spec (None: it can)."""
    domain = spec.get("domain") or {}
    cpu = domain["cpu"] if isinstance(domain.get("cpu"), dict) else {}
    if cpu.get("realtime") is not None:
        return "Memory hotplug is not compatible with realtime VMs"
    if (cpu.get("numa") or {}).get("guestMappingPassthrough") is not None:
        return "Memory hotplug is not compatible with guest mapping passthrough"
    if domain.get("launchSecurity") is not None:
        return "Memory hotplug is not compatible with encrypted VMs"
    memory = domain.get("memory") or {}
    align = HOTPLUG_ALIGNMENT_1G if (memory.get("hugepages") or {}).get("pageSize") == "1Gi" else HOTPLUG_ALIGNMENT
    if memory.get("guest") is None:
        return "Guest memory must be configured when memory hotplug is enabled"
    if max_guest is None:
        return "Max guest memory must be configured when memory hotplug is enabled"
    guest = Quantity.parse(memory["guest"])
    if guest.cmp(max_guest) > 0:
        return "Guest memory is greater than the configured maxGuest memory"
    if guest.value() % align:
        return f"Guest memory must be {Quantity.from_int(align, 'BinarySI')} aligned"
    if max_guest.value() % align:
        return f"MaxGuest must be {Quantity.from_int(align, 'BinarySI')} aligned"
    if spec.get("architecture") != "amd64":
        return "Memory hotplug is only available for x86_64 VMs"
    if guest.value() < MIN_GUEST:
        return "Memory hotplug is only available for VMs with at least 1Gi of guest memory"
    return None


def _patch_memory(s: VMSync, wanted: dict, guest: Quantity, current: Quantity) -> None:
    """The VMI's guest memory, its memory request by the amount added (at least the new guest),
    its limit by the same amount when the template sets one."""
    running_vmi = s.vmi
    assert running_vmi is not None
    vmi = clone(running_vmi)
    domain = vmi["spec"]["domain"]
    domain["memory"]["guest"] = str(guest)
    delta = guest.value() - current.value()
    resources = domain.get("resources") or {}
    request = (resources.get("requests") or {}).get("memory")
    if request is not None and _nonzero(request):
        new_request = Quantity.parse(request).value() + delta
        if new_request < guest.value():
            new_request, delta = guest.value(), 0
        resources["requests"]["memory"] = str(Quantity.from_int(new_request, "BinarySI"))
    limit = ((wanted.get("domain") or {}).get("resources") or {}).get("limits", {}).get("memory")
    if _nonzero(limit):
        current_limit = (resources.get("limits") or {}).get("memory") or "0"
        domain.setdefault("resources", {}).setdefault("limits", {})["memory"] = str(
            Quantity.from_int(Quantity.parse(current_limit).value() + delta, "BinarySI"))
    s.vmi = _update_vmi(s, vmi)


def _update_vmi(s: VMSync, vmi: dict) -> dict:
    """The VMI patched, on the resourceVersion read (the JSON patch's tests of the old values)."""
    return s.store.update(vmi)
