"""catalog/migrate.py: legacy VMs rewritten onto catalogue instancetypes and preferences.

Every migration is proved the way the issue asks: the VMI KubeVirt starts for the migrated VM
(the catalogue objects given as `objects`) equals the VMI of the original VM, apart from the
annotations the instancetype and preference add. The comparison here is written independently
of the module's own.
"""
from __future__ import annotations

import copy
import random

import pytest

import instancetype
from instancetype import catalog
from instancetype.catalog.migrate import Change, Migration, MigrationError, migrate
from tests import builders

CATALOGUE = catalog.instancetypes() + catalog.preferences()
NAME_ANNOTATIONS = {"kubevirt.io/cluster-instancetype-name", "kubevirt.io/cluster-preference-name",
                    "kubevirt.io/instancetype-name", "kubevirt.io/preference-name"}


def vm(name: str, template_spec: dict, **spec) -> dict:
    """A legacy VM of the `default` namespace, its template labelled with its name."""
    return builders.vm(name, template_spec, namespace="default", runStrategy="Always",
                       template_metadata={"labels": {"kubevirt.io/vm": name}}, **spec)


def assert_reproduces(original: dict, m: Migration) -> None:
    """build_vmi(migrated) == build_vmi(original), apart from the annotations the pair adds."""
    before = instancetype.build_vmi(original)
    after = instancetype.build_vmi(m.vm, objects=CATALOGUE)
    added = set(NAME_ANNOTATIONS)
    added.update(m.instancetype["spec"].get("annotations") or {})
    if m.preference is not None:
        added.update(m.preference["spec"].get("annotations") or {})
    original_annotations = before["metadata"].get("annotations") or {}
    annotations = after["metadata"].get("annotations") or {}
    for key in list(annotations):
        if key in added and key not in original_annotations:
            del annotations[key]
    if not annotations and "annotations" not in before["metadata"]:
        after["metadata"].pop("annotations", None)
    assert after == before


def names(m: Migration) -> tuple[str, str | None]:
    return (m.instancetype["metadata"]["name"], m.preference["metadata"]["name"] if m.preference else None)


def template(m: Migration) -> dict:
    return m.vm["spec"]["template"]["spec"]


# --- realistic legacy VMs ----------------------------------------------------------------------
def fedora_vm() -> dict:
    return vm("fedora-legacy", {
        "domain": {
            "cpu": {"sockets": 1, "cores": 1, "threads": 1},
            "memory": {"guest": "4Gi"},
            "firmware": {"bootloader": {"efi": {"secureBoot": True}}},
            "features": {"smm": {"enabled": True}},
            "devices": {
                "disks": [{"name": "rootdisk", "disk": {"bus": "virtio"}},
                          {"name": "cloudinitdisk", "disk": {"bus": "virtio"}}],
                "interfaces": [{"name": "default", "masquerade": {}, "model": "virtio"}],
                "rng": {},
            },
        },
        "networks": [{"name": "default", "pod": {}}],
        "volumes": [
            {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}},
            {"name": "cloudinitdisk", "cloudInitNoCloud": {"userData": "#cloud-config\npassword: fedora\n"}},
        ],
    })


def windows_vm() -> dict:
    return vm("win11", {
        "domain": {
            "cpu": {"sockets": 2, "cores": 1, "threads": 1},
            "memory": {"guest": "4Gi"},
            "clock": {"utc": {}, "timer": {"hpet": {"present": False}, "pit": {"tickPolicy": "delay"},
                                            "rtc": {"tickPolicy": "catchup"}, "hyperv": {}}},
            "features": {
                "acpi": {}, "apic": {}, "smm": {},
                "hyperv": {"relaxed": {}, "vapic": {}, "vpindex": {}, "spinlocks": {"spinlocks": 8191},
                           "synic": {}, "synictimer": {"direct": {}}, "tlbflush": {}, "frequencies": {},
                           "reenlightenment": {}, "ipi": {}, "runtime": {}, "reset": {}},
            },
            "firmware": {"bootloader": {"efi": {"persistent": True, "secureBoot": True}}},
            "devices": {
                "disks": [{"name": "rootdisk", "disk": {"bus": "sata"}, "bootOrder": 1}],
                "interfaces": [{"name": "default", "masquerade": {}, "model": "e1000e"}],
                "tpm": {"persistent": True},
                "autoattachInputDevice": True,
            },
        },
        "terminationGracePeriodSeconds": 3600,
        "networks": [{"name": "default", "pod": {}}],
        "volumes": [{"name": "rootdisk", "persistentVolumeClaim": {"claimName": "win11-root"}}],
    })


def dedicated_vm() -> dict:
    return vm("database", {
        "domain": {
            "cpu": {"sockets": 2, "cores": 1, "threads": 1,
                    "dedicatedCpuPlacement": True, "isolateEmulatorThread": True},
            "ioThreadsPolicy": "auto",
            "memory": {"guest": "8Gi"},
            "devices": {"disks": [{"name": "rootdisk", "disk": {"bus": "virtio"}}],
                        "interfaces": [{"name": "default", "masquerade": {}, "model": "virtio"}],
                        "rng": {}},
        },
        "networks": [{"name": "default", "pod": {}}],
        "volumes": [{"name": "rootdisk", "dataVolume": {"name": "database-root"}}],
    })


def compute_exclusive_vm() -> dict:
    return vm("crunch", {
        "domain": {
            "cpu": {"sockets": 1, "cores": 1, "threads": 1, "maxSockets": 1,
                    "dedicatedCpuPlacement": True, "isolateEmulatorThread": True,
                    "numa": {"guestMappingPassthrough": {}}},
            "ioThreadsPolicy": "auto",
            "memory": {"guest": "2Gi", "hugepages": {"pageSize": "2Mi"}},
            "devices": {"disks": [{"name": "rootdisk", "disk": {"bus": "virtio"}, "dedicatedIOThread": True}],
                        "interfaces": [{"name": "default", "masquerade": {}, "model": "virtio"}],
                        "rng": {}},
        },
        "networks": [{"name": "default", "pod": {}}],
        "volumes": [{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/centos-stream:10"}}],
    })


# --- migrations --------------------------------------------------------------------------------
def test_fedora_vm_moves_onto_u1_medium_and_fedora():
    original = fedora_vm()
    m = migrate(original)
    assert names(m) == ("u1.medium", "fedora")
    assert_reproduces(original, m)
    assert m.vm["spec"]["instancetype"] == {"kind": "VirtualMachineClusterInstancetype", "name": "u1.medium"}
    assert m.vm["spec"]["preference"] == {"kind": "VirtualMachineClusterPreference", "name": "fedora"}
    assert [str(c) for c in m.changes] == [
        "spec.template.spec.domain.cpu: provided by virtualmachineclusterinstancetype/u1.medium",
        "spec.template.spec.domain.memory: provided by virtualmachineclusterinstancetype/u1.medium",
        "spec.template.spec.domain.devices.disks[0].disk: provided by virtualmachineclusterpreference/fedora",
        "spec.template.spec.domain.devices.disks[1].disk: provided by virtualmachineclusterpreference/fedora",
        "spec.template.spec.domain.devices.interfaces[0].model: provided by virtualmachineclusterpreference/fedora",
        "spec.template.spec.domain.devices.rng: provided by virtualmachineclusterpreference/fedora",
        "spec.template.spec.domain.features: provided by virtualmachineclusterpreference/fedora",
        "spec.template.spec.domain.firmware: provided by virtualmachineclusterpreference/fedora",
    ]
    assert template(m)["domain"] == {"devices": {
        "disks": [{"name": "rootdisk"}, {"name": "cloudinitdisk"}],
        "interfaces": [{"name": "default", "masquerade": {}}]}}
    # what the template keeps, it keeps as it was, in its order
    assert template(m)["volumes"] == original["spec"]["template"]["spec"]["volumes"]
    assert list(m.vm["spec"]) == ["runStrategy", "instancetype", "preference", "template"]
    assert m.vm["metadata"] == original["metadata"]
    assert all(isinstance(c, Change) for c in m.changes)


def test_windows_vm_moves_onto_windows_11():
    original = windows_vm()
    m = migrate(original)
    assert names(m) == ("u1.2xmedium", "windows.11")
    assert_reproduces(original, m)
    t = template(m)
    assert t["domain"] == {"devices": {"disks": [{"name": "rootdisk", "bootOrder": 1}],
                                       "interfaces": [{"name": "default", "masquerade": {}}]}}
    assert "terminationGracePeriodSeconds" not in t
    moved = {c.path for c in m.changes}
    assert {"spec.template.spec.domain.clock", "spec.template.spec.domain.features",
            "spec.template.spec.domain.devices.tpm",
            "spec.template.spec.terminationGracePeriodSeconds"} <= moved


def test_dedicated_cpu_vm_moves_onto_d1_and_the_most_generic_preference():
    original = dedicated_vm()
    m = migrate(original)
    # alpine, cirros, linux, ubuntu, ... all explain virtio disks, NIC and rng: the one with
    # the fewest settings (no requirements) wins over the alphabetically first.
    assert names(m) == ("d1.large", "linux")
    assert_reproduces(original, m)
    assert "ioThreadsPolicy" not in template(m)["domain"]
    assert ("spec.template.spec.domain.ioThreadsPolicy: provided by virtualmachineclusterinstancetype/d1.large"
            in [str(c) for c in m.changes])


def test_compute_exclusive_vm_with_hugepages_and_numa():
    original = compute_exclusive_vm()
    m = migrate(original)
    # centos.stream10 and centos.stream9 are equal here: by name
    assert names(m) == ("cx1.medium", "centos.stream10")
    assert_reproduces(original, m)
    assert template(m)["domain"]["devices"]["disks"] == [{"name": "rootdisk"}]


def test_vm_settings_a_preference_would_change_are_kept():
    # fedora would give SMM on; this VM has it off: the field stays in the VM (where the
    # preference leaves it alone) and fedora still explains everything else
    original = fedora_vm()
    original["spec"]["template"]["spec"]["domain"]["features"]["smm"] = {"enabled": False}
    m = migrate(original)
    assert names(m) == ("u1.medium", "fedora")
    assert_reproduces(original, m)
    assert template(m)["domain"]["features"] == {"smm": {"enabled": False}}
    assert not any("features" in c.path for c in m.changes)


def test_the_preference_that_explains_most_wins():
    # EFI without secure boot and SMM off: linux.efi explains the firmware, fedora does not
    original = fedora_vm()
    domain = original["spec"]["template"]["spec"]["domain"]
    domain["features"]["smm"] = {"enabled": False}
    domain["firmware"]["bootloader"]["efi"]["secureBoot"] = False
    m = migrate(original)
    assert names(m) == ("u1.medium", "linux.efi")
    assert_reproduces(original, m)
    assert "firmware" not in template(m)["domain"]


def test_vm_without_device_settings_gets_no_preference():
    original = vm("tiny", {"domain": {"memory": {"guest": "2Gi"}, "devices": {}}})
    m = migrate(original)
    assert names(m) == ("u1.small", None)
    assert_reproduces(original, m)
    assert "preference" not in m.vm["spec"]
    assert [str(c) for c in m.changes] == [
        "spec.template.spec.domain.memory: provided by virtualmachineclusterinstancetype/u1.small"]


def test_instancetype_annotations_in_the_template_move_too():
    original = vm("nfv", {"domain": {
        "cpu": {"sockets": 4, "cores": 1, "threads": 1, "dedicatedCpuPlacement": True,
                "isolateEmulatorThread": True},
        "memory": {"guest": "4Gi", "hugepages": {"pageSize": "1Gi"}}, "devices": {}}})
    original["spec"]["template"]["metadata"]["annotations"] = {
        "cpu-load-balancing.crio.io": "disable", "cpu-quota.crio.io": "disable",
        "irq-load-balancing.crio.io": "disable", "team": "nfv"}
    m = migrate(original)
    assert names(m)[0] == "n1.medium"
    assert_reproduces(original, m)
    assert m.vm["spec"]["template"]["metadata"]["annotations"] == {"team": "nfv"}


def test_own_lists_of_namespaced_objects_and_deprecated_types_rank_last():
    original = fedora_vm()
    m = migrate(original, instancetypes=catalog.instancetypes(namespaced=True),
                preferences=catalog.preferences(namespaced=True))
    # server.medium (deprecated) is the same size as u1.medium: the current one wins
    assert m.vm["spec"]["instancetype"] == {"kind": "VirtualMachineInstancetype", "name": "u1.medium"}
    assert m.vm["spec"]["preference"] == {"kind": "VirtualMachinePreference", "name": "fedora"}
    before = instancetype.build_vmi(original)
    after = instancetype.build_vmi(m.vm, objects=catalog.all_objects())
    for key in ("kubevirt.io/instancetype-name", "kubevirt.io/preference-name", "vm.kubevirt.io/os"):
        del after["metadata"]["annotations"][key]
    assert after == before


def test_the_argument_is_not_mutated_and_results_are_deterministic():
    original = windows_vm()
    snapshot = copy.deepcopy(original)
    first = migrate(original)
    assert original == snapshot
    second = migrate(original)
    assert first.vm == second.vm and first.changes == second.changes
    first.vm["spec"]["template"]["spec"]["domain"]["devices"]["disks"].clear()
    assert original == snapshot


# --- refusals ----------------------------------------------------------------------------------
def test_no_instancetype_of_that_size():
    original = vm("odd", {"domain": {"cpu": {"sockets": 3}, "memory": {"guest": "5Gi"}, "devices": {}}})
    with pytest.raises(MigrationError, match="no catalogue instancetype has 3 vCPUs and 5Gi of guest memory"):
        migrate(original)


def test_same_size_but_different_features_names_the_difference():
    original = vm("half", {"domain": {"cpu": {"dedicatedCpuPlacement": True}, "memory": {"guest": "4Gi"},
                                      "devices": {}}})
    with pytest.raises(MigrationError) as err:
        migrate(original)
    msg = str(err.value)
    assert msg.startswith("no catalogue instancetype has 1 vCPU and 4Gi of guest memory with dedicated CPUs")
    assert "d1.medium differs in an isolated emulator thread" in msg


def test_partial_topology_cannot_be_reproduced():
    # `cores: 2` alone leaves sockets and threads unset in the VMI; an instancetype sets all three
    original = vm("cores", {"domain": {"cpu": {"cores": 2}, "memory": {"guest": "8Gi"}, "devices": {}}})
    with pytest.raises(MigrationError) as err:
        migrate(original)
    msg = str(err.value)
    assert "virtualmachineclusterinstancetype/u1.large" in msg
    assert "spec.domain.cpu.sockets would be 2, not unset" in msg


def test_memory_as_a_request_cannot_be_reproduced():
    original = vm("req", {"domain": {"resources": {"requests": {"memory": "4Gi"}}, "devices": {}}})
    with pytest.raises(MigrationError) as err:
        migrate(original)
    assert 'spec.domain.resources.requests would be unset, not {"memory":"4Gi"}' in str(err.value)


def test_not_a_virtual_machine_or_already_migrated():
    with pytest.raises(MigrationError, match="expected a VirtualMachine, got VirtualMachinePreference"):
        migrate({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
                 "metadata": {"name": "x"}, "spec": {}})
    with pytest.raises(MigrationError, match="spec.template.spec"):
        migrate(builders.vm_object("x", namespace=None))
    done = fedora_vm()
    done["spec"]["instancetype"] = {"kind": "VirtualMachineClusterInstancetype", "name": "u1.medium"}
    with pytest.raises(MigrationError, match="already references instancetype 'u1.medium'"):
        migrate(done)


def test_a_vm_that_does_not_start_is_refused_with_the_reason():
    original = vm("slirp", {"domain": {"memory": {"guest": "4Gi"}, "devices": {}}})
    with pytest.raises(MigrationError, match="does not start as it is: slirp interface is deprecated"):
        migrate(original, config={"network": {"defaultNetworkInterface": "slirp"}})


def test_badly_typed_vm_raises_an_instancetype_error():
    original = vm("bad", {"domain": {"memory": {"guest": "lots"}, "devices": {}}})
    with pytest.raises(instancetype.Error):
        migrate(original)


# --- every catalogue pair, expanded into a legacy VM, migrates back ------------------------------
def _legacy_from_pair(it: dict, pref: dict | None, rng: random.Random) -> dict:
    devices: dict = {"disks": [{"name": "root"}]}
    spec: dict = {"domain": {"devices": devices},
                  "volumes": [{"name": "root", "containerDisk": {"image": "quay.io/containerdisks/x:1"}}]}
    if rng.random() < 0.6:
        devices["interfaces"] = [{"name": "default", "masquerade": {}}]
        spec["networks"] = [{"name": "default", "pod": {}}]
    if rng.random() < 0.3:
        devices["inputs"] = [{"name": "tablet", "type": "tablet"}]
    if rng.random() < 0.2:
        spec["domain"]["features"] = {"smm": {"enabled": False}}
    if rng.random() < 0.2:
        spec["terminationGracePeriodSeconds"] = 30
    matchers = {"instancetype": {"kind": it["kind"], "name": it["metadata"]["name"]}}
    if pref is not None:
        matchers["preference"] = {"kind": pref["kind"], "name": pref["metadata"]["name"]}
    return instancetype.expand(vm("sweep", spec, **matchers), objects=CATALOGUE)


def test_expanded_catalogue_pairs_migrate_back_with_an_equal_vmi():
    rng = random.Random(20240611)
    its = catalog.instancetypes(deprecated=False)
    prefs = catalog.preferences() + [None]
    migrated = refused = 0
    for _ in range(250):
        it, pref = rng.choice(its), rng.choice(prefs)
        try:
            legacy = _legacy_from_pair(it, pref, rng)
            instancetype.build_vmi(legacy)
        except instancetype.Error:
            continue   # a pair KubeVirt itself refuses
        try:
            m = migrate(legacy)
        except MigrationError as e:
            # only VMs whose vCPU topology no instancetype gives (spread preferences'
            # topologies multiply the instancetype's vCPUs) may be refused
            assert "no catalogue instancetype has" in str(e)
            refused += 1
            continue
        assert_reproduces(legacy, m)
        assert "instancetype" in m.vm["spec"]
        migrated += 1
    assert migrated > 200 and refused < 25

