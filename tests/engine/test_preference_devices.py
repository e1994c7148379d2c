"""Device preferences: table tests from KubeVirt's preference/apply/device_test.go vectors."""
from __future__ import annotations

import pytest

from instancetype.engine.preference import apply_autoattach, apply_preference
from instancetype.jsonutil import clone

FULL_PREF = {"devices": {
    "preferredDiskDedicatedIoThread": True, "preferredDisableHotplug": True,
    "preferredUseVirtioTransitional": True, "preferredNetworkInterfaceMultiQueue": True,
    "preferredBlockMultiQueue": True,
    "preferredDiskBlockSize": {"custom": {"logical": 4096, "physical": 4096}},
    "preferredDiskCache": "writethrough", "preferredDiskIO": "native", "preferredDiskBus": "virtio",
    "preferredCdromBus": "scsi", "preferredLunBus": "sata", "preferredInputBus": "virtio",
    "preferredInputType": "tablet", "preferredInterfaceModel": "virtio", "preferredSoundModel": "ac97",
    "preferredRng": {}, "preferredInterfaceMasquerade": {}, "preferredPanicDeviceModel": "hyperv"}}


def full_vm() -> dict:
    return {"domain": {"devices": {
        "disks": [
            {"cache": "writeback", "io": "native", "blockSize": {"custom": {"logical": 512, "physical": 512}},
             "disk": {"bus": "scsi"}},
            {"disk": {}}, {"cdrom": {"bus": "sata"}}, {"cdrom": {}}, {"lun": {"bus": "sata"}}, {"lun": {}}],
        "inputs": [{"bus": "usb", "type": "tablet"}, {}],
        "interfaces": [{"name": "primary", "model": "e1000"}, {"name": "secondary"}],
        "sound": {},
        "panicDevices": [{}],
    }}}


def test_devices_full():
    spec = full_vm()
    apply_preference(FULL_PREF, spec)
    assert spec["domain"]["devices"] == {
        "disks": [
            {"cache": "writeback", "io": "native", "blockSize": {"custom": {"logical": 512, "physical": 512}},
             "disk": {"bus": "scsi"}},
            {"disk": {"bus": "virtio"}, "cache": "writethrough", "io": "native",
             "blockSize": {"custom": {"logical": 4096, "physical": 4096}}, "dedicatedIOThread": True},
            {"cdrom": {"bus": "sata"}}, {"cdrom": {"bus": "scsi"}}, {"lun": {"bus": "sata"}}, {"lun": {"bus": "sata"}}],
        "inputs": [{"bus": "usb", "type": "tablet"}, {"bus": "virtio", "type": "tablet"}],
        "interfaces": [{"name": "primary", "model": "e1000"}, {"name": "secondary", "model": "virtio"}],
        "sound": {"model": "ac97"},
        "rng": {},
        "panicDevices": [{"model": "hyperv"}],
        "disableHotplug": True,
        "useVirtioTransitional": True,
        "blockMultiQueue": True,
        "networkInterfaceMultiqueue": True,
    }


def test_preference_not_mutated_nor_aliased():
    pref = clone(FULL_PREF)
    spec = full_vm()
    apply_preference(pref, spec)
    assert pref == FULL_PREF
    spec["domain"]["devices"]["disks"][1]["blockSize"]["custom"]["logical"] = 1
    spec["domain"]["devices"]["rng"]["x"] = 1
    assert pref == FULL_PREF


def test_disk_without_target_gets_disk_and_bus():
    spec = full_vm()
    spec["domain"]["devices"]["disks"][1] = {}
    apply_preference(FULL_PREF, spec)
    assert spec["domain"]["devices"]["disks"][1]["disk"] == {"bus": "virtio"}


def test_disk_without_target_even_without_disk_preferences():
    spec = {"domain": {"devices": {"disks": [{"name": "a"}]}}}
    apply_preference({"devices": {}}, spec)
    assert spec["domain"]["devices"]["disks"] == [{"name": "a", "disk": {}}]


def test_disk_keeps_bus():
    spec = full_vm()
    spec["domain"]["devices"]["disks"][1]["disk"]["bus"] = "scsi"
    apply_preference(FULL_PREF, spec)
    d = spec["domain"]["devices"]["disks"][1]
    assert d["disk"] == {"bus": "scsi"} and "dedicatedIOThread" not in d


@pytest.mark.parametrize("networks,ifaces,expect", [
    ([{"name": "primary", "pod": {}}], [{"name": "primary", "model": "e1000"}, {"name": "secondary"}],
     [{}, None]),
    ([{"name": "primary", "pod": {}}], [{"name": "primary", "sriov": {}}], [None]),
    ([{"name": "primary"}], [{"name": "primary"}], [None]),
    ([{"name": "primary", "pod": {}}], [{"name": "primary", "binding": {"name": "x"}}], [None]),
    ([{"name": "primary", "pod": {}}], [{"name": "primary", "bridge": {}}], [None]),
    # the first network with the name decides
    ([{"name": "p"}, {"name": "p", "pod": {}}], [{"name": "p"}], [None]),
])
def test_masquerade(networks, ifaces, expect):
    spec = {"networks": networks, "domain": {"devices": {"interfaces": ifaces}}}
    apply_preference({"devices": {"preferredInterfaceMasquerade": {}}}, spec)
    got = [i.get("masquerade") for i in spec["domain"]["devices"]["interfaces"]]
    assert got == expect


def test_dedicated_iothread_false_needs_virtio_bus():
    spec = full_vm()
    apply_preference({"devices": {"preferredDiskDedicatedIoThread": False}}, spec)
    assert all("dedicatedIOThread" not in d for d in spec["domain"]["devices"]["disks"])
    spec = {"domain": {"devices": {"disks": [{"disk": {"bus": "virtio"}}]}}}
    apply_preference({"devices": {"preferredDiskDedicatedIoThread": False}}, spec)
    assert spec["domain"]["devices"]["disks"][0]["dedicatedIOThread"] is False


@pytest.mark.parametrize("vm,pref,out", [
    (None, {"persistent": True}, {"persistent": True}),
    ({"persistent": True}, {}, {"persistent": True}),
    ({"enabled": False}, {}, {"enabled": False}),
    ({"enabled": False}, {"enabled": True}, {"enabled": False}),
])
def test_tpm(vm, pref, out):
    spec = {"domain": {"devices": {} if vm is None else {"tpm": vm}}}
    apply_preference({"devices": {"preferredTPM": pref}}, spec)
    assert spec["domain"]["devices"]["tpm"] == out


@pytest.mark.parametrize("model,vm,out", [
    (None, [{"model": "hyperv"}], [{"model": "hyperv"}]),
    ("hyperv", [], [{"model": "hyperv"}]),
    ("isa", [{"model": "hyperv"}, {}, {"model": ""}], [{"model": "hyperv"}, {"model": "isa"}, {"model": ""}]),
])
def test_panic(model, vm, out):
    spec = {"domain": {"devices": {"panicDevices": vm}}}
    apply_preference({"devices": {} if model is None else {"preferredPanicDeviceModel": model}}, spec)
    assert spec["domain"]["devices"]["panicDevices"] == out


@pytest.mark.parametrize("pref,vm,out", [
    ("virtio", {}, {"type": "virtio"}),
    ("virtio", {"type": "vga"}, {"type": "vga"}),
    ("virtio", None, {"type": "virtio"}),
    (None, {}, {}),
    (None, None, None),
])
def test_video(pref, vm, out):
    devs = {} if vm is None else {"video": vm}
    spec = {"domain": {"devices": devs}}
    apply_preference({"devices": {} if pref is None else {"preferredVideoType": pref}}, spec)
    assert spec["domain"]["devices"].get("video") == out


AUTOATTACH = [("preferredAutoattachGraphicsDevice", "autoattachGraphicsDevice"),
              ("preferredAutoattachMemBalloon", "autoattachMemBalloon"),
              ("preferredAutoattachPodInterface", "autoattachPodInterface"),
              ("preferredAutoattachSerialConsole", "autoattachSerialConsole"),
              ("preferredAutoattachInputDevice", "autoattachInputDevice")]


@pytest.mark.parametrize("pkey,vkey", AUTOATTACH)
@pytest.mark.parametrize("apply", [apply_preference, apply_autoattach])
@pytest.mark.parametrize("pref,vm,out", [
    (True, None, True), (False, None, False), (None, None, None), (None, True, True),
    (None, False, False), (True, False, False), (False, True, True),
])
def test_autoattach(pkey, vkey, apply, pref, vm, out):
    spec = {"domain": {"devices": {} if vm is None else {vkey: vm}}}
    apply({"devices": {} if pref is None else {pkey: pref}}, spec)
    assert spec["domain"]["devices"].get(vkey) == out


def test_autoattach_only_touches_autoattach():
    spec = {"domain": {"devices": {"disks": [{"name": "a"}]}}}
    apply_autoattach(FULL_PREF, spec)
    assert spec == {"domain": {"devices": {"disks": [{"name": "a"}]}}}


def test_disable_hotplug_overrides():
    spec = {"domain": {"devices": {"disableHotplug": True}}}
    apply_preference({"devices": {"preferredDisableHotplug": False}}, spec)
    assert spec["domain"]["devices"]["disableHotplug"] is False


def test_sound_model_needs_sound_device():
    spec = {"domain": {}}
    apply_preference({"devices": {"preferredSoundModel": "ich9"}}, spec)
    assert "sound" not in spec["domain"]["devices"]


def test_default_interface_and_input_filled_for_vmi():
    spec = {"domain": {"devices": {"interfaces": [{"name": "default", "bridge": {}}],
                                   "inputs": [{"name": "default-0"}]}},
            "networks": [{"name": "default", "pod": {}}]}
    apply_preference({"devices": {"preferredInterfaceModel": "virtio", "preferredInterfaceMasquerade": {},
                                  "preferredInputBus": "virtio", "preferredInputType": "tablet"}},
                     spec, for_vmi=True)
    devs = spec["domain"]["devices"]
    assert devs["interfaces"] == [{"name": "default", "bridge": {}, "model": "virtio"}]
    assert devs["inputs"] == [{"name": "default-0", "bus": "virtio", "type": "tablet"}]
