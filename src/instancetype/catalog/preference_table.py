"""The preferences of common-instancetypes v1.7.0, each described as components merged on a base.

Upstream builds every preference with kustomize: a base object, then an ordered list of
components (patches) where later ones win (`efi` then `secureboot` gives secureBoot true). Here a
`Pref` holds the same: its OS type, display metadata and the ordered components. `build.py` merges
them and derives the requirement/architecture labels from the merged spec.

This is v1.7.0 as KubeVirt vendors it (54 preferences): Windows 10/11 use the `sockets` topology
and the three `.secex` preferences that upstream added after v1.7.0 are left out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Pref:
    name: str
    os_type: str                   # linux | windows | legacy: label os-type and spec vm.kubevirt.io/os
    display_name: str              # openshift.io/display-name
    icon: str                      # iconClass
    tags: str                      # after "hidden,kubevirt,"
    components: tuple[dict[str, Any], ...]
    deprecated: bool = False


# --- components (preferences/components/* upstream), each a partial preference spec -------------
def disk_bus(bus: str) -> dict:
    return {"devices": {"preferredDiskBus": bus}}


def interface_model(model: str) -> dict:
    return {"devices": {"preferredInterfaceModel": model}}


def cpu_topology(topology: str) -> dict:
    return {"cpu": {"preferredCPUTopology": topology}}


def requires(cpu: int, memory: str) -> dict:
    return {"requirements": {"cpu": {"guest": cpu}, "memory": {"guest": memory}}}


def architecture(arch: str) -> dict:
    """preferred-architecture + required-architecture (both set together on every arch variant)."""
    return {"preferredArchitecture": arch, "requirements": {"architecture": arch}}


RNG: dict[str, Any] = {"devices": {"preferredRng": {}}}
DEDICATED_IO_THREAD = {"devices": {"preferredDiskDedicatedIoThread": True}}
MULTIQUEUE = {"devices": {"preferredNetworkInterfaceMultiQueue": True}}
VIRTIO_TRANSITIONAL = {"devices": {"preferredUseVirtioTransitional": True}}
TABLET_VIRTIO = {"devices": {"preferredAutoattachInputDevice": True, "preferredInputBus": "virtio",
                             "preferredInputType": "tablet"}}
TABLET_USB = {"devices": {"preferredAutoattachInputDevice": True}}   # upstream name; sets no bus/type
VIDEO_VIRTIO = {"devices": {"preferredVideoType": "virtio"}}
TPM = {"devices": {"preferredTPM": {"persistent": True}}}
EFI = {"firmware": {"preferredEfi": {"secureBoot": False}}}
EFI_PERSISTED = {"firmware": {"preferredEfi": {"persistent": True, "secureBoot": False}}}
SECUREBOOT = {"features": {"preferredSmm": {}}, "firmware": {"preferredEfi": {"secureBoot": True}}}
HYPERV = {
    "clock": {
        "preferredClockOffset": {"utc": {}},
        "preferredTimer": {"hpet": {"present": False}, "pit": {"tickPolicy": "delay"},
                           "rtc": {"tickPolicy": "catchup"}, "hyperv": {}},
    },
    "features": {
        "preferredAcpi": {}, "preferredApic": {},
        "preferredHyperv": {"relaxed": {}, "vapic": {}, "vpindex": {}, "spinlocks": {"spinlocks": 8191},
                            "synic": {}, "synictimer": {"direct": {}}, "tlbflush": {}, "frequencies": {},
                            "reenlightenment": {}, "ipi": {}, "runtime": {}, "reset": {}},
    },
}
SPREAD = {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "SocketsCoresThreads"}}}
SPREAD_4 = {"cpu": {"preferredCPUTopology": "spread",
                    "spreadOptions": {"across": "SocketsCoresThreads", "ratio": 4}}}
TERMINATION_GRACE = {"preferredTerminationGracePeriodSeconds": 3600}
PCIHOLE64 = {"annotations": {"kubevirt.io/disablePCIHole64": "true"}}
REALTIME = {   # preferences/rhel/9_realtime/realtime (local to rhel.9.realtime)
    "features": {"preferredSmm": {}},
    "devices": {"preferredAutoattachGraphicsDevice": False, "preferredAutoattachMemBalloon": False,
                "preferredAutoattachSerialConsole": True},
}

LINUX = (disk_bus("virtio"), interface_model("virtio"), RNG)
WINDOWS = (HYPERV, cpu_topology("sockets"), disk_bus("sata"), interface_model("e1000e"), TABLET_USB,
           TERMINATION_GRACE)
WINDOWS_VIRTIO = (disk_bus("virtio"), interface_model("virtio"), TABLET_VIRTIO, VIDEO_VIRTIO)

# Per-arch pieces of fedora/rhel.9/rhel.10: only amd64 gets EFI with SecureBoot (and SMM).
ARCH_VARIANTS: tuple[tuple[str, str, tuple[dict, ...]], ...] = (
    ("", "amd64", (EFI, SECUREBOOT)),
    (".arm64", "arm64", ()),
    (".s390x", "s390x", ()),
)


def _linux(name: str, display: str, icon: str, tags: str, *extra: dict) -> Pref:
    return Pref(name, "linux", display, icon, tags, LINUX + extra)


def _build_table() -> tuple[Pref, ...]:
    p: list[Pref] = []
    add = p.append
    # generic guests without requirements
    add(_linux("linux", "Linux Guest", "icon-linux", "linux"))
    add(_linux("linux.efi", "Linux EFI Guest", "icon-linux", "linux-efi", EFI))
    add(_linux("linux.virtiotransitional", "Linux Virtio Transitional Guest", "icon-linux",
               "linux-virtio-transitional", VIRTIO_TRANSITIONAL))
    add(Pref("legacy", "legacy", "Legacy Guest", "icon-other", "legacy",
             (disk_bus("sata"), interface_model("e1000"))))
    # distributions
    add(_linux("alpine", "Alpine", "icon-alpine", "alpine", requires(1, "512Mi")))
    add(_linux("cirros", "Cirros", "icon-cirros", "cirros", requires(1, "256Mi")))
    add(_linux("debian", "Debian", "icon-debian", "debian", EFI, requires(1, "512Mi")))
    add(_linux("oraclelinux", "Oracle Linux", "icon-oracle", "oraclelinux", EFI, requires(2, "4Gi")))
    add(_linux("opensuse.leap", "OpenSUSE Leap", "icon-opensuse-leap", "opensuse.leap", requires(1, "2Gi")))
    add(_linux("opensuse.tumbleweed", "OpenSUSE Tumbleweed", "icon-opensuse-tumbleweed",
               "opensuse.tumbleweed", requires(1, "2Gi")))
    add(_linux("sles", "SUSE Linux Enterprise Server", "icon-sles", "sles", requires(1, "2Gi")))
    add(_linux("ubuntu", "Ubuntu", "icon-ubuntu", "ubuntu", requires(1, "2Gi")))
    for arch_suffix, arch, pieces in ARCH_VARIANTS:
        add(_linux(f"fedora{arch_suffix}", f"Fedora ({arch})", "icon-fedora", "fedora",
                   *pieces, architecture(arch), requires(1, "2Gi")))
    # CentOS Stream: the desktop variants add a virtio tablet; dpdk spreads vCPUs and needs 8.
    for ver in ("9", "10"):
        base = (DEDICATED_IO_THREAD, requires(1, "1.5Gi"))
        display = f"CentOS Stream {ver}"
        tags = "linux,centos-stream"
        add(_linux(f"centos.stream{ver}", display, "icon-centos", tags, *base))
        add(_linux(f"centos.stream{ver}.desktop", display, "icon-centos", tags, *base, TABLET_VIRTIO))
        if ver == "9":
            add(_linux("centos.stream9.dpdk", display, "icon-centos", tags + ",dpdk", *base,
                       SPREAD_4, MULTIQUEUE, requires(8, "1.5Gi")))
    # RHEL 7 and 8 (no arch pinning; their variants reuse the base display name upstream)
    for ver, mem in (("7", "1Gi"), ("8", "1.5Gi")):
        display = f"Red Hat Enterprise Linux {ver}"
        add(_linux(f"rhel.{ver}", display, "icon-rhel", "linux,rhel", requires(1, mem)))
        add(_linux(f"rhel.{ver}.desktop", display, "icon-rhel", "linux,rhel", requires(1, mem), TABLET_VIRTIO))
    add(_linux("rhel.8.dpdk", "Red Hat Enterprise Linux 8", "icon-rhel", "linux,rhel,dpdk",
               requires(1, "1.5Gi"), SPREAD_4, MULTIQUEUE, requires(8, "1.5Gi")))
    # RHEL 9 and 10: one per arch; the rhel.9 desktop/dpdk/realtime variants build on amd64.
    for ver in ("9", "10"):
        for arch_suffix, arch, pieces in ARCH_VARIANTS:
            add(_linux(f"rhel.{ver}{arch_suffix}", f"Red Hat Enterprise Linux {ver} ({arch})", "icon-rhel",
                       "linux,rhel", DEDICATED_IO_THREAD, *pieces, architecture(arch), requires(1, "1.5Gi")))
    rhel9 = (DEDICATED_IO_THREAD, EFI, SECUREBOOT, architecture("amd64"), requires(1, "1.5Gi"))
    add(_linux("rhel.9.desktop", "Red Hat Enterprise Linux 9 Desktop (amd64)", "icon-rhel", "linux,rhel",
               *rhel9, TABLET_VIRTIO))
    add(_linux("rhel.9.dpdk", "Red Hat Enterprise Linux 9 DPDK (amd64)", "icon-rhel", "linux,rhel,dpdk",
               *rhel9, SPREAD_4, MULTIQUEUE, requires(8, "1.5Gi")))
    add(_linux("rhel.9.realtime", "Red Hat Enterprise Linux 9 Realtime (amd64)", "icon-rhel",
               "linux,rhel,realtime", *rhel9, SPREAD, MULTIQUEUE, REALTIME, requires(4, "4Gi")))
    # Windows: (version, display, requirements, firmware/other pieces, NIC, has a .virtio variant)
    windows = (
        ("xp", "Microsoft Windows XP", requires(1, "128Mi"), (PCIHOLE64,), "e1000e", False),
        ("2k3", "Microsoft Windows Server 2003", requires(1, "256Mi"), (PCIHOLE64,), "rtl8139", False),
        ("2k8", "Microsoft Windows Server 2008/2008 R2", requires(1, "512Mi"), (), "e1000", True),
        ("2k12", "Microsoft Windows Server 2012/2012 R2", requires(1, "512Mi"), (), "e1000e", True),
        ("2k16", "Microsoft Windows Server 2016", requires(1, "2Gi"), (EFI, SECUREBOOT), "e1000e", True),
        ("2k19", "Microsoft Windows Server 2019", requires(1, "2Gi"), (EFI, SECUREBOOT), "e1000e", True),
        ("2k22", "Microsoft Windows Server 2022", requires(1, "2Gi"), (EFI_PERSISTED, SECUREBOOT, TPM),
         "e1000e", True),
        ("2k25", "Microsoft Windows Server 2025", requires(1, "2Gi"), (EFI_PERSISTED, SECUREBOOT, TPM),
         "e1000e", True),
        ("7", "Microsoft Windows 7", requires(1, "2Gi"), (), "e1000e", True),
        ("10", "Microsoft Windows 10", requires(1, "2Gi"), (EFI, SECUREBOOT), "e1000e", True),
        ("11", "Microsoft Windows 11", requires(2, "4Gi"), (EFI_PERSISTED, SECUREBOOT, TPM), "e1000e", True),
    )
    for ver, display, req, pieces, nic, has_virtio in windows:
        parent = WINDOWS + (interface_model(nic), req) + pieces
        add(Pref(f"windows.{ver}", "windows", display, "icon-windows", "windows", parent))
        if has_virtio:
            add(Pref(f"windows.{ver}.virtio", "windows", f"{display} (virtio)", "icon-windows", "windows",
                     parent + WINDOWS_VIRTIO))
    return tuple(sorted(p, key=lambda x: x.name))


PREFERENCES: tuple[Pref, ...] = _build_table()
