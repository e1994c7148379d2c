"""KubeVirt's VMI spec defaults (pkg/defaults/defaults.go SetDefaultVirtualMachineInstanceSpec)
and the cluster configuration they read.

Public (stable):

    cluster_config(config) -> ClusterConfig
        The KubeVirt CR's `spec.configuration` dict (None = all defaults) read over KubeVirt's
        defaults (a nested key given replaces only that key, as Go's JSON decode over the
        default config does). Cached by content (engine/cache.py).
    set_vmi_spec_defaults(spec, config=None) -> None
        Mutates `spec` (a VMI spec / VM template spec, already cloned) in place, in KubeVirt's
        order: architecture, machine type, CPU requests, guest memory, CPU topology,
        containerDisk pull policy, eviction strategy, default pod network (may raise
        DefaultsError), default volume disks.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from instancetype.engine.cache import ContentCache, content_key, private_copy
from instancetype.engine.defaults import set_default_network_interface, set_default_volume_disk
from instancetype.engine.spec import canonical_quantity
from instancetype.errors import DecodeError
from instancetype.jsonutil import clone, json_problem

DEFAULT_ARCHITECTURE = "amd64"
DEFAULT_MACHINE_TYPES = {"amd64": "q35", "arm64": "virt", "s390x": "s390-ccw-virtio"}
DEFAULT_CPU_REQUEST = "100m"
DEFAULT_EVICTION_STRATEGY = "None"
DEFAULT_CPU_MODEL = "host-model"


class ClusterConfig:
    """The handful of KubeVirt configuration values the engine reads."""

    __slots__ = ("raw", "machine_type", "arch_machine_types", "default_architecture", "cpu_request",
                 "cpu_request_is_default", "eviction_strategy", "default_network_interface",
                 "permit_bridge_on_pod_network", "cpu_model", "rollout_live_update", "max_cpu_sockets",
                 "max_hotplug_ratio", "max_guest", "validation_context")

    def __init__(self, config: dict | None = None):
        c = config if isinstance(config, dict) else {}
        self.raw = c
        self.machine_type = c.get("machineType") or ""
        archs = dict(DEFAULT_MACHINE_TYPES)
        arch_cfg = c.get("architectureConfiguration") or {}
        for arch, sub in arch_cfg.items():
            # `machineType` is an omitempty string: "" (or null) never reaches the decode over
            # the defaults (virt-config setConfigFromKubeVirt marshals the CR's configuration
            # and unmarshals it over the default one), so the default stays.
            if isinstance(sub, dict) and sub.get("machineType"):
                archs[arch] = sub["machineType"]
        self.arch_machine_types = archs
        self.default_architecture = arch_cfg.get("defaultArchitecture") or DEFAULT_ARCHITECTURE
        req = c.get("cpuRequest")
        self.cpu_request = canonical_quantity(req, "cpuRequest") if req is not None else DEFAULT_CPU_REQUEST
        self.cpu_request_is_default = req is None or _quantity_equal(self.cpu_request, DEFAULT_CPU_REQUEST)
        # A pointer: null is dropped by that round trip (default "None"), "" is kept.
        ev = c.get("evictionStrategy")
        self.eviction_strategy = ev if ev is not None else DEFAULT_EVICTION_STRATEGY
        net = c.get("network") or {}
        # omitempty string: "" or null leave the default "bridge".
        self.default_network_interface = net.get("defaultNetworkInterface") or "bridge"
        permit = net.get("permitBridgeInterfaceOnPodNetwork")
        self.permit_bridge_on_pod_network = True if permit is None else bool(permit)
        self.cpu_model = c.get("cpuModel") or ""
        strategy = c.get("vmRolloutStrategy")
        self.rollout_live_update = strategy is None or strategy == "LiveUpdate"
        live = c.get("liveUpdateConfiguration") or {}
        self.max_cpu_sockets = live.get("maxCpuSockets") or 0
        self.max_hotplug_ratio = live.get("maxHotplugRatio") or 4
        mg = live.get("maxGuest")
        self.max_guest = canonical_quantity(mg, "liveUpdateConfiguration.maxGuest") if mg is not None else None
        self.validation_context = None     # engine/vm_validation/spec.context, memoised

    def machine_type_for(self, arch: str) -> str:
        """GetMachineType: the global machineType, else the per-architecture one: arm64 and s390x
        have their own, every other architecture (ppc64le included: its case is gone from
        virt-config) reads amd64's."""
        if self.machine_type:
            return self.machine_type
        return self.arch_machine_types.get(arch if arch in ("arm64", "s390x") else "amd64", "")


_DEFAULT = None
# Read configurations by content (engine/cache.py), each read from a private copy: a caller
# mutating its configuration after a call cannot change what a later call reads.
_CACHE = ContentCache(256)


def cluster_config(config: Any = None) -> ClusterConfig:
    global _DEFAULT
    if isinstance(config, ClusterConfig):
        return config
    if not config:
        if _DEFAULT is None:
            _DEFAULT = ClusterConfig(None)
        return _DEFAULT
    key = content_key(config)
    if key is None:
        return _read_checked(clone(config))
    return _CACHE.get_or_build(key, lambda: _read_checked(private_copy(key)))


def _read_checked(config: Any) -> ClusterConfig:
    """A private copy read once it is known to be JSON data (a Python caller can pass int keys,
    bytes, NaN, ...; paid once per distinct configuration)."""
    problem = json_problem(config)
    if problem is not None:
        path, reason = problem
        raise DecodeError(f"config{'.' + path if path else ''}: {reason}", field=f"config.{path}")
    return ClusterConfig(config)


def _quantity(v: Any, field: str):
    from instancetype.api.quantity import Quantity

    return Quantity.parse(canonical_quantity(v, field))


def _quantity_equal(a: str, b: str) -> bool:
    return _quantity(a, "") == _quantity(b, "")


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
    return _zero_str(canonical_quantity(v, field))


def _value(v: Any, field: str) -> int:
    """Quantity.Value(): the integer value, rounded up."""
    return _value_str(canonical_quantity(v, field))


def set_vmi_spec_defaults(spec: dict, config: Any = None) -> None:
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
    set_default_network_interface(spec, cfg)
    set_default_volume_disk(spec)


def _set_resource_requests(domain: dict, cfg: ClusterConfig) -> None:
    res = domain.get("resources")
    if res is None:
        res = domain["resources"] = {}
    limits = res.get("limits") or {}
    requests = res.get("requests")
    base = "spec.template.spec.domain.resources"
    if not _is_zero(limits.get("cpu"), f"{base}.limits.cpu") and \
            _is_zero((requests or {}).get("cpu"), f"{base}.requests.cpu"):
        if requests is None:
            requests = res["requests"] = {}
        requests["cpu"] = limits["cpu"]
    if not cfg.cpu_request_is_default and "cpu" not in (requests or {}):
        if (domain.get("cpu") or {}).get("dedicatedCpuPlacement"):
            return
        if requests is None:
            requests = res["requests"] = {}
        requests["cpu"] = cfg.cpu_request


def _set_guest_memory(domain: dict) -> None:
    mem = domain.get("memory")
    if mem is not None and mem.get("guest") is not None:
        return
    if mem is None:
        mem = domain["memory"] = {}
    res = domain.get("resources") or {}
    req = (res.get("requests") or {}).get("memory")
    lim = (res.get("limits") or {}).get("memory")
    base = "spec.template.spec.domain.resources"
    # The value is copied as it is (Go copies the Quantity): whoever prints the spec puts its
    # quantities in canonical form once.
    if not _is_zero(req, f"{base}.requests.memory"):
        mem["guest"] = req
    elif not _is_zero(lim, f"{base}.limits.memory"):
        mem["guest"] = lim
    elif mem.get("hugepages") is not None:
        page = (mem.get("hugepages") or {}).get("pageSize") or ""
        try:
            mem["guest"] = canonical_quantity(page)
        except Exception:  # noqa: BLE001 - KubeVirt ignores a pageSize that does not parse
            pass


def _set_guest_cpu_topology(domain: dict) -> None:
    cpu = domain.get("cpu")
    if cpu is not None and (cpu.get("cores") or cpu.get("sockets") or cpu.get("threads")):
        return
    if cpu is None:
        cpu = domain["cpu"] = {}
    res = domain.get("resources") or {}
    limits = res.get("limits") or {}
    requests = res.get("requests") or {}
    sockets = 1
    if "cpu" in limits:
        sockets = _value(limits["cpu"], "spec.template.spec.domain.resources.limits.cpu")
    elif "cpu" in requests:
        sockets = _value(requests["cpu"], "spec.template.spec.domain.resources.requests.cpu")
    cpu["sockets"] = sockets & 0xFFFFFFFF   # Go's uint32(int64) conversion wraps
    cpu["cores"] = 1
    cpu["threads"] = 1
