"""Live update of a running VM (controller/vmsync/live_update.py, controller/hotplug.py), after
KubeVirt's tests/hotplug/instancetype.go, cpu.go and memory.go, on both stores."""
from __future__ import annotations

import pytest

from tests import builders
from tests.controller.day2_helpers import (
    BIG,
    SMALL,
    conditions,
    edit,
    kubevirt,
    live_migrate,
    restart_required,
    switch_instancetype,
    template,
    vm,
)


@pytest.fixture
def cluster(any_cluster):
    return any_cluster


def _vmi(cluster):
    return cluster.get("VirtualMachineInstance", "vm1")


def test_should_plug_extra_resources_from_new_instance_type(cluster):
    """instancetype.go: a running VM switched to a bigger instancetype: the new type pinned at
    once, sockets and guest memory hot-plugged, the migration completed by the simulated node."""
    live_migrate(cluster)
    cluster.apply(SMALL), cluster.apply(BIG), cluster.apply(vm())
    before = _vmi(cluster)
    assert before["spec"]["domain"]["cpu"]["maxSockets"] == 4 and before["spec"]["domain"]["memory"]["maxGuest"] == "4Gi"
    stored = switch_instancetype(cluster, "vm1", "big")
    pinned = stored["spec"]["instancetype"]["revisionName"]          # item 1: pinned at once
    assert pinned.startswith("vm1-big-")
    assert stored["status"]["instancetypeRef"]["controllerRevisionRef"]["name"] == pinned
    vmi = _vmi(cluster)
    assert vmi["metadata"]["uid"] == before["metadata"]["uid"]      # the same VMI, changed live
    assert vmi["spec"]["domain"]["cpu"]["sockets"] == 2 and vmi["spec"]["domain"]["memory"]["guest"] == "2Gi"
    assert vmi["status"]["currentCPUTopology"] == {"sockets": 2, "cores": 1, "threads": 1}
    assert vmi["status"]["memory"] == {"guestAtBoot": "1Gi", "guestCurrent": "2Gi", "guestRequested": "2Gi"}
    assert vmi["status"]["migrationState"]["completed"] is True
    assert not {"HotVCPUChange", "HotMemoryChange"} & set(conditions(vmi))
    assert restart_required(cluster) is None
    # the workload updater's VirtualMachineInstanceMigration, carried out by the simulated node
    [migration] = list(cluster.list("VirtualMachineInstanceMigration"))
    meta = migration["metadata"]
    assert meta["name"].startswith("kubevirt-workload-update-")
    assert meta["annotations"] == {"kubevirt.io/workloadUpdateMigration": ""}
    assert meta["labels"] == {"kubevirt.io/vmi-name": "vm1"}
    assert not meta.get("finalizers") and "ownerReferences" not in meta
    assert migration["spec"] == {"vmiName": "vm1", "priority": "user-triggered"}
    assert migration["status"]["phase"] == "Succeeded"
    assert [p["phase"] for p in migration["status"]["phaseTransitionTimestamps"]] == [
        "Pending", "Scheduling", "Scheduled", "PreparingTarget", "TargetReady", "Running", "Succeeded"]
    assert migration["status"]["migrationState"] == vmi["status"]["migrationState"]
    assert vmi["status"]["migrationState"]["migrationUid"] == meta["uid"]
    assert conditions(vmi)["LiveMigratable"]["status"] == "True"


def test_finished_migrations_are_kept_five_per_vmi(cluster):
    """garbageCollectFinalizedMigrations: six live updates, the five newest migrations kept; the
    VMI's deletion leaves them (they have no owner)."""
    live_migrate(cluster)
    cluster.apply(_plain_vm(_cpu(1, max_sockets=8), "1Gi"))
    names = []
    for sockets in range(2, 8):
        edit(cluster, "vm1", _set({("cpu", "sockets"): sockets}))
        assert _vmi(cluster)["status"]["currentCPUTopology"]["sockets"] == sockets
        names.append(_vmi(cluster)["status"]["migrationState"]["migrationUid"])
    kept = {m["metadata"]["uid"] for m in cluster.list("VirtualMachineInstanceMigration")}
    assert kept == set(names[1:])
    cluster.stop("vm1")
    assert {m["metadata"]["uid"] for m in cluster.list("VirtualMachineInstanceMigration")} == kept


def test_without_live_migrate_the_hotplug_conditions_stay(cluster):
    """No LiveMigrate workload update: the VMI is patched and waits, its conditions True."""
    cluster.apply(SMALL), cluster.apply(BIG), cluster.apply(vm())
    switch_instancetype(cluster, "vm1", "big")
    vmi = _vmi(cluster)
    assert vmi["spec"]["domain"]["cpu"]["sockets"] == 2
    assert conditions(vmi)["HotVCPUChange"]["status"] == "True"
    assert conditions(vmi)["HotMemoryChange"]["status"] == "True"
    assert vmi["status"]["currentCPUTopology"]["sockets"] == 1 and "migrationState" not in vmi["status"]
    assert conditions(cluster.get("VirtualMachine", "vm1"))["HotVCPUChange"]["status"] == "True"


def test_stage_rollout_needs_a_restart(cluster):
    kubevirt(cluster, configuration={"vmRolloutStrategy": "Stage"})
    cluster.apply(SMALL), cluster.apply(BIG), cluster.apply(vm())
    switch_instancetype(cluster, "vm1", "big")
    assert restart_required(cluster) == "a non-live-updatable field was changed in the template spec"
    assert _vmi(cluster)["spec"]["domain"]["cpu"]["sockets"] == 1
    cluster.restart("vm1")
    assert restart_required(cluster) is None
    assert _vmi(cluster)["spec"]["domain"]["cpu"]["sockets"] == 2


def _cpu(sockets, max_sockets=None):
    cpu = {"sockets": sockets, "cores": 1, "threads": 1}
    if max_sockets is not None:
        cpu["maxSockets"] = max_sockets
    return cpu


def _plain_vm(cpu, memory):
    spec = {"domain": {"cpu": cpu, "memory": {"guest": memory},
                       "devices": {"interfaces": [{"name": "default", "masquerade": {}}]}},
            "networks": [{"name": "default", "pod": {}}],
            "volumes": [{"name": "containerdisk", "containerDisk": {"image": "cirros"}}]}
    return builders.vm("vm1", spec, namespace=None, runStrategy="Always")


def _set(path_value):
    def change(obj):
        domain = template(obj)["domain"]
        for (section, key), value in path_value.items():
            domain[section][key] = value
    return change


@pytest.mark.parametrize(("change", "message"), [
    ({("cpu", "sockets"): 3}, None),
    ({("cpu", "sockets"): 9}, "CPU sockets updated in template spec to a value higher than what's available"),
    ({("memory", "guest"): "3Gi"}, None),
    ({("memory", "guest"): "512Mi"}, "memory hotplug not supported, Memory hotplug is only available for VMs "
                                     "with at least 1Gi of guest memory"),
    ({("memory", "guest"): "9Gi"}, "memory hotplug not supported, Guest memory is greater than the configured "
                                   "maxGuest memory"),
])
def test_cpu_and_memory_hotplug_from_the_template(cluster, change, message):
    """cpu.go and memory.go: sockets and guest memory changed in the template (maxSockets 8 and
    maxGuest 8Gi derived by maxHotplugRatio 4)."""
    live_migrate(cluster)
    cluster.apply(_plain_vm(_cpu(2), "2Gi"))
    edit(cluster, "vm1", _set(change))
    assert restart_required(cluster) == message
    vmi = _vmi(cluster)
    if message is None:
        (section, key), value = next(iter(change.items()))
        assert vmi["spec"]["domain"][section][key] == value
        assert "HotVCPUChange" not in conditions(vmi) and vmi["status"]["migrationState"]["completed"]


def test_a_socket_reduction_needs_a_restart(cluster):
    cluster.apply(_plain_vm(_cpu(2, 4), "2Gi"))
    edit(cluster, "vm1", _set({("cpu", "sockets"): 1}))
    assert restart_required(cluster) == "Reduction of CPU socket count requires a restart"
    cluster.restart("vm1")
    assert restart_required(cluster) is None and _vmi(cluster)["spec"]["domain"]["cpu"]["sockets"] == 1


def test_memory_without_max_guest_needs_a_restart(cluster):
    """A guest of 128Mi gets no maxGuest (ValidateLiveUpdateMemory refuses it at the start)."""
    cluster.apply(_plain_vm(_cpu(1), "128Mi"))
    assert "maxGuest" not in _vmi(cluster)["spec"]["domain"]["memory"]
    edit(cluster, "vm1", _set({("memory", "guest"): "256Mi"}))
    assert restart_required(cluster) == ("memory updated in template spec. Memory-hotplug is not available for "
                                         "this VM configuration")


def test_memory_of_a_vm_that_cannot_migrate_needs_a_restart(cluster):
    """A bridge binding on the pod network is not live-migratable."""
    obj = _plain_vm(_cpu(1), "1Gi")
    template(obj)["domain"]["devices"]["interfaces"] = [{"name": "default", "bridge": {}}]
    cluster.apply(obj)
    edit(cluster, "vm1", _set({("memory", "guest"): "2Gi"}))
    assert restart_required(cluster) == ("memory updated in template spec. Memory-hotplug is only available for "
                                         "migratable VMs")
    live = conditions(_vmi(cluster))["LiveMigratable"]
    assert (live["status"], live["reason"]) == ("False", "InterfaceNotLiveMigratable")
    assert not list(cluster.list("VirtualMachineInstanceMigration"))


def test_max_sockets_and_max_guest_from_the_live_update_configuration(cluster):
    """liveUpdateConfiguration's maxCpuSockets and maxGuest, else maxHotplugRatio."""
    kubevirt(cluster, configuration={"liveUpdateConfiguration": {"maxCpuSockets": 6, "maxGuest": "8Gi"}})
    cluster.apply(_plain_vm(_cpu(1), "1Gi"))
    domain = _vmi(cluster)["spec"]["domain"]
    assert (domain["cpu"]["maxSockets"], domain["memory"]["maxGuest"]) == (6, "8Gi")
    cluster.delete("VirtualMachine", "vm1")
    kubevirt(cluster, configuration={"liveUpdateConfiguration": {"maxHotplugRatio": 2}})
    cluster.apply(_plain_vm(_cpu(2), "1Gi"))
    domain = _vmi(cluster)["spec"]["domain"]
    assert (domain["cpu"]["maxSockets"], domain["memory"]["maxGuest"]) == (4, "2Gi")


def test_reverting_a_live_update_is_a_reduction(cluster):
    """The VMI keeps the sockets it was given live: going back is a reduction, needing a restart."""
    live_migrate(cluster)
    cluster.apply(_plain_vm(_cpu(2), "2Gi"))
    edit(cluster, "vm1", _set({("cpu", "sockets"): 3}))
    edit(cluster, "vm1", _set({("cpu", "sockets"): 2}))
    assert restart_required(cluster) == "Reduction of CPU socket count requires a restart"
