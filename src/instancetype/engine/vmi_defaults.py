"""KubeVirt's VMI spec defaults (pkg/defaults/defaults.go SetDefaultVirtualMachineInstanceSpec),
read against the cluster configuration of `engine.virt_config`.

Public (stable):

    set_vmi_spec_defaults(spec, config=None, *, network_and_disks_done=False) -> None
        Mutates `spec` (a VMI spec / VM template spec, already cloned) in place, in KubeVirt's
        order: architecture, machine type, CPU requests, guest memory, CPU topology,
        containerDisk pull policy, eviction strategy, default pod network (may raise
        DefaultsError), default volume disks. `network_and_disks_done`: the caller ran both of
        the last two before applying the instancetype and preference (expand; build_vmi, as the
        VM controller does), which add no volume, remove no disk or network, and only ever fill
        `autoattachPodInterface`, so running them again would change nothing.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from instancetype.engine.defaults import set_default_network_interface, set_default_volume_disk
from instancetype.engine.spec import _canonical_str, canonical_quantity
from instancetype.engine.virt_config import ClusterConfig, cluster_config


@lru_cache(maxsize=1024)
def _zero_str(text: str) -> bool:
    from instancetype.api.quantity import Quantity

    return Quantity.parse(text).milli_value() == 0


@lru_cache(maxsize=1024)
def _value_str(text: str) -> int:
    from instancetype.api.quantity import Quantity

    return Quantity.parse(text).value()


def _is_zero(v: Any, field: str) -> bool:
    """ResourceList.Memory()/Cpu().IsZero(): an absent key reads as zero."""
    if v is None:
        return True
    if type(v) is str:
        return _zero_str(_canonical_str(v))
    return _zero_str(canonical_quantity(v, field))


_RES = "spec.template.spec.domain.resources"
_LIMITS_CPU, _REQUESTS_CPU = f"{_RES}.limits.cpu", f"{_RES}.requests.cpu"
_LIMITS_MEM, _REQUESTS_MEM = f"{_RES}.limits.memory", f"{_RES}.requests.memory"


def _value(v: Any, field: str) -> int:
    """Quantity.Value(): the integer value, rounded up."""
    return _value_str(canonical_quantity(v, field))


def set_vmi_spec_defaults(spec: dict[str, Any], config: Any = None, *,
                          network_and_disks_done: bool = False) -> None:
    cfg = cluster_config(config)
    domain = spec.get("domain")
    if domain is None:
        domain = spec["domain"] = {}

    # 1. architecture
    if not spec.get("architecture"):
        spec["architecture"] = cfg.default_architecture
    # 2. machine type
    machine = domain.get("machine")
    if machine is None:
        domain["machine"] = {"type": cfg.machine_type_for(spec["architecture"])}
    elif not machine.get("type"):
        machine["type"] = cfg.machine_type_for(spec["architecture"])
    # 3. CPU requests
    _set_resource_requests(domain, cfg)
    # 4. guest memory
    _set_guest_memory(domain)
    # 5. CPU topology
    _set_guest_cpu_topology(domain)
    # 6. containerDisk pull policy
    for vol in spec.get("volumes") or ():
        cd = vol.get("containerDisk")
        if cd is not None and not cd.get("imagePullPolicy"):
            image = cd.get("image") or ""
            latest = image.endswith(":latest") or not any(ch in image for ch in ":@")
            cd["imagePullPolicy"] = "Always" if latest else "IfNotPresent"
    # 7. eviction strategy
    if spec.get("evictionStrategy") is None and cfg.eviction_strategy is not None:
        spec["evictionStrategy"] = cfg.eviction_strategy
    # 8, 9. default network and disks once more
    if not network_and_disks_done:
        set_default_network_interface(spec, cfg)
        set_default_volume_disk(spec)


def _set_resource_requests(domain: dict[str, Any], cfg: ClusterConfig) -> None:
    res = domain.get("resources")
    if res is None:
        res = domain["resources"] = {}
    limits = res.get("limits") or {}
    requests: dict[str, Any] | None = res.get("requests")
    if not _is_zero(limits.get("cpu"), _LIMITS_CPU) and \
            _is_zero((requests or {}).get("cpu"), _REQUESTS_CPU):
        if requests is None:
            requests = res["requests"] = {}
        requests["cpu"] = limits["cpu"]
    if not cfg.cpu_request_is_default and "cpu" not in (requests or {}):
        if (domain.get("cpu") or {}).get("dedicatedCpuPlacement"):
            return
        if requests is None:
            requests = res["requests"] = {}
        requests["cpu"] = cfg.cpu_request


def _set_guest_memory(domain: dict[str, Any]) -> None:
    mem: dict[str, Any] | None = domain.get("memory")
    if mem is not None and mem.get("guest") is not None:
        return
    if mem is None:
        mem = domain["memory"] = {}
    res: dict[str, Any] = domain.get("resources") or {}
    requests: dict[str, Any] = res.get("requests") or {}
    limits: dict[str, Any] = res.get("limits") or {}
    req = requests.get("memory")
    lim = limits.get("memory")
    # The value is copied as it is (Go copies the Quantity): whoever prints the spec puts its
    # quantities in canonical form once.
    if not _is_zero(req, _REQUESTS_MEM):
        mem["guest"] = req
    elif not _is_zero(lim, _LIMITS_MEM):
        mem["guest"] = lim
    elif mem.get("hugepages") is not None:
        page = (mem.get("hugepages") or {}).get("pageSize") or ""
        try:
            mem["guest"] = canonical_quantity(page)
        except Exception:  # noqa: BLE001 - KubeVirt ignores a pageSize that does not parse
            pass


def _set_guest_cpu_topology(domain: dict[str, Any]) -> None:
    cpu: dict[str, Any] | None = domain.get("cpu")
    if cpu is not None and (cpu.get("cores") or cpu.get("sockets") or cpu.get("threads")):
        return
    if cpu is None:
        cpu = domain["cpu"] = {}
    res: dict[str, Any] = domain.get("resources") or {}
    limits: dict[str, Any] = res.get("limits") or {}
    requests: dict[str, Any] = res.get("requests") or {}
    sockets = 1
    if "cpu" in limits:
        sockets = _value(limits["cpu"], "spec.template.spec.domain.resources.limits.cpu")
    elif "cpu" in requests:
        sockets = _value(requests["cpu"], "spec.template.spec.domain.resources.requests.cpu")
    cpu["sockets"] = sockets & 0xFFFFFFFF   # Go's uint32(int64) conversion wraps
    cpu["cores"] = 1
    cpu["threads"] = 1
