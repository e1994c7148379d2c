"""CPU of a VMI spec (KubeVirt vmi-create-admitter.go: validateCPURequestNotNegative,
validateCPULimitNotNegative, validateCpuRequestDoesNotExceedLimit, validateCpuPinning and the
dedicated-CPU checks it runs, validateNUMA, validateCPUIsolatorThread,
validateCPUFeaturePolicies, validateCPUHotplug, validateRealtime; vms-admitter.go
validateLiveUpdateCPU)."""
from __future__ import annotations

from typing import Any

from instancetype.engine.vm_validation._common import (
    _E,
    INVALID,
    MUST_BE_POSITIVE_FMT,
    NOT_SUPPORTED,
    REQUIRED,
    Gates,
    cause,
    quantity,
    resource,
)

_FEATURE_POLICIES = ("", "force", "require", "optional", "disable", "forbid")
MAX_SOCKETS_MESSAGE = "Number of sockets in CPU topology is greater than the maximum sockets allowed"


def vcpus(cpu: dict[str, Any]) -> int:
    """hwutil.GetNumberOfVCPUs: cores x sockets x threads, zeros skipped."""
    n = cpu.get("cores") or 0
    for k in ("sockets", "threads"):
        v = cpu.get(k) or 0
        if v:
            n = v if n == 0 else n * v
    return n


def validate_cpu_resources(field: str, spec: dict[str, Any]) -> list[Any]:
    """validateCPURequestNotNegative, validateCPULimitNotNegative, validateCpuRequestDoesNotExceedLimit."""
    res = ((spec.get("domain") or _E).get("resources") or _E)
    req = resource(res, "requests", "cpu")
    lim = resource(res, "limits", "cpu")
    req_at = f"{field}.domain.resources.requests.cpu"
    lim_at = f"{field}.domain.resources.limits.cpu"
    causes = []
    if req.milli_value() < 0:
        causes.append(cause(INVALID, MUST_BE_POSITIVE_FMT.format(req_at, req), req_at))
    if lim.milli_value() < 0:
        causes.append(cause(INVALID, MUST_BE_POSITIVE_FMT.format(lim_at, lim), lim_at))
    if lim.milli_value() > 0 and req.milli_value() > lim.milli_value():
        causes.append(cause(INVALID, f"{req_at} '{req}' is greater than {lim_at} '{lim}'", req_at))
    return causes


def validate_cpu_pinning(field: str, spec: dict[str, Any], default_arch: str) -> list[Any]:
    """validateCpuPinning: the checks of a VMI with dedicated CPUs."""
    domain = (spec.get("domain") or _E)
    cpu = domain.get("cpu")
    if cpu is None or (cpu or _E).get("dedicatedCpuPlacement") is not True:
        return []
    cpu = (cpu or _E)
    res = (domain.get("resources") or _E)
    memory = (domain.get("memory") or _E)
    req_mem = resource(res, "requests", "memory")
    lim_mem = resource(res, "limits", "memory")
    req_cpu = resource(res, "requests", "cpu")
    lim_cpu = resource(res, "limits", "cpu")
    placement = f"{field}.domain.cpu.dedicatedCpuPlacement"
    req_mem_at, lim_mem_at = f"{field}.domain.resources.requests.memory", f"{field}.domain.resources.limits.memory"
    req_cpu_at, lim_cpu_at = f"{field}.domain.resources.requests.cpu", f"{field}.domain.resources.limits.cpu"
    cores_at = f"{field}.domain.cpu.cores"
    causes = []
    guest = quantity(memory.get("guest"))
    if lim_mem.value() == 0 and req_mem.value() == 0 and memory.get("hugepages") is None \
            and (guest is None or guest.value() == 0):
        causes.append(cause(INVALID, f"{req_mem_at}, {lim_mem_at}, {field}.domain.memory.hugepages or "
                            f"{field}.domain.memory.guest should be provided", lim_mem_at))
    if req_cpu.value() > 0 and req_cpu.value() * 1000 != req_cpu.milli_value():
        causes.append(cause(INVALID, "provided resources CPU requests must be an interger", req_cpu_at))
    if lim_cpu.value() > 0 and lim_cpu.value() * 1000 != lim_cpu.milli_value():
        causes.append(cause(INVALID, "provided resources CPU limits must be an interger", lim_cpu_at))
    if req_mem.value() > 0 and lim_mem.value() > 0 and req_mem.value() != lim_mem.value():
        causes.append(cause(INVALID, f"{req_mem_at} must be equal to {lim_mem_at}", req_mem_at))
    n = vcpus(cpu)
    if req_cpu.value() == 0 and lim_cpu.value() == 0 and n == 0:
        causes.append(cause(INVALID, f"either {req_cpu_at} or {lim_cpu_at} or {cores_at} must be provided when "
                            f"DedicatedCPUPlacement is true ", placement))
    if req_cpu.value() > 0 and lim_cpu.value() > 0 and req_cpu.value() != lim_cpu.value():
        causes.append(cause(INVALID, f"{req_cpu_at} or {lim_cpu_at} must be equal when DedicatedCPUPlacement is true ",
                            placement))
    if (req_cpu.value() > 0 or lim_cpu.value() > 0) and n > 0 and req_cpu.value() != n and lim_cpu.value() != n:
        causes.append(cause(INVALID, f"{req_cpu_at} or {lim_cpu_at} must not be provided at the same time with "
                            f"{cores_at} when DedicatedCPUPlacement is true ", placement))
    threads = cpu.get("threads") or 0
    arch = spec.get("architecture") or default_arch
    if threads > 1 and arch == "arm64":
        causes.append(cause(INVALID, f"threads must not be greater than 1 at {field}.domain.cpu.threads (got "
                            f"{threads}) when {field}.architecture is arm64", f"{field}.architecture"))
    if threads > 2:
        causes.append(cause(INVALID, f"Not more than two threads must be provided at {field}.domain.cpu.threads (got "
                            f"{threads}) when DedicatedCPUPlacement is true", placement))
    return causes


def validate_numa(field: str, spec: dict[str, Any], gates: Gates) -> list[Any]:
    """validateNUMA."""
    domain = (spec.get("domain") or _E)
    cpu = domain.get("cpu")
    numa = (cpu or _E).get("numa")
    if cpu is None or numa is None or (numa or _E).get("guestMappingPassthrough") is None:
        return []
    at = f"{field}.domain.cpu.numa.guestMappingPassthrough"
    causes = []
    # (the NUMA feature gate is GA in v1.9: its check always passes)
    if (cpu or _E).get("dedicatedCpuPlacement") is not True:
        causes.append(cause(INVALID, f"{field}.domain.cpu.dedicatedCpuPlacement must be set to true when NUMA topology "
                            f"strategy is set in {at}", at))
    if (domain.get("memory") or _E).get("hugepages") is None:
        causes.append(cause(INVALID, f"{field}.domain.memory.hugepages must be requested when NUMA topology strategy "
                            f"is set in {at}", at))
    return causes


def validate_cpu_misc(field: str, spec: dict[str, Any]) -> list[Any]:
    """validateCPUIsolatorThread, validateCPUFeaturePolicies, validateCPUHotplug."""
    cpu = ((spec.get("domain") or _E).get("cpu") or _E)
    causes = []
    if cpu.get("isolateEmulatorThread") is True and cpu.get("dedicatedCpuPlacement") is not True:
        causes.append(cause(INVALID, "IsolateEmulatorThread should be only set in combination with "
                            "DedicatedCPUPlacement", f"{field}.domain.cpu.isolateEmulatorThread"))
    for idx, feature in enumerate(cpu.get("features") or ()):
        policy = (feature.get("policy") or "")
        if policy not in _FEATURE_POLICIES:
            causes.append(cause(NOT_SUPPORTED, f"CPU feature {(feature.get('name') or '')} uses policy {policy} that is not "
                                f"supported.", f"{field}.domain.cpu.features[{idx}].policy"))
    max_sockets = cpu.get("maxSockets") or 0
    if max_sockets and (cpu.get("sockets") or 0) > max_sockets:
        causes.append(cause(INVALID, MAX_SOCKETS_MESSAGE, f"{field}.domain.cpu.sockets"))
    return causes


def validate_realtime(field: str, spec: dict[str, Any]) -> list[Any]:
    """validateRealtime: validateCPURealtime, validateMemoryRealtime."""
    cpu = ((spec.get("domain") or _E).get("cpu") or _E)
    if cpu.get("realtime") is None:
        return []
    causes = []
    if cpu.get("dedicatedCpuPlacement") is not True:
        causes.append(cause(REQUIRED, f"{field}.domain.cpu.dedicatedCpuPlacement must be set to true when "
                            f"{field}.domain.cpu.realtime is used", f"{field}.domain.cpu.dedicatedCpuPlacement"))
    if (cpu.get("numa") or _E).get("guestMappingPassthrough") is None:
        causes.append(cause(REQUIRED, f"{field}.domain.cpu.numa.guestMappingPassthrough must be defined when "
                            f"{field}.domain.cpu.realtime is used", f"{field}.domain.cpu.numa.guestMappingPassthrough"))
    return causes


def validate_live_update_cpu(spec: dict[str, Any]) -> list[Any]:
    """validateLiveUpdateCPU (VM spec, rollout strategy LiveUpdate)."""
    cpu = ((spec.get("domain") or _E).get("cpu") or _E)
    sockets, max_sockets = cpu.get("sockets") or 0, cpu.get("maxSockets") or 0
    if sockets and max_sockets and sockets > max_sockets:
        return [cause(INVALID, MAX_SOCKETS_MESSAGE, "spec.template.spec.domain.cpu.sockets")]
    return []
