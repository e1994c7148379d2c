"""Memory and hugepages of a VMI spec (KubeVirt vmi-create-admitter.go:
validateMemoryRequestsNegativeOrNull, validateMemoryLimitsNegativeOrNull,
validateHugepagesMemoryRequests, validateGuestMemoryLimit; pkg/liveupdate/memory
ValidateLiveUpdateMemory for the VM's live-update check)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from instancetype.api.quantity import Quantity

from typing import Any

from instancetype.engine.vm_validation._common import _E, INVALID, MUST_BE_POSITIVE_FMT, cause, quantity, resource

_ONE_M: Quantity | None = None
HOTPLUG_BLOCK_ALIGNMENT = 0x200000           # 2Mi
HOTPLUG_1G_HUGEPAGES_BLOCK_ALIGNMENT = 0x40000000   # 1Gi
REQUIRED_MIN_GUEST_MEMORY = 0x40000000
QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def _one_m() -> Quantity:
    global _ONE_M
    if _ONE_M is None:
        _ONE_M = resource({"requests": {"memory": "1M"}}, "requests", "memory")
    return _ONE_M


def validate_memory(field: str, spec: dict[str, Any], live_update: bool) -> list[Any]:
    """The memory checks of ValidateVirtualMachineInstanceSpec, in KubeVirt's order."""
    domain = (spec.get("domain") or _E)
    res = (domain.get("resources") or _E)
    if not res.get("requests") and not res.get("limits") and (domain.get("memory") or _E).get("hugepages") is None:
        return []   # zero requests and limits: no rule here can refuse
    req = resource(res, "requests", "memory")
    lim = resource(res, "limits", "memory")
    req_at = f"{field}.domain.resources.requests.memory"
    lim_at = f"{field}.domain.resources.limits.memory"
    causes = []
    # validateMemoryRequestsNegativeOrNull
    if req.value() < 0:
        causes.append(cause(INVALID, MUST_BE_POSITIVE_FMT.format(req_at, req), req_at))
    elif req.value() > 0 and req.cmp(_one_m()) < 0:
        causes.append(cause(INVALID, f"{req_at} '{req}': must be greater than or equal to 1M.", req_at))
    # validateMemoryLimitsNegativeOrNull
    if lim.value() < 0:
        causes.append(cause(INVALID, MUST_BE_POSITIVE_FMT.format(lim_at, lim), lim_at))
    if lim.value() > 0 and req.value() > lim.value():
        causes.append(cause(INVALID, f"{req_at} '{req}' is greater than {lim_at} '{lim}'", req_at))
    causes.extend(_hugepages(field, domain, req, req_at))
    # validateGuestMemoryLimit
    memory = (domain.get("memory") or _E)
    guest = quantity(memory.get("guest"))
    if not live_update and guest is not None:
        if lim.value() < guest.value() and lim.value() != 0:
            at = f"{field}.domain.memory.guest"
            causes.append(cause(INVALID, f"{at} '{guest}' must be equal to or less than the memory limit {lim_at} "
                                f"'{lim}'", at))
    return causes


def _hugepages(field: str, domain: dict[str, Any], req: Quantity, req_at: str) -> list[Any]:
    """validateHugepagesMemoryRequests."""
    memory = domain.get("memory")
    hugepages = (memory or _E).get("hugepages")
    if memory is None or hugepages is None:
        return []
    size_at = f"{field}.domain.memory.hugepages.pageSize"
    page_text = (hugepages or _E).get("pageSize") or ""
    page = quantity(page_text)
    if page is None or page_text == "":
        return [cause(INVALID, f"{size_at} '{page_text}': {QUANTITY_FORMAT_ERROR}", size_at)]
    vm_memory = req.value()
    if vm_memory == 0:
        guest = quantity((memory or _E).get("guest"))
        vm_memory = guest.value() if guest is not None else 0
    size = page.value()
    if vm_memory != 0 and vm_memory < size:
        return [cause(INVALID, f"{req_at} '{req}' must be equal to or larger than page size {size_at} '{page_text}'",
                      req_at)]
    if size and vm_memory % size != 0:
        return [cause(INVALID, f"{req_at} '{req}' is not a multiple of the page size {size_at} '{page_text}'", req_at)]
    return []


def live_update_memory_error(spec: dict[str, Any]) -> str | None:
    """ValidateLiveUpdateMemory for a template whose `domain.memory.maxGuest` is set: the error
    text, or None."""
    domain = (spec.get("domain") or _E)
    cpu = domain.get("cpu")
    if cpu is not None and (cpu or _E).get("realtime") is not None:
        return "Memory hotplug is not compatible with realtime VMs"
    if cpu is not None and ((cpu or _E).get("numa") or _E).get("guestMappingPassthrough") is not None:
        return "Memory hotplug is not compatible with guest mapping passthrough"
    if domain.get("launchSecurity") is not None:
        return "Memory hotplug is not compatible with encrypted VMs"
    memory = (domain.get("memory") or _E)
    alignment = HOTPLUG_BLOCK_ALIGNMENT
    if (memory.get("hugepages") or _E).get("pageSize") == "1Gi":
        alignment = HOTPLUG_1G_HUGEPAGES_BLOCK_ALIGNMENT
    guest = quantity(memory.get("guest"))
    if guest is None:
        return "Guest memory must be configured when memory hotplug is enabled"
    max_guest = quantity(memory.get("maxGuest"))
    if max_guest is None:
        return "Max guest memory must be configured when memory hotplug is enabled"
    if guest.cmp(max_guest) > 0:
        return "Guest memory is greater than the configured maxGuest memory"
    text = "1Gi" if alignment == HOTPLUG_1G_HUGEPAGES_BLOCK_ALIGNMENT else "2Mi"
    if guest.value() % alignment != 0:
        return f"Guest memory must be {text} aligned"
    if max_guest.value() % alignment != 0:
        return f"MaxGuest must be {text} aligned"
    if spec.get("architecture") not in ("amd64", "arm64"):
        return "Memory hotplug is only available for x86_64 and arm64 VMs"
    if guest.value() < REQUIRED_MIN_GUEST_MEMORY:
        return "Memory hotplug is only available for VMs with at least 1Gi of guest memory"
    return None
