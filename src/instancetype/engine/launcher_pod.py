"""What the virt-launcher pod of a VMI asks of a node, as virt-controller renders it: its resource
requests (pkg/virt-controller/services/renderresources.go, `VMIResourcePredicates` in
template.go, with the memory overhead of pkg/hypervisor/kvm `GetMemoryOverhead`), its node
selector (nodeselectorrenderer.go, `newNodeSelectorRenderer`), its required node affinity and
its tolerations (the VMI's, plus what the API server's DefaultTolerationSeconds plugin adds).

Requests are integers in the unit kube-scheduler compares (`computePodResourceRequest`): `cpu` in
millicores, everything else in its value (bytes, devices). Only the compute container is counted:
the container-disk and init containers' few millicores and MiB are left out. Sums are exact (no
int64 wrap-around): a guest of 9223372036854775807 bytes (the most a BinarySI quantity holds, Go's
ParseQuantity cap) plus its overhead asks more than any node has.
"""
from __future__ import annotations

import math
from typing import Any

from instancetype.api.gotext import format_float
from instancetype.api.quantity import Quantity
from instancetype.engine.cache import ContentCache, content_key, private_copy

CPU, MEMORY, PODS = "cpu", "memory", "pods"
HUGEPAGES_PREFIX = "hugepages-"
# virt-handler's device plugins (pkg/virt-handler/device-manager): one of each per VMI.
KVM, TUN, VHOST_NET = "devices.kubevirt.io/kvm", "devices.kubevirt.io/tun", "devices.kubevirt.io/vhost-net"
# Labels the node selector asks for (kubevirt.io/api/core/v1).
SCHEDULABLE = "kubevirt.io/schedulable"
ARCH = "kubernetes.io/arch"
CPU_MANAGER = "cpumanager"
CPU_MODEL_PREFIX = "cpu-model.node.kubevirt.io/"
CPU_FEATURE_PREFIX = "cpu-feature.node.kubevirt.io/"
MACHINE_TYPE_PREFIX = "machine-type.node.kubevirt.io/"

_MI = 1 << 20
# GetMemoryOverhead's fixed part: virt-launcher-monitor 25Mi, virt-launcher 100Mi, virtlogd 25Mi,
# virtqemud 40Mi, qemu 30Mi.
_STATIC_OVERHEAD = (25 + 100 + 25 + 40 + 30) * _MI
# DefaultTolerationSeconds (an API server admission plugin) on every pod.
DEFAULT_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
)


def _d(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _l(x: Any) -> list[Any]:
    return x if isinstance(x, list) else []


# The common quantity texts, `<ASCII digits><suffix>`, read by integer arithmetic (`quantity_int`):
# each suffix's multiplier (ParseQuantity's suffixes: BinarySI, DecimalSI; "m" is a thousandth).
_SUFFIX_FACTOR = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
                  "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}
# Below this the integer path and ParseQuantity agree (Go caps what does not fit an int64).
_INT64_LIMIT = 1 << 63


def quantity_int(value: Any, *, milli: bool = False) -> int | None:
    """A quantity as kube-scheduler reads it (Value, MilliValue: rounded up), exact; None when
    the text is no quantity (an unchecked Node on the embedded store).

    A start reads some 14 quantities: the common texts (`2Gi`, `4`, `500m`, an integer) are read
    by integer arithmetic; any other text (signs, decimals, exponents, spaces, values past int64)
    goes through `Quantity` and an exact fraction, which the integer path agrees with
    (tests/engine/test_quantity_int.py)."""
    t = type(value)
    if t is int:
        n: int = value
        if -_INT64_LIMIT < n < _INT64_LIMIT:
            return n * 1000 if milli else n
    elif t is str:
        digits = value.rstrip("kKMGTPEim")     # (K: of "Ki" only)
        if digits and len(digits) <= 18 and digits.isascii() and digits.isdigit():
            suffix = value[len(digits):]
            number = int(digits)
            if suffix == "m":
                return number if milli else -(-number // 1000)
            factor = _SUFFIX_FACTOR.get(suffix)
            if factor is not None and number * factor < _INT64_LIMIT:
                return number * factor * 1000 if milli else number * factor
    return _quantity_int_exact(value, milli)


def _quantity_int_exact(value: Any, milli: bool) -> int | None:
    """`quantity_int` through `Quantity` and `fractions.Fraction`: any quantity text."""
    try:
        q = Quantity.from_json(value)
    except Exception:  # noqa: BLE001 -- any unreadable value is "no value", never a crash
        return None
    f = q.as_fraction() * (1000 if milli else 1)
    return math.ceil(f)


def vcpus(cpu: dict[str, Any]) -> int:
    """hardware.GetNumberOfVCPUs: sockets x cores x threads, each defaulting to 1."""
    n = 1
    for k in ("sockets", "cores", "threads"):
        v = cpu.get(k)
        n *= v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 1
    return n


def _dev_config(config: dict[str, Any] | None) -> dict[str, Any]:
    return _d(_d(config).get("developerConfiguration"))


def _dedicated(domain: dict[str, Any]) -> bool:
    return _d(domain.get("cpu")).get("dedicatedCPUPlacement") is True


def memory_overhead(vmi: dict[str, Any], config: dict[str, Any] | None = None) -> int:
    """KvmHypervisorBackend.GetMemoryOverhead, in bytes (the network binding plugins' share and
    `additionalGuestMemoryOverheadRatio` are left out)."""
    spec = _d(vmi.get("spec"))
    domain = _d(spec.get("domain"))
    devices = _d(domain.get("devices"))
    requested = quantity_int(_d(_d(domain.get("resources")).get("requests")).get(MEMORY, 0)) or 0
    overhead = (math.ceil(requested / 1000) * 1000) // 512     # page tables: ScaledValue(Kilo) / 512
    overhead += _STATIC_OVERHEAD
    overhead += 8 * _MI * vcpus(_d(domain.get("cpu")))           # 8Mi per vCPU
    overhead += 8 * _MI                                          # the IOThread
    if devices.get("autoattachGraphicsDevice") is not False:
        overhead += 32 * _MI                                     # video RAM
    if (spec.get("architecture") or "") == "arm64":
        overhead += 128 * _MI                                    # UEFI pflash
    if _l(devices.get("gpus")) or _l(devices.get("hostDevices")):
        overhead += 1 << 30                                      # VFIO: 1Gi
    probes = [p for p in (spec.get("livenessProbe"), spec.get("readinessProbe")) if _d(p).get("exec") is not None]
    if probes:
        overhead += 10 * _MI * len(probes) + 100 * _MI
    if isinstance(devices.get("tpm"), dict) and devices["tpm"].get("enabled") is not False:
        overhead += 53 * _MI
    if _dedicated(domain):
        overhead += 100 * _MI
    return overhead


def _cpu_request(spec: dict[str, Any], domain: dict[str, Any], config: dict[str, Any] | None) -> int:
    """WithCPUPinning / WithoutDedicatedCPU, then the VMI's own request over the calculated one."""
    own = _d(_d(domain.get("resources")).get("requests")).get(CPU)
    if own is None:
        own = _d(_d(domain.get("resources")).get("limits")).get(CPU) if _dedicated(domain) else None
    if own is not None:
        return quantity_int(own, milli=True) or 0
    cpu = _d(domain.get("cpu"))
    io = _d(domain.get("ioThreads")).get("supplementalPoolThreadCount")
    total = vcpus(cpu) + (io if isinstance(io, int) and not isinstance(io, bool) and io > 0 else 0)
    if _dedicated(domain):
        return 1000 * (total + (1 if cpu.get("isolateEmulatorThread") is True else 0))
    ratio = _dev_config(config).get("cpuAllocationRatio")
    ratio = ratio if isinstance(ratio, int) and not isinstance(ratio, bool) and ratio > 0 else 10
    val = total / ratio
    text = format_float(val) if val >= 1 else format_float(val * 1000) + "m"
    return quantity_int(text, milli=True) or 0


# Requests by the content of what they are computed from (engine/cache.py): every VMI of one
# instancetype and template asks the same, and only the firmware uuid and the names differ.
_REQUESTS: ContentCache[dict[str, int]] = ContentCache(256)


def _requests_key(vmi: dict[str, Any], config: dict[str, Any] | None) -> bytes | None:
    """Every field `_pod_requests` reads, and nothing else (a VMI's name or firmware uuid would
    make each VMI's key its own)."""
    spec = _d(vmi.get("spec"))
    domain = _d(spec.get("domain"))
    return content_key((domain.get("resources"), domain.get("cpu"), domain.get("memory"), domain.get("devices"),
                        domain.get("ioThreads"), spec.get("architecture"), spec.get("livenessProbe"),
                        spec.get("readinessProbe"), _d(config).get("developerConfiguration")))


_POD_DOMAIN = ("resources", "cpu", "memory", "devices", "ioThreads", "machine")
_POD_SPEC = ("architecture", "livenessProbe", "readinessProbe", "nodeSelector", "affinity", "tolerations")


def pod_key(vmi: dict[str, Any], config: dict[str, Any] | None) -> bytes | None:
    """Every field the pod's requests, node selector, required node affinity and tolerations are
    rendered from, and nothing else (engine/cache.py): `pod_inputs` makes the VMI and the
    configuration they are rendered from out of it, so a field left out here is one the rendering
    never sees."""
    spec = _d(vmi.get("spec"))
    domain = _d(spec.get("domain"))
    return content_key(([domain.get(k) for k in _POD_DOMAIN], [spec.get(k) for k in _POD_SPEC],
                        _d(vmi.get("status")).get("machine"), _d(config).get("developerConfiguration")))


def pod_inputs(key: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """The VMI and the configuration of `pod_key` (a new copy): only the fields the key holds."""
    domain_values, spec_values, machine, developer = private_copy(key)
    domain = {k: v for k, v in zip(_POD_DOMAIN, domain_values) if v is not None}
    spec = {k: v for k, v in zip(_POD_SPEC, spec_values) if v is not None}
    vmi = {"spec": {**spec, "domain": domain}, "status": {} if machine is None else {"machine": machine}}
    return vmi, ({} if developer is None else {"developerConfiguration": developer})


def pod_requests(vmi: dict[str, Any], config: dict[str, Any] | None = None) -> dict[str, int]:
    """The compute container's requests (Requests(): the calculated ones, the VMI's over them);
    a new dict at each call."""
    key = _requests_key(vmi, config)
    if key is None:
        return _pod_requests(vmi, config)
    return dict(_REQUESTS.get_or_build(key, lambda: _pod_requests(vmi, config)))


def _pod_requests(vmi: dict[str, Any], config: dict[str, Any] | None) -> dict[str, int]:
    spec = _d(vmi.get("spec"))
    domain = _d(spec.get("domain"))
    devices = _d(domain.get("devices"))
    resources = _d(domain.get("resources"))
    memory_spec = _d(domain.get("memory"))
    out: dict[str, int] = {CPU: _cpu_request(spec, domain, config)}
    overhead = memory_overhead(vmi, config)

    # WithMemoryRequests: the VMI's request (or its limit), else the guest (or a hugepage) under
    # the cluster's overcommit.
    req_text = _d(resources.get("requests")).get(MEMORY)
    lim_text = _d(resources.get("limits")).get(MEMORY)
    request = quantity_int(req_text) if req_text is not None else None
    if not request and lim_text is not None and quantity_int(lim_text):
        request = quantity_int(lim_text)
    guest = quantity_int(memory_spec["guest"]) if memory_spec.get("guest") is not None else None
    if request is None:
        hp = _d(memory_spec.get("hugepages")).get("pageSize")
        base = guest if guest is not None else (quantity_int(hp) if hp is not None else None)
        if base:
            overcommit = _dev_config(config).get("memoryOvercommit")
            overcommit = overcommit if isinstance(overcommit, int) and overcommit > 0 else 100
            request = base if overcommit == 100 else base * 100 // overcommit
    page = _d(memory_spec.get("hugepages")).get("pageSize")
    if isinstance(page, str) and page:
        # WithHugePages: the guest's memory from hugepages, the overhead (and any request above
        # the guest) from ordinary memory.
        pages = request or 0
        if guest is not None and pages > guest:
            pages = guest
        out[HUGEPAGES_PREFIX + page] = pages
        extra = (request or 0) - guest if guest is not None and (request or 0) > guest else 0
        out[MEMORY] = extra + overhead
    elif resources.get("overcommitGuestOverhead") is True:
        out[MEMORY] = request or 0
    else:
        out[MEMORY] = (request or 0) + overhead

    # GPUs and host devices by device plugin: one of the named resource each.
    for dev in _l(devices.get("gpus")) + _l(devices.get("hostDevices")):
        name = _d(dev).get("deviceName")
        if isinstance(name, str) and name and _d(dev).get("claimRequest") is None:
            out[name] = out.get(name, 0) + 1
    # getRequiredResources (set as limits: an extended resource's request defaults to its limit).
    if not _dev_config(config).get("useEmulation"):
        out[KVM] = 1
    interfaces = [_d(i) for i in _l(devices.get("interfaces"))]
    if any(k in i for i in interfaces for k in ("bridge", "masquerade")):
        out[TUN] = 1
    if interfaces and any((i.get("model") or "virtio") == "virtio" for i in interfaces) \
            and not _dev_config(config).get("useEmulation"):
        out[VHOST_NET] = 1
    return out


def pod_node_selector(vmi: dict[str, Any], config: dict[str, Any] | None = None) -> dict[str, str]:
    """NodeSelectorRenderer.Render: schedulable, the architecture, the cluster's and the VMI's
    selectors, then the labels the VMI's CPU and machine type need."""
    spec = _d(vmi.get("spec"))
    domain = _d(spec.get("domain"))
    out: dict[str, str] = {SCHEDULABLE: "true"}
    arch = spec.get("architecture")
    if isinstance(arch, str) and arch:
        out[ARCH] = arch.lower()
    for source in (_dev_config(config).get("nodeSelectors"), spec.get("nodeSelector")):
        out.update({str(k): str(v) for k, v in _d(source).items()})
    cpu = _d(domain.get("cpu"))
    if _dedicated(domain):
        out[CPU_MANAGER] = "true"
    model = cpu.get("model")
    if isinstance(model, str) and model and model not in ("host-model", "host-passthrough"):
        out[CPU_MODEL_PREFIX + model] = "true"
        for f in _l(cpu.get("features")):
            name, policy = _d(f).get("name"), _d(f).get("policy") or "require"
            if isinstance(name, str) and policy == "require":
                out[CPU_FEATURE_PREFIX + name] = "true"
    machine = _d(_d(vmi.get("status")).get("machine")).get("type") or _d(domain.get("machine")).get("type")
    if isinstance(machine, str) and machine:
        out[MACHINE_TYPE_PREFIX + machine] = "true"
    return out


def pod_tolerations(vmi: dict[str, Any]) -> list[dict[str, Any]]:
    return [_d(t) for t in _l(_d(vmi.get("spec")).get("tolerations"))] + [dict(t) for t in DEFAULT_TOLERATIONS]


def required_node_affinity(vmi: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The VMI's requiredDuringSchedulingIgnoredDuringExecution node selector terms (None: none)."""
    required = _d(_d(_d(_d(vmi.get("spec")).get("affinity")).get("nodeAffinity")).get(
        "requiredDuringSchedulingIgnoredDuringExecution"))
    if not required:
        return None
    return [_d(t) for t in _l(required.get("nodeSelectorTerms"))]
