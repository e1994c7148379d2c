"""Non-device preferences: cpu, features, firmware, machine, clock, top-level (KubeVirt's
preference/apply/*_test.go vectors)."""
from __future__ import annotations

import pytest

from instancetype.engine.preference import apply_preference


def test_cpu_features_appended_by_name():
    spec = {"domain": {"cpu": {"features": [{"name": "vmx", "policy": "forbid"}]}}}
    apply_preference({"cpu": {"preferredCPUFeatures": [{"name": "vmx", "policy": "require"},
                                                       {"name": "pcid", "policy": "require"}]}}, spec)
    assert spec["domain"]["cpu"]["features"] == [{"name": "vmx", "policy": "forbid"},
                                                 {"name": "pcid", "policy": "require"}]


def test_cpu_features_create_cpu():
    spec = {}
    apply_preference({"cpu": {"preferredCPUFeatures": [{"name": "pcid"}]}}, spec)
    assert spec["domain"]["cpu"] == {"features": [{"name": "pcid"}]}


def test_cpu_topology_does_not_touch_vm():
    spec = {"domain": {"cpu": {"cores": 1}}}
    apply_preference({"cpu": {"preferredCPUTopology": "threads"}}, spec)
    assert spec == {"domain": {"cpu": {"cores": 1}}}


@pytest.mark.parametrize("pref,vm,out", [
    ("arm64", "", "arm64"), ("arm64", "amd64", "amd64"), ("", "", ""), (None, "", ""),
])
def test_architecture(pref, vm, out):
    spec = {"architecture": vm}
    apply_preference({} if pref is None else {"preferredArchitecture": pref}, spec)
    assert spec["architecture"] == out


def test_clock():
    spec = {}
    apply_preference({"clock": {"preferredClockOffset": {"utc": {"offsetSeconds": 30}},
                                "preferredTimer": {"hyperv": {}}}}, spec)
    assert spec["domain"]["clock"] == {"utc": {"offsetSeconds": 30}, "timer": {"hyperv": {}}}


def test_clock_keeps_vm_offset_and_timer():
    spec = {"domain": {"clock": {"timezone": "UTC", "timer": {"rtc": {}}}}}
    apply_preference({"clock": {"preferredClockOffset": {"utc": {"offsetSeconds": 30}},
                                "preferredTimer": {"hyperv": {}}}}, spec)
    assert spec["domain"]["clock"] == {"timezone": "UTC", "timer": {"rtc": {}}}


def test_clock_block_creates_clock():
    spec = {}
    apply_preference({"clock": {}}, spec)
    assert spec["domain"]["clock"] == {}


HYPERV = {"relaxed": {}, "vapic": {}, "spinlocks": {"enabled": True, "spinlocks": 32}, "vpindex": {},
          "runtime": {}, "synic": {}, "synictimer": {"enabled": True, "direct": {}}, "reset": {},
          "vendorid": {"enabled": True, "vendorid": "1234"}, "frequencies": {}, "reenlightenment": {},
          "tlbflush": {}, "ipi": {}, "evmcs": {}}
FEATURES = {"preferredAcpi": {}, "preferredApic": {"enabled": True}, "preferredKvm": {"hidden": True},
            "preferredPvspinlock": {}, "preferredSmm": {}, "preferredHyperv": HYPERV}


def test_features():
    spec = {}
    apply_preference({"features": FEATURES}, spec)
    assert spec["domain"]["features"] == {"acpi": {}, "apic": {"enabled": True}, "kvm": {"hidden": True},
                                          "pvspinlock": {}, "smm": {}, "hyperv": HYPERV}


def test_hyperv_partial():
    spec = {"domain": {"features": {"hyperv": {"evmcs": {"enabled": False}}, "acpi": {"enabled": False},
                                    "smm": {"enabled": False}}}}
    apply_preference({"features": FEATURES}, spec)
    f = spec["domain"]["features"]
    assert f["hyperv"] == {**HYPERV, "evmcs": {"enabled": False}}
    assert f["acpi"] == {}  # ACPI always overrides
    assert f["smm"] == {"enabled": False}


@pytest.mark.parametrize("fw,vm_boot,out", [
    ({"preferredUseBios": True, "preferredUseBiosSerial": True, "preferredUseEfi": False,
      "preferredUseSecureBoot": False}, None, {"bios": {"useSerial": True}}),
    ({"preferredUseBios": False, "preferredUseBiosSerial": False, "preferredUseEfi": True,
      "preferredUseSecureBoot": True}, None, {"efi": {"secureBoot": True}}),
    ({"preferredUseEfi": True, "preferredUseSecureBoot": True}, {"bios": {"useSerial": False}},
     {"bios": {"useSerial": False}}),
    ({"preferredUseBios": True, "preferredUseBiosSerial": True}, {"bios": {"useSerial": False}},
     {"bios": {"useSerial": False}}),
    ({"preferredUseBios": True, "preferredUseBiosSerial": True}, {"efi": {"secureBoot": False}},
     {"efi": {"secureBoot": False}}),
    ({"preferredUseEfi": True, "preferredUseSecureBoot": True}, {"efi": {"secureBoot": False}},
     {"efi": {"secureBoot": False}}),
    ({"preferredEfi": {"persistent": True, "secureBoot": True}}, None, {"efi": {"persistent": True, "secureBoot": True}}),
    ({"preferredEfi": {"persistent": True}, "preferredUseEfi": False, "preferredUseSecureBoot": False}, None,
     {"efi": {"persistent": True}}),
    ({"preferredEfi": {"secureBoot": True, "persistent": True}}, {"efi": {"secureBoot": False}},
     {"efi": {"secureBoot": False}}),
    ({"preferredEfi": {}}, {"bios": {}}, {"bios": {}}),
    # legacy secureBoot also applies to a user EFI when preferredEfi was skipped
    ({"preferredEfi": {"persistent": True}, "preferredUseSecureBoot": True}, {"efi": {}}, {"efi": {"secureBoot": True}}),
    ({}, None, {}),
])
def test_firmware(fw, vm_boot, out):
    spec = {"domain": {} if vm_boot is None else {"firmware": {"bootloader": vm_boot}}}
    apply_preference({"firmware": fw}, spec)
    assert spec["domain"]["firmware"]["bootloader"] == out


@pytest.mark.parametrize("pref,vm,out", [
    ("q35-rhel-8.0", None, {"type": "q35-rhel-8.0"}),
    ("q35-rhel-8.0", {"type": "q35"}, {"type": "q35"}),
    ("q35-rhel-8.0", {}, {"type": "q35-rhel-8.0"}),
    ("", None, None),
])
def test_machine(pref, vm, out):
    spec = {"domain": {} if vm is None else {"machine": vm}}
    apply_preference({"machine": {"preferredMachineType": pref}}, spec)
    assert spec["domain"].get("machine") == out


@pytest.mark.parametrize("vm,out", [("", "kubevirt.io"), ("foo.com", "foo.com"), (None, "kubevirt.io")])
def test_subdomain(vm, out):
    spec = {} if vm is None else {"subdomain": vm}
    apply_preference({"preferredSubdomain": "kubevirt.io"}, spec)
    assert spec["subdomain"] == out


@pytest.mark.parametrize("vm,out", [(None, 180), (100, 100), (0, 0)])
def test_termination_grace_period(vm, out):
    spec = {} if vm is None else {"terminationGracePeriodSeconds": vm}
    apply_preference({"preferredTerminationGracePeriodSeconds": 180}, spec)
    assert spec["terminationGracePeriodSeconds"] == out


def test_annotations():
    pref = {"annotations": {"annotation-1": "1", "annotation-2": "2"}}
    meta = {}
    apply_preference(pref, {}, metadata=meta)
    assert meta == {"annotations": {"annotation-1": "1", "annotation-2": "2"}}
    keep = {"annotation-1": "dont-overwrite", "annotation-2": "dont-overwrite", "annotation-3": "dont-overwrite"}
    meta = {"annotations": dict(keep)}
    apply_preference(pref, {}, metadata=meta)
    assert meta == {"annotations": keep}


def test_launch_security():
    spec = {}
    apply_preference({"preferredLaunchSecurity": {"sev": {}}}, spec)
    assert spec["domain"]["launchSecurity"] == {"sev": {}}
    spec = {"domain": {"launchSecurity": {"snp": {}}}}
    apply_preference({"preferredLaunchSecurity": {"sev": {}}}, spec)
    assert spec["domain"]["launchSecurity"] == {"snp": {}}


def test_no_preference_is_noop():
    spec = {"domain": {}}
    apply_preference(None, spec)
    apply_preference({}, spec)
    assert spec == {"domain": {}}


def test_volumes_and_requirements_not_applied():
    spec = {"domain": {}}
    apply_preference({"volumes": {"preferredStorageClassName": "x"},
                      "requirements": {"cpu": {"guest": 2}}}, spec)
    assert spec == {"domain": {}}


def test_cpu_features_duplicate_preferred_names_both_appended():
    # Go collects the VM's names once, before appending
    spec = {"domain": {"cpu": {}}}
    apply_preference({"cpu": {"preferredCPUFeatures": [{"name": "a"}, {"name": "a"}]}}, spec)
    assert spec["domain"]["cpu"]["features"] == [{"name": "a"}, {"name": "a"}]
