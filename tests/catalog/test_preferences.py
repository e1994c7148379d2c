"""The generated preferences: every preference's settings (v1.7.0's 54) and the label rules."""
from __future__ import annotations

import pytest

from instancetype import catalog
from instancetype.api.kinds import CLUSTER_PREFERENCE, PREFERENCE

P = "instancetype.kubevirt.io/"
PREFS = catalog.preferences()
BY_NAME = {o["metadata"]["name"]: o for o in PREFS}

# The oracle: common-instancetypes v1.7.0 preferences/ (KubeVirt's vendored
# common-clusterpreferences-bundle.yaml), one row per preference.
# name: (os, disk, nic, firmware, topology, input, arch, req cpu, req mem, extras)
# firmware: "" none | "efi" | "sb" (EFI+SecureBoot+SMM) | "sbp" (sb + persistent + TPM)
# input: "" | "auto" (autoattach only) | "tablet" (virtio tablet); topology: "" | sockets | spread | spread4
L = ("linux", "virtio", "virtio")
W = ("windows", "sata", "e1000e")
WV = ("windows", "virtio", "virtio")
TABLE = {
    "alpine": (*L, "", "", "", "", 1, "512Mi", {"rng"}),
    "centos.stream10": (*L, "", "", "", "", 1, "1.5Gi", {"rng", "io"}),
    "centos.stream10.desktop": (*L, "", "", "tablet", "", 1, "1.5Gi", {"rng", "io"}),
    "centos.stream9": (*L, "", "", "", "", 1, "1.5Gi", {"rng", "io"}),
    "centos.stream9.desktop": (*L, "", "", "tablet", "", 1, "1.5Gi", {"rng", "io"}),
    "centos.stream9.dpdk": (*L, "", "spread4", "", "", 8, "1.5Gi", {"rng", "io", "mq"}),
    "cirros": (*L, "", "", "", "", 1, "256Mi", {"rng"}),
    "debian": (*L, "efi", "", "", "", 1, "512Mi", {"rng"}),
    "fedora": (*L, "sb", "", "", "amd64", 1, "2Gi", {"rng"}),
    "fedora.arm64": (*L, "", "", "", "arm64", 1, "2Gi", {"rng"}),
    "fedora.s390x": (*L, "", "", "", "s390x", 1, "2Gi", {"rng"}),
    "legacy": ("legacy", "sata", "e1000", "", "", "", "", None, None, set()),
    "linux": (*L, "", "", "", "", None, None, {"rng"}),
    "linux.efi": (*L, "efi", "", "", "", None, None, {"rng"}),
    "linux.virtiotransitional": (*L, "", "", "", "", None, None, {"rng", "transitional"}),
    "opensuse.leap": (*L, "", "", "", "", 1, "2Gi", {"rng"}),
    "opensuse.tumbleweed": (*L, "", "", "", "", 1, "2Gi", {"rng"}),
    "oraclelinux": (*L, "efi", "", "", "", 2, "4Gi", {"rng"}),
    "rhel.7": (*L, "", "", "", "", 1, "1Gi", {"rng"}),
    "rhel.7.desktop": (*L, "", "", "tablet", "", 1, "1Gi", {"rng"}),
    "rhel.8": (*L, "", "", "", "", 1, "1.5Gi", {"rng"}),
    "rhel.8.desktop": (*L, "", "", "tablet", "", 1, "1.5Gi", {"rng"}),
    "rhel.8.dpdk": (*L, "", "spread4", "", "", 8, "1.5Gi", {"rng", "mq"}),
    "rhel.9": (*L, "sb", "", "", "amd64", 1, "1.5Gi", {"rng", "io"}),
    "rhel.9.arm64": (*L, "", "", "", "arm64", 1, "1.5Gi", {"rng", "io"}),
    "rhel.9.s390x": (*L, "", "", "", "s390x", 1, "1.5Gi", {"rng", "io"}),
    "rhel.9.desktop": (*L, "sb", "", "tablet", "amd64", 1, "1.5Gi", {"rng", "io"}),
    "rhel.9.dpdk": (*L, "sb", "spread4", "", "amd64", 8, "1.5Gi", {"rng", "io", "mq"}),
    "rhel.9.realtime": (*L, "sb", "spread", "", "amd64", 4, "4Gi", {"rng", "io", "mq", "realtime"}),
    "rhel.10": (*L, "sb", "", "", "amd64", 1, "1.5Gi", {"rng", "io"}),
    "rhel.10.arm64": (*L, "", "", "", "arm64", 1, "1.5Gi", {"rng", "io"}),
    "rhel.10.s390x": (*L, "", "", "", "s390x", 1, "1.5Gi", {"rng", "io"}),
    "sles": (*L, "", "", "", "", 1, "2Gi", {"rng"}),
    "ubuntu": (*L, "", "", "", "", 1, "2Gi", {"rng"}),
    "windows.xp": (*W, "", "sockets", "auto", "", 1, "128Mi", {"pcihole"}),
    "windows.2k3": ("windows", "sata", "rtl8139", "", "sockets", "auto", "", 1, "256Mi", {"pcihole"}),
    "windows.2k8": ("windows", "sata", "e1000", "", "sockets", "auto", "", 1, "512Mi", set()),
    "windows.2k8.virtio": (*WV, "", "sockets", "tablet", "", 1, "512Mi", {"video"}),
    "windows.2k12": (*W, "", "sockets", "auto", "", 1, "512Mi", set()),
    "windows.2k12.virtio": (*WV, "", "sockets", "tablet", "", 1, "512Mi", {"video"}),
    "windows.2k16": (*W, "sb", "sockets", "auto", "", 1, "2Gi", set()),
    "windows.2k16.virtio": (*WV, "sb", "sockets", "tablet", "", 1, "2Gi", {"video"}),
    "windows.2k19": (*W, "sb", "sockets", "auto", "", 1, "2Gi", set()),
    "windows.2k19.virtio": (*WV, "sb", "sockets", "tablet", "", 1, "2Gi", {"video"}),
    "windows.2k22": (*W, "sbp", "sockets", "auto", "", 1, "2Gi", set()),
    "windows.2k22.virtio": (*WV, "sbp", "sockets", "tablet", "", 1, "2Gi", {"video"}),
    "windows.2k25": (*W, "sbp", "sockets", "auto", "", 1, "2Gi", set()),
    "windows.2k25.virtio": (*WV, "sbp", "sockets", "tablet", "", 1, "2Gi", {"video"}),
    "windows.7": (*W, "", "sockets", "auto", "", 1, "2Gi", set()),
    "windows.7.virtio": (*WV, "", "sockets", "tablet", "", 1, "2Gi", {"video"}),
    "windows.10": (*W, "sb", "sockets", "auto", "", 1, "2Gi", set()),
    "windows.10.virtio": (*WV, "sb", "sockets", "tablet", "", 1, "2Gi", {"video"}),
    "windows.11": (*W, "sbp", "sockets", "auto", "", 2, "4Gi", set()),
    "windows.11.virtio": (*WV, "sbp", "sockets", "tablet", "", 2, "4Gi", {"video"}),
}


def test_count_and_names():
    assert len(PREFS) == 54
    assert set(BY_NAME) == set(TABLE)
    names = [o["metadata"]["name"] for o in PREFS]
    assert names == sorted(names)      # kustomize's order: rhel.10 before rhel.7, windows.10 before windows.2k12
    assert not any(n.endswith(".secex") for n in names)   # HEAD-only, after v1.7.0


@pytest.mark.parametrize("name", sorted(TABLE))
def test_settings(name):
    os_type, disk, nic, fw, topo, inp, arch, cpu, mem, extras = TABLE[name]
    spec = BY_NAME[name]["spec"]
    dev = spec.get("devices", {})
    assert spec["annotations"]["vm.kubevirt.io/os"] == os_type
    assert dev.get("preferredDiskBus") == disk
    assert dev.get("preferredInterfaceModel") == nic
    efi = (spec.get("firmware") or {}).get("preferredEfi")
    smm = (spec.get("features") or {}).get("preferredSmm")
    assert efi == {"": None, "efi": {"secureBoot": False}, "sb": {"secureBoot": True},
                   "sbp": {"persistent": True, "secureBoot": True}}[fw]
    assert (smm == {}) == (fw in ("sb", "sbp") or "realtime" in extras)
    assert (dev.get("preferredTPM") == {"persistent": True}) == (fw == "sbp")
    cpu_pref = spec.get("cpu") or {}
    assert cpu_pref.get("preferredCPUTopology") == {"": None, "spread4": "spread"}.get(topo, topo)
    if topo.startswith("spread"):
        expected = {"across": "SocketsCoresThreads", **({"ratio": 4} if topo == "spread4" else {})}
        assert cpu_pref["spreadOptions"] == expected
    assert dev.get("preferredAutoattachInputDevice") == (True if inp else None)
    assert (dev.get("preferredInputBus"), dev.get("preferredInputType")) == (
        ("virtio", "tablet") if inp == "tablet" else (None, None))
    assert spec.get("preferredArchitecture") == (arch or None)
    req = spec.get("requirements") or {}
    assert req.get("architecture") == (arch or None)
    assert (req.get("cpu") or {}).get("guest") == cpu
    assert (req.get("memory") or {}).get("guest") == mem
    assert ("preferredRng" in dev) == ("rng" in extras)
    assert bool(dev.get("preferredDiskDedicatedIoThread")) == ("io" in extras)
    assert bool(dev.get("preferredNetworkInterfaceMultiQueue")) == ("mq" in extras)
    assert bool(dev.get("preferredUseVirtioTransitional")) == ("transitional" in extras)
    assert (dev.get("preferredVideoType") == "virtio") == ("video" in extras)
    assert ("kubevirt.io/disablePCIHole64" in spec["annotations"]) == ("pcihole" in extras)
    if "realtime" in extras:
        assert (dev["preferredAutoattachGraphicsDevice"], dev["preferredAutoattachMemBalloon"],
                dev["preferredAutoattachSerialConsole"]) == (False, False, True)
    windows = os_type == "windows"
    assert (spec.get("preferredTerminationGracePeriodSeconds") == 3600) == windows
    assert ("preferredHyperv" in (spec.get("features") or {})) == windows
    assert ("clock" in spec) == windows


@pytest.mark.parametrize("obj", PREFS, ids=lambda o: o["metadata"]["name"])
def test_label_and_annotation_rules(obj):
    labels, spec, ann = obj["metadata"]["labels"], obj["spec"], obj["metadata"]["annotations"]
    req = spec.get("requirements") or {}
    assert labels.get(P + "required-cpu") == (str(req["cpu"]["guest"]) if "cpu" in req else None)
    assert labels.get(P + "required-memory") == (req["memory"]["guest"] if "memory" in req else None)
    assert labels.get(P + "preferred-architecture") == spec.get("preferredArchitecture")
    assert labels.get(P + "required-architecture") == req.get("architecture")
    assert labels.get(P + "arch") == spec.get("preferredArchitecture")
    assert labels[P + "os-type"] == spec["annotations"]["vm.kubevirt.io/os"]
    assert labels[P + "vendor"] == "kubevirt.io"
    assert P + "deprecated" not in labels
    assert list(labels)[-1] == P + "common-instancetypes-version"
    assert labels[P + "common-instancetypes-version"] == "v1.7.0"
    assert not {P + "class", P + "icon-pf", P + "version"} & set(labels)
    assert ann["openshift.io/provider-display-name"] == "KubeVirt"
    assert ann["openshift.io/documentation-url"] == '"https://github.com/kubevirt/common-instancetypes"\n'
    assert ann["openshift.io/support-url"] == '"https://github.com/kubevirt/common-instancetypes/issues"\n'
    assert ann["tags"].startswith("hidden,kubevirt,")
    assert ann["iconClass"].startswith("icon-")
    assert ann["openshift.io/display-name"]


def test_feature_counts_match_reference():
    """The v1.7.0 bundle's counts, less the three HEAD-only .secex preferences."""
    devs = [o["spec"].get("devices", {}) for o in PREFS]
    assert sum(d.get("preferredDiskBus") == "virtio" for d in devs) == 42
    assert sum(d.get("preferredDiskBus") == "sata" for d in devs) == 12
    assert sum("preferredRng" in d for d in devs) == 33
    assert sum(bool(d.get("preferredDiskDedicatedIoThread")) for d in devs) == 14
    assert sum("preferredTPM" in d for d in devs) == 6
    assert sum("requirements" in o["spec"] for o in PREFS) == 50
    assert sum(o["metadata"]["labels"][P + "os-type"] == "windows" for o in PREFS) == 20


def test_namespaced_twins():
    ns = catalog.preferences(namespaced=True)
    assert {o["kind"] for o in ns} == {PREFERENCE}
    assert {o["kind"] for o in PREFS} == {CLUSTER_PREFERENCE}
    assert [{**o, "kind": 0} for o in ns] == [{**o, "kind": 0} for o in PREFS]


# --- exact equivalence with v1.7.0 (checked object by object against the bundle KubeVirt vendors) ---
# name: (openshift.io/display-name, iconClass without "icon-", tags after "hidden,kubevirt,")
META = {
    "alpine": ("Alpine", "alpine", "alpine"),
    "centos.stream10": ("CentOS Stream 10", "centos", "linux,centos-stream"),
    "centos.stream10.desktop": ("CentOS Stream 10", "centos", "linux,centos-stream"),
    "centos.stream9": ("CentOS Stream 9", "centos", "linux,centos-stream"),
    "centos.stream9.desktop": ("CentOS Stream 9", "centos", "linux,centos-stream"),
    "centos.stream9.dpdk": ("CentOS Stream 9", "centos", "linux,centos-stream,dpdk"),
    "cirros": ("Cirros", "cirros", "cirros"),
    "debian": ("Debian", "debian", "debian"),
    "fedora": ("Fedora (amd64)", "fedora", "fedora"),
    "fedora.arm64": ("Fedora (arm64)", "fedora", "fedora"),
    "fedora.s390x": ("Fedora (s390x)", "fedora", "fedora"),
    "legacy": ("Legacy Guest", "other", "legacy"),
    "linux": ("Linux Guest", "linux", "linux"),
    "linux.efi": ("Linux EFI Guest", "linux", "linux-efi"),
    "linux.virtiotransitional": ("Linux Virtio Transitional Guest", "linux", "linux-virtio-transitional"),
    "opensuse.leap": ("OpenSUSE Leap", "opensuse-leap", "opensuse.leap"),
    "opensuse.tumbleweed": ("OpenSUSE Tumbleweed", "opensuse-tumbleweed", "opensuse.tumbleweed"),
    "oraclelinux": ("Oracle Linux", "oracle", "oraclelinux"),
    "rhel.10": ("Red Hat Enterprise Linux 10 (amd64)", "rhel", "linux,rhel"),
    "rhel.10.arm64": ("Red Hat Enterprise Linux 10 (arm64)", "rhel", "linux,rhel"),
    "rhel.10.s390x": ("Red Hat Enterprise Linux 10 (s390x)", "rhel", "linux,rhel"),
    "rhel.7": ("Red Hat Enterprise Linux 7", "rhel", "linux,rhel"),
    "rhel.7.desktop": ("Red Hat Enterprise Linux 7", "rhel", "linux,rhel"),
    "rhel.8": ("Red Hat Enterprise Linux 8", "rhel", "linux,rhel"),
    "rhel.8.desktop": ("Red Hat Enterprise Linux 8", "rhel", "linux,rhel"),
    "rhel.8.dpdk": ("Red Hat Enterprise Linux 8", "rhel", "linux,rhel,dpdk"),
    "rhel.9": ("Red Hat Enterprise Linux 9 (amd64)", "rhel", "linux,rhel"),
    "rhel.9.arm64": ("Red Hat Enterprise Linux 9 (arm64)", "rhel", "linux,rhel"),
    "rhel.9.desktop": ("Red Hat Enterprise Linux 9 Desktop (amd64)", "rhel", "linux,rhel"),
    "rhel.9.dpdk": ("Red Hat Enterprise Linux 9 DPDK (amd64)", "rhel", "linux,rhel,dpdk"),
    "rhel.9.realtime": ("Red Hat Enterprise Linux 9 Realtime (amd64)", "rhel", "linux,rhel,realtime"),
    "rhel.9.s390x": ("Red Hat Enterprise Linux 9 (s390x)", "rhel", "linux,rhel"),
    "sles": ("SUSE Linux Enterprise Server", "sles", "sles"),
    "ubuntu": ("Ubuntu", "ubuntu", "ubuntu"),
}
# windows.<v> is "Microsoft Windows <...>", windows.<v>.virtio the same plus " (virtio)"; icon and tag "windows".
WINDOWS_DISPLAY = {"xp": "XP", "7": "7", "10": "10", "11": "11", "2k3": "Server 2003",
                   "2k8": "Server 2008/2008 R2", "2k12": "Server 2012/2012 R2", "2k16": "Server 2016",
                   "2k19": "Server 2019", "2k22": "Server 2022", "2k25": "Server 2025"}
for _v, _d in WINDOWS_DISPLAY.items():
    META[f"windows.{_v}"] = (f"Microsoft Windows {_d}", "windows", "windows")
    if _v not in ("xp", "2k3"):
        META[f"windows.{_v}.virtio"] = (f"Microsoft Windows {_d} (virtio)", "windows", "windows")

HYPERV = {"frequencies": {}, "ipi": {}, "reenlightenment": {}, "relaxed": {}, "reset": {}, "runtime": {},
          "spinlocks": {"spinlocks": 8191}, "synic": {}, "synictimer": {"direct": {}}, "tlbflush": {},
          "vapic": {}, "vpindex": {}}
WINDOWS_CLOCK = {"preferredClockOffset": {"utc": {}},
                 "preferredTimer": {"hpet": {"present": False}, "hyperv": {}, "pit": {"tickPolicy": "delay"},
                                    "rtc": {"tickPolicy": "catchup"}}}


def test_metadata_table_covers_v170():
    assert set(META) == set(TABLE)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_annotations_and_labels_exact(name):
    obj = BY_NAME[name]
    display, icon, tags = META[name]
    assert obj["metadata"]["annotations"] == {
        "iconClass": f"icon-{icon}",
        "openshift.io/display-name": display,
        "openshift.io/documentation-url": '"https://github.com/kubevirt/common-instancetypes"\n',
        "openshift.io/provider-display-name": "KubeVirt",
        "openshift.io/support-url": '"https://github.com/kubevirt/common-instancetypes/issues"\n',
        "tags": f"hidden,kubevirt,{tags}",
    }
    os_type, _, _, _, _, _, arch, cpu, mem, _ = TABLE[name]
    labels = {P + "os-type": os_type, P + "vendor": "kubevirt.io", P + "common-instancetypes-version": "v1.7.0"}
    if cpu is not None:
        labels.update({P + "required-cpu": str(cpu), P + "required-memory": mem})
    if arch:
        labels.update({P + "arch": arch, P + "preferred-architecture": arch, P + "required-architecture": arch})
    assert obj["metadata"]["labels"] == labels
    assert set(obj["metadata"]) == {"annotations", "labels", "name"}


@pytest.mark.parametrize("name", sorted(TABLE))
def test_spec_has_nothing_else(name):
    """Every key of every spec accounted for by the row (test_settings checks the values)."""
    os_type, disk, nic, fw, topo, inp, arch, cpu, mem, extras = TABLE[name]
    spec = BY_NAME[name]["spec"]
    windows = os_type == "windows"
    smm = fw in ("sb", "sbp") or "realtime" in extras
    top = {"annotations", "devices"}
    top |= {"requirements"} if cpu is not None else set()
    top |= {"firmware"} if fw else set()
    top |= {"features"} if smm or windows else set()
    top |= {"cpu"} if topo else set()
    top |= {"preferredArchitecture"} if arch else set()
    top |= {"clock", "preferredTerminationGracePeriodSeconds"} if windows else set()
    assert set(spec) == top
    devices = {"preferredDiskBus", "preferredInterfaceModel"}
    devices |= {"preferredAutoattachInputDevice"} if inp else set()
    devices |= {"preferredInputBus", "preferredInputType"} if inp == "tablet" else set()
    devices |= {"preferredTPM"} if fw == "sbp" else set()
    for extra, key in (("rng", "preferredRng"), ("io", "preferredDiskDedicatedIoThread"),
                       ("mq", "preferredNetworkInterfaceMultiQueue"), ("video", "preferredVideoType"),
                       ("transitional", "preferredUseVirtioTransitional")):
        devices |= {key} if extra in extras else set()
    if "realtime" in extras:
        devices |= {"preferredAutoattachGraphicsDevice", "preferredAutoattachMemBalloon",
                    "preferredAutoattachSerialConsole"}
    assert set(spec["devices"]) == devices
    assert spec["devices"].get("preferredRng", {}) == {}
    features = ({"preferredAcpi": {}, "preferredApic": {}, "preferredHyperv": HYPERV} if windows else {})
    features |= {"preferredSmm": {}} if smm else {}
    assert spec.get("features", {}) == features
    assert spec.get("clock") == (WINDOWS_CLOCK if windows else None)
    assert spec["annotations"] == {"vm.kubevirt.io/os": os_type,
                                   **({"kubevirt.io/disablePCIHole64": "true"} if "pcihole" in extras else {})}
    if cpu is not None:
        assert spec["requirements"] == {"cpu": {"guest": cpu}, "memory": {"guest": mem},
                                        **({"architecture": arch} if arch else {})}
    if topo:
        assert set(spec["cpu"]) == ({"preferredCPUTopology"} | ({"spreadOptions"} if topo.startswith("spread")
                                                                  else set()))
