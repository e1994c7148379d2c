"""The KubeVirt CR's configuration as the engine reads it (pkg/virt-config: the defaults of
defaultClusterConfig and the getters over them).

Public (stable):

    cluster_config(config) -> ClusterConfig
        The KubeVirt CR's `spec.configuration` dict (None = all defaults) read over KubeVirt's
        defaults (a nested key given replaces only that key, as Go's JSON decode over the
        default config does). Cached by content (engine/cache.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from instancetype.api.quantity import Quantity

from instancetype.engine.cache import ContentCache, content_key, private_copy
from instancetype.engine.jsondata import copy_json
from instancetype.engine.spec import canonical_quantity
from instancetype.errors import DecodeError
from instancetype.jsonutil import json_problem

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

    def __init__(self, config: dict[str, Any] | None = None):
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
        # engine/vm_validation/spec.context's Context, memoised (typed there: it imports this module)
        self.validation_context: object = None

    def machine_type_for(self, arch: str) -> str:
        """GetMachineType: the global machineType, else the per-architecture one: arm64 and s390x
        have their own, every other architecture (ppc64le included: its case is gone from
        virt-config) reads amd64's."""
        if self.machine_type:
            return self.machine_type
        return self.arch_machine_types.get(arch if arch in ("arm64", "s390x") else "amd64", "")


_DEFAULT: ClusterConfig | None = None
# Read configurations by content (engine/cache.py), each read from a private copy: a caller
# mutating its configuration after a call cannot change what a later call reads.
_CACHE: ContentCache[ClusterConfig] = ContentCache(256)


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
        return _read_checked(copy_json(config))
    return _CACHE.get_or_build(key, lambda: _read_checked(private_copy(key)))


def _read_checked(config: Any) -> ClusterConfig:
    """A private copy read once it is known to be JSON data (a Python caller can pass int keys,
    bytes, NaN, ...; paid once per distinct configuration)."""
    problem = json_problem(config)
    if problem is not None:
        path, reason = problem
        raise DecodeError(f"config{'.' + path if path else ''}: {reason}", field=f"config.{path}")
    return ClusterConfig(config)


def _quantity(v: Any, field: str) -> Quantity:
    from instancetype.api.quantity import Quantity

    return Quantity.parse(canonical_quantity(v, field))


def _quantity_equal(a: str, b: str) -> bool:
    return bool(_quantity(a, "") == _quantity(b, ""))

