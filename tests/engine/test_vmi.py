"""The VMI built on start (engine/vmi.py) and the VMI webhook defaults (engine/vmi_mutate.py)."""
from __future__ import annotations

import copy
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.builders import vm

import instancetype as it
from instancetype.engine.vmi_mutate import mutate_new_vmi

IT = {"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}}


def web(template_metadata=None, **kw) -> dict:
    """The VM the VMI is built from: uid and generation set, as the VM controller sees it."""
    return vm("web", runStrategy="Always", metadata={"uid": "u-1", "generation": 3},
              template_metadata=template_metadata or {}, **kw)


def test_plain_vm():
    v = web(template_metadata={"labels": {"app": "web"}},
            volumes=[{"name": "root", "containerDisk": {"image": "img"}}])
    before = copy.deepcopy(v)
    vmi = it.build_vmi(v)
    assert v == before
    meta, spec, status = vmi["metadata"], vmi["spec"], vmi["status"]
    assert (vmi["apiVersion"], vmi["kind"]) == ("kubevirt.io/v1", "VirtualMachineInstance")
    assert meta["name"] == "web" and meta["namespace"] == "ns" and meta["labels"] == {"app": "web"}
    assert meta["ownerReferences"] == [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": "web",
                                        "uid": "u-1", "controller": True, "blockOwnerDeletion": True}]
    assert meta["annotations"] == {"kubevirt.io/vm-generation": "3", "kubevirt.io/pci-topology-version": "v3"}
    assert meta["finalizers"] == ["kubevirt.io/virtualMachineControllerFinalize",
                                  "kubevirt.io/foregroundDeleteVirtualMachine"]
    dom = spec["domain"]
    assert dom["firmware"]["uuid"] == str(uuid.uuid5(uuid.UUID("6a1a24a1-4061-4607-8bf4-a3963d0c5895"), "web"))
    assert dom["devices"]["disks"] == [{"name": "root", "disk": {"bus": "sata"}}]
    assert dom["devices"]["interfaces"] == [{"name": "default", "bridge": {}}]
    assert spec["networks"] == [{"name": "default", "pod": {}}]
    assert dom["cpu"] == {"sockets": 1, "cores": 1, "threads": 1, "model": "host-model", "maxSockets": 4}
    assert dom["features"] == {"acpi": {"enabled": True}}
    assert dom["memory"] == {}
    assert spec["volumes"][0]["containerDisk"]["imagePullPolicy"] == "Always"
    assert status == {"phase": "Pending", "runtimeUser": 107,
                      "currentCPUTopology": {"sockets": 1, "cores": 1, "threads": 1}}


def test_instancetype_and_preference_applied_with_name_annotations():
    v = web(instancetype={"name": "u1.medium", "kind": "VirtualMachineInstancetypes"}, preference={"name": "fedora"},
            domain={"devices": {"autoattachInputDevice": True}})
    pref = {"devices": {"preferredInputBus": "virtio", "preferredInterfaceModel": "virtio"},
            "cpu": {"preferredCPUTopology": "cores"}}
    vmi = it.build_vmi(v, instancetype=IT, preference=pref)
    ann = vmi["metadata"]["annotations"]
    assert ann["kubevirt.io/instancetype-name"] == "u1.medium"
    assert ann["kubevirt.io/cluster-preference-name"] == "fedora"
    dom = vmi["spec"]["domain"]
    assert (dom["cpu"]["sockets"], dom["cpu"]["cores"], dom["cpu"]["threads"]) == (1, 2, 1)
    assert dom["memory"] == {"guest": "2Gi", "maxGuest": "8Gi"}
    assert vmi["status"]["memory"] == {"guestAtBoot": "2Gi", "guestCurrent": "2Gi", "guestRequested": "2Gi"}
    assert dom["devices"]["inputs"] == [{"name": "default-0", "bus": "virtio", "type": "tablet"}]
    assert dom["devices"]["interfaces"] == [{"name": "default", "bridge": {}, "model": "virtio"}]


def test_preferred_autoattach_pod_interface_false_means_no_network():
    vmi = it.build_vmi(web(preference={"name": "p"}),
                       preference={"devices": {"preferredAutoattachPodInterface": False}})
    devices = vmi["spec"]["domain"]["devices"]
    assert devices["autoattachPodInterface"] is False
    assert "interfaces" not in devices and "networks" not in vmi["spec"]


def test_admission_conflicts_stop_the_start():
    with pytest.raises(it.VMIError) as e:
        it.build_vmi(web(instancetype={"name": "x"}, domain={"cpu": {"threads": 2}}), instancetype=IT)
    err = e.value
    assert err.stage == "admission" and err.requirements_error is None
    assert [c.to_dict() for c in err.causes] == [{
        "reason": "FieldValueInvalid", "field": "spec.template.spec.domain.cpu.threads",
        "message": "VM field(s) spec.template.spec.domain.cpu.threads conflicts with selected instance type"}]
    assert str(err) == err.causes[0].message


def test_requirements_stage():
    with pytest.raises(it.VMIError) as e:
        it.build_vmi(web(instancetype={"name": "x"}, preference={"name": "p"}), instancetype=IT,
                     preference={"requirements": {"memory": {"guest": "4Gi"}}})
    err = e.value
    assert err.stage == "requirements"
    assert err.requirements_error == ("insufficient Memory resources of 2Gi provided by instance type, "
                                      "preference requires 4Gi")
    assert str(err) == "failure checking preference requirements: " + err.requirements_error
    assert [c.field for c in err.causes] == ["spec.instancetype"]


def test_defaults_failure_in_admission():
    with pytest.raises(it.VMIError) as e:
        it.build_vmi(web(), config={"network": {"defaultNetworkInterface": "slirp"}})
    assert (str(e.value), e.value.stage, e.value.causes) == ("slirp interface is deprecated as of v1.3",
                                                            "admission", [])


def test_lookup_failures_stop_at_autoattach_then_apply():
    with pytest.raises(it.VMIError) as e:
        it.build_vmi(web(preference={"name": "rhel.9", "kind": "VirtualMachinePreference"}))
    assert (str(e.value), e.value.stage) == (
        'virtualmachinepreferences.instancetype.kubevirt.io "rhel.9" not found', "autoattach")
    with pytest.raises(it.VMIError) as e:
        it.build_vmi(web(instancetype={"name": "x", "kind": "vmf"}))
    assert (str(e.value), e.value.stage) == ("got unexpected kind in InstancetypeMatcher: vmf", "apply")
    stored = {"kind": "VirtualMachineClusterInstancetype", "metadata": {"name": "x"}, "spec": IT}
    vmi = it.build_vmi(web(instancetype={"name": "x"}), objects=[stored])
    assert vmi["metadata"]["annotations"]["kubevirt.io/cluster-instancetype-name"] == "x"


def test_architecture_defaults():
    arm = it.build_vmi(web(template={"architecture": "arm64"},
                           domain={"devices": {"disks": [{"name": "d", "cdrom": {}}]}}))
    dom = arm["spec"]["domain"]
    assert dom["cpu"]["model"] == "host-passthrough" and "maxSockets" not in dom["cpu"]
    assert dom["firmware"]["bootloader"] == {"efi": {"secureBoot": False}}
    assert dom["devices"]["disks"][0]["cdrom"] == {"bus": "virtio", "readonly": True, "tray": "closed"}
    assert dom["machine"]["type"] == "virt"
    s390 = it.build_vmi(web(template={"architecture": "s390x"}, domain={"devices": {"watchdog": {"name": "w"}}}))
    dom = s390["spec"]["domain"]
    assert dom["features"]["acpi"] == {"enabled": False}
    assert dom["devices"]["watchdog"] == {"name": "w", "diag288": {"action": "reset"}}
    assert "kubevirt.io/pci-topology-version" not in s390["metadata"]["annotations"]
    amd = it.build_vmi(web(domain={"devices": {"watchdog": {"name": "w"}}}), config={"cpuModel": "Haswell"})
    assert amd["spec"]["domain"]["devices"]["watchdog"] == {"name": "w", "i6300esb": {"action": "reset"}}
    assert amd["spec"]["domain"]["cpu"]["model"] == "Haswell"


def test_hotplug_limits_and_rollout_strategy():
    big = web(instancetype={"name": "x"})
    vmi = it.build_vmi(big, instancetype={"cpu": {"guest": 200}, "memory": {"guest": "1Gi"}})
    assert vmi["spec"]["domain"]["cpu"]["maxSockets"] == 512     # 200 x 4 capped at 512 vCPUs
    cfg = {"liveUpdateConfiguration": {"maxCpuSockets": 8, "maxGuest": "16Gi"}}
    vmi = it.build_vmi(big, instancetype=IT, config=cfg)
    assert vmi["spec"]["domain"]["cpu"]["maxSockets"] == 8 and vmi["spec"]["domain"]["memory"]["maxGuest"] == "16Gi"
    vmi = it.build_vmi(big, instancetype=IT, config={"vmRolloutStrategy": "Stage"})
    assert "maxSockets" not in vmi["spec"]["domain"]["cpu"] and "maxGuest" not in vmi["spec"]["domain"]["memory"]
    small = it.build_vmi(big, instancetype={"cpu": {"guest": 1}, "memory": {"guest": "512Mi"}})
    assert "maxGuest" not in small["spec"]["domain"]["memory"]      # below 1Gi: no memory hotplug


def test_generation_migration_target_and_firmware_uuid_kept():
    v = web(domain={"firmware": {"uuid": "given"}})
    v["spec"]["runStrategy"] = "WaitAsReceiver"
    del v["metadata"]["generation"]
    vmi = it.build_vmi(v)
    ann = vmi["metadata"]["annotations"]
    assert ann["kubevirt.io/vm-generation"] == "0" and ann["kubevirt.io/create-migration-target"] == "true"
    assert vmi["spec"]["domain"]["firmware"]["uuid"] == "given"


def test_webhook_hyperv_dependencies_and_feature_defaults():
    vmi = {"metadata": {}, "spec": {"architecture": "amd64", "domain": {
        "features": {"hyperv": {"evmcs": {}, "synictimer": {}, "spinlocks": {}, "vpindex": {"enabled": False}}},
        "clock": {"timer": {"hpet": {}}},
        "cpu": {"sockets": 1, "cores": 1, "threads": 1, "features": [{"name": "vmx", "policy": "optional"}]},
        "devices": {"inputs": [{"name": "i"}]}}}}
    mutate_new_vmi(vmi)
    hv = vmi["spec"]["domain"]["features"]["hyperv"]
    # evmcs enabled -> vapic added; ipi/tlbflush absent; synictimer -> synic added; synic needs vpindex,
    # which is explicitly disabled: the fix-ups stop there (what was added stays)
    assert hv["vapic"] == {"enabled": True} and hv["synic"] == {"enabled": True}
    assert hv["vpindex"] == {"enabled": False}
    assert hv["spinlocks"] == {"enabled": True, "spinlocks": 4096}
    assert hv["synictimer"] == {"enabled": True}
    # the fix-ups stopped before the vmx requirement
    assert vmi["spec"]["domain"]["cpu"]["features"] == [{"name": "vmx", "policy": "optional"}]
    assert vmi["spec"]["domain"]["clock"]["timer"]["hpet"] == {"present": True}
    assert vmi["spec"]["domain"]["devices"]["inputs"] == [{"name": "i", "bus": "usb", "type": "tablet"}]


def test_webhook_evmcs_requires_vmx():
    vmi = {"spec": {"domain": {"features": {"hyperv": {"evmcs": {}}},
                               "cpu": {"features": [{"name": "vmx", "policy": "optional"}]}}}}
    mutate_new_vmi(vmi)
    assert vmi["spec"]["domain"]["cpu"]["features"] == [{"name": "vmx", "policy": "require"}]


def test_tdx_gets_the_quote_generation_socket():
    vmi = it.build_vmi(web(instancetype={"name": "x"}), instancetype=dict(IT, launchSecurity={"tdx": {}}))
    assert vmi["metadata"]["annotations"]["kubevirt.io/qgs-socket-path"] == "/var/run/tdx-qgs/qgs.socket"
    assert "maxGuest" not in vmi["spec"]["domain"]["memory"]        # encrypted VMs: no memory hotplug


@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_the_firmware_uuid_is_uuid5_of_the_name(name):
    """engine.vmi builds the uuid5 text from the SHA-1 itself (no `UUID` object): the same text."""
    from instancetype.engine.vmi import FIRMWARE_UUID_NAMESPACE, _firmware_uuid

    assert _firmware_uuid.__wrapped__(name) == str(uuid.uuid5(FIRMWARE_UUID_NAMESPACE, name))
