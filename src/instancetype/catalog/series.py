"""The instancetype series of common-instancetypes v1.7.0, as a table of settings and size ladders.

One `Series` per class: its labels and annotations, the spec every size shares, and its sizes
(vCPUs and guest memory). `build.py` turns each (series, size) into an object and derives the
feature labels from the spec, so nothing here repeats a label a spec already implies.

The current series (u, o, cx, m, n, rt, d) are exactly v1.7.0 (`instancetypes/<c>/1/` in
kubevirt/common-instancetypes). Three older families that the project's seeds show but v1.7.0 no
longer ships are kept, marked deprecated: `gn1` (GPU NVIDIA, dropped in v1.3.0) and the legacy
`server` and `highperformance` (dropped in v0.4.0). They carry the same label scheme as the
current series (v1.7.0's scheme wins over the v0.3.0 one), plus `deprecated: "true"`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Size:
    name: str          # the part of the object name after the first "." (e.g. "2xlarge1gi")
    cpu: int           # spec.cpu.guest
    memory: str        # spec.memory.guest, as written (e.g. "512Mi", "16Gi", "1.5Gi")
    hugepages: str | None = None   # spec.memory.hugepages.pageSize set per size (cx1, m1)


@dataclass(frozen=True)
class Series:
    prefix: str                    # the class letter(s): "u", "cx", "gn", "server"
    class_label: str               # instancetype.kubevirt.io/class
    display_name: str              # instancetype.kubevirt.io/displayName annotation
    icon: str                      # instancetype.kubevirt.io/icon-pf
    description: str               # instancetype.kubevirt.io/description annotation
    sizes: tuple[Size, ...]
    version: str | None = "1"      # class version; the name is <prefix><version>.<size>
    spec: dict[str, Any] = field(default_factory=dict)   # applied to every size
    max_sockets: bool = False      # spec.cpu.maxSockets = guest vCPUs (cx1)
    deprecated: bool = False

    @property
    def series(self) -> str:
        """The name prefix before the ".": `u1`, `cx1`, or `server` for the unversioned legacy types."""
        return f"{self.prefix}{self.version or ''}"


# --- size ladders ------------------------------------------------------------------------------
# The U/O/D/RT ladder: memory doubles each step from 512Mi; vCPUs stay at 1 up to medium and then
# double from large. 2xmedium (2 vCPUs / 4Gi) sits between medium and large for u1 and d1 only.
_LADDER = ("nano", "micro", "small", "medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge")


def _mem(mib: int) -> str:
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


def _general(first: str, *, with_2xmedium: bool = False) -> tuple[Size, ...]:
    out = []
    for i, name in enumerate(_LADDER):
        cpu = 1 if i <= 3 else 2 ** (i - 3)
        size = Size(name, cpu, _mem(512 * 2 ** i))
        if _LADDER.index(first) <= i:
            out.append(size)
        if name == "medium" and with_2xmedium:
            out.append(Size("2xmedium", 2, "4Gi"))
    return tuple(out)


def _ratio(names: tuple[str, ...], first_cpu: int, gib_per_cpu: int) -> tuple[Size, ...]:
    """Sizes whose vCPUs double each step from `first_cpu`, at a fixed GiB-per-vCPU ratio."""
    return tuple(Size(n, first_cpu * 2 ** i, f"{first_cpu * 2 ** i * gib_per_cpu}Gi") for i, n in enumerate(names))


def _with_1gi_twins(sizes: tuple[Size, ...]) -> tuple[Size, ...]:
    """cx1 and m1: each size with 2Mi hugepages, plus a `<size>1gi` twin with 1Gi pages (since v1.4.0)."""
    out = []
    for s in sizes:
        out.append(Size(s.name, s.cpu, s.memory, "2Mi"))
        out.append(Size(s.name + "1gi", s.cpu, s.memory, "1Gi"))
    return tuple(out)


_FROM_MEDIUM = ("medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge")
_FROM_LARGE = _FROM_MEDIUM[1:]
_FROM_XLARGE = _FROM_MEDIUM[2:]

# Pod annotations that switch off CRI-O's CPU load balancing, CFS quota and IRQ balancing (n1, rt1).
_CRIO_NO_BALANCING = {
    "cpu-load-balancing.crio.io": "disable",
    "cpu-quota.crio.io": "disable",
    "irq-load-balancing.crio.io": "disable",
}
_DEDICATED = {"dedicatedCPUPlacement": True, "isolateEmulatorThread": True}

SERIES: tuple[Series, ...] = (
    Series(
        "cx", "compute.exclusive", "Compute Exclusive", "pficon-registry",
        "The CX Series provides exclusive compute resources for compute\n"
        "intensive applications.\n\n"
        '*CX* is the abbreviation of "Compute Exclusive".\n\n'
        "The exclusive resources are given to the compute threads of the\n"
        "VM. In order to ensure this, some additional cores (depending\n"
        "on the number of disks and NICs) will be requested to offload\n"
        "the IO threading from cores dedicated to the workload.\n"
        "In addition, in this series, the NUMA topology of the used\n"
        "cores is provided to the VM.\n\n"
        "The amount of spec.cpu.maxSockets is set to the same as\n"
        "guest cpus. This avoids KubeVirt's default behavior of\n"
        "providing extra CPUs for hotplugging, which can exceed the\n"
        "amount of available CPUs on a node and cause the VM to fail.\n\n"
        "Requirements for CX series instance types:\n"
        "- CPU manager has to be enabled.\n"
        "- Huge pages have to be available on the nodes.",
        _with_1gi_twins(_ratio(_FROM_MEDIUM, 1, 2)),
        spec={"cpu": {**_DEDICATED, "numa": {"guestMappingPassthrough": {}}}, "ioThreadsPolicy": "auto"},
        max_sockets=True,
    ),
    Series(
        "d", "dedicated.vcpu", "Dedicated vCPU", "pficon-server-group",
        "The D Series is designed for consistent and predictable performance,\n"
        "providing resources for general purpose applications.\n\n"
        '*D* is the abbreviation for "Dedicated", reflecting the use of\n'
        "dedicated CPU placement for workloads.\n\n"
        "VMs of this instance type are assigned exclusive physical CPU cores,\n"
        "avoiding CPU sharing and time-slice contention with other VMs.",
        _general("nano", with_2xmedium=True),
        spec={"cpu": dict(_DEDICATED), "ioThreadsPolicy": "auto"},
    ),
    Series(
        "m", "memory.intensive", "Memory Intensive", "fa-memory",
        "The M Series provides resources for memory intensive\n"
        "applications.\n\n"
        '*M* is the abbreviation of "Memory".',
        _with_1gi_twins(_ratio(_FROM_LARGE, 2, 8)),
    ),
    Series(
        "n", "network", "Network", "pficon-network",
        "The N Series provides resources for network intensive DPDK\n"
        "applications, like VNFs.\n\n"
        '*N* is the abbreviation for "Network".\n\n'
        "This series of instancetypes requires nodes capable\n"
        "of running DPDK workloads and being marked with the respective\n"
        "node-role.kubevirt.io/worker-dpdk label as such.",
        # n1.medium is the one 1:1 size; from large on the ratio is 1:2 starting at 4 vCPUs.
        (Size("medium", 4, "4Gi"),) + _ratio(_FROM_LARGE, 4, 2),
        spec={"annotations": dict(_CRIO_NO_BALANCING), "cpu": dict(_DEDICATED),
              "memory": {"hugepages": {"pageSize": "1Gi"}}},
    ),
    Series(
        "o", "overcommitted", "Overcommitted", "pficon-virtual-machine",
        "The O Series is based on the U Series, with the only difference\n"
        "being that memory is overcommitted.\n\n"
        '*O* is the abbreviation for "Overcommitted".',
        _general("nano"),
        spec={"memory": {"overcommitPercent": 50}},
    ),
    Series(
        "rt", "realtime", "Realtime", "pficon-server-group",
        "The RT Series provides resources for realtime applications, like Oslat.\n\n"
        '*RT* is the abbreviation for "realtime".\n\n'
        "This series of instance types requires nodes capable of running\n"
        "realtime applications.",
        _general("micro"),
        spec={"annotations": dict(_CRIO_NO_BALANCING),
              "cpu": {**_DEDICATED, "numa": {"guestMappingPassthrough": {}}, "realtime": {}},
              "memory": {"hugepages": {"pageSize": "1Gi"}}},
    ),
    Series(
        "u", "general.purpose", "General Purpose", "pficon-server-group",
        "The U Series is quite neutral and provides resources for\n"
        "general purpose applications.\n\n"
        '*U* is the abbreviation for "Universal", hinting at the universal\n'
        "attitude towards workloads.\n\n"
        "VMs of instance types will share physical CPU cores on a\n"
        "time-slice basis with other VMs.",
        _general("nano", with_2xmedium=True),
    ),
    # --- deprecated families (not in v1.7.0) ---------------------------------------------------
    Series(
        "gn", "gpu.nvidia", "GPU NVIDIA", "fa-microchip",
        "The GN Series provides instances types intended for VMs with\n"
        "NVIDIA GPU resources attached.\n\n"
        '*GN* is the abbreviation of "GPU NVIDIA".\n\n'
        "This series is intended to be used with VMs consuming GPUs\n"
        "provided by the\n"
        "[NVIDIA GPU Operator](https://github.com/NVIDIA/gpu-operator)\n"
        "which can be installed on Kubernetes and also is made available\n"
        "on OpenShift via OperatorHub.",
        _ratio(_FROM_XLARGE, 4, 4),
        spec={"gpus": [{"name": "gpu1", "deviceName": "nvidia.com/A400"}]},
        deprecated=True,
    ),
    Series(
        "highperformance", "highperformance", "High Performance (legacy)", "pficon-server-group",
        "Legacy high performance instance types with dedicated CPUs and an\n"
        "isolated emulator thread.\n\n"
        "Deprecated since common-instancetypes v0.2.0 and removed in v0.4.0;\n"
        "use the CX or D series instead.",
        (Size("small", 1, "2Gi"), Size("medium", 1, "4Gi"), Size("large", 2, "8Gi")),
        version=None,
        spec={"cpu": dict(_DEDICATED), "ioThreadsPolicy": "shared"},
        deprecated=True,
    ),
    Series(
        "server", "server", "Server (legacy)", "pficon-server",
        "Legacy general purpose server instance types.\n\n"
        "Deprecated since common-instancetypes v0.2.0 and removed in v0.4.0;\n"
        "use the U series instead.",
        (Size("micro", 1, "256Mi"), Size("tiny", 1, "1.5Gi"), Size("small", 1, "2Gi"),
         Size("medium", 1, "4Gi"), Size("large", 2, "8Gi")),
        version=None,
        deprecated=True,
    ),
)

CURRENT: tuple[Series, ...] = tuple(s for s in SERIES if not s.deprecated)
BY_SERIES: dict[str, Series] = {s.series: s for s in SERIES}
