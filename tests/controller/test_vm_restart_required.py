"""RestartRequired as KubeVirt v1.9's syncRestartRequired gives it (controller/vmsync/
restart_required.py), and the preference requirements checked on every update, on both stores."""
from __future__ import annotations

import pytest

from instancetype.lifecycle.admission import Refused
from tests import builders
from tests.controller.day2_helpers import BIG, SMALL, edit, restart_required, template, vm

NON_LIVE = "a non-live-updatable field was changed in the template spec"


@pytest.fixture
def cluster(any_cluster):
    cluster = any_cluster
    cluster.apply(SMALL), cluster.apply(BIG), cluster.apply(vm())
    return cluster


def _firmware_serial(value):
    def change(obj):
        if value is None:
            template(obj)["domain"].pop("firmware", None)
        else:
            template(obj)["domain"]["firmware"] = {"serial": value}
    return change


def test_a_template_change_needs_a_restart_and_reverting_it_clears_it(cluster):
    edit(cluster, "vm1", _firmware_serial("abc"))
    assert restart_required(cluster) == NON_LIVE
    edit(cluster, "vm1", _firmware_serial(None))
    assert restart_required(cluster) is None


def test_a_disk_bus_change_needs_a_restart(cluster):
    def sata(obj):
        template(obj)["domain"]["devices"]["disks"] = [{"name": "containerdisk", "disk": {"bus": "sata"}}]
    edit(cluster, "vm1", sata)
    assert restart_required(cluster) == NON_LIVE


@pytest.mark.parametrize("how", ["stop", "restart"])
def test_stop_and_restart_remove_it(cluster, how):
    edit(cluster, "vm1", _firmware_serial("abc"))
    getattr(cluster, how)("vm1")
    assert restart_required(cluster) is None
    if how == "stop":
        cluster.start("vm1")
        assert restart_required(cluster) is None
    assert cluster.get("VirtualMachineInstance", "vm1")["spec"]["domain"]["firmware"]["serial"] == "abc"


def test_an_instancetype_adding_dedicated_cpus_needs_a_restart(cluster):
    cluster.apply(builders.instancetype_obj("dedicated", cpu=2, memory="2Gi", spec={
        "cpu": {"guest": 2, "dedicatedCPUPlacement": True}, "memory": {"guest": "2Gi"}}))

    def switch(obj):
        obj["spec"]["instancetype"] = {"kind": "VirtualMachineInstancetype", "name": "dedicated"}
    edit(cluster, "vm1", switch)
    assert restart_required(cluster) == NON_LIVE


def test_preference_requirements_are_checked_on_every_update(cluster):
    """instancetype.go: "should reject live update when preference requirements are no longer met"."""
    cluster.apply(builders.preference_obj("needs1gi", {"requirements": {"memory": {"guest": "1Gi"}}}))
    plain = builders.vm("plain", {"domain": {"memory": {"guest": "1Gi"}, "devices": {}}}, namespace=None,
                        runStrategy="Always", preference={"kind": "VirtualMachinePreference", "name": "needs1gi"})
    cluster.apply(plain)

    def shrink(obj):
        template(obj)["domain"]["memory"]["guest"] = "512Mi"
    with pytest.raises(Exception) as e:
        edit(cluster, "plain", shrink)
    if cluster.store_name == "embedded":
        assert isinstance(e.value, Refused)
    assert ("failure checking preference requirements: insufficient Memory resources of 512Mi provided by "
            "VirtualMachine, preference requires 1Gi") in str(e.value)


def test_a_start_compares_against_the_start_revision_it_made_without_reading_it(tmp_path, monkeypatch):
    """The reconcile that starts a VM hands the start revision it created to the restart-required
    step (generation.start_spec's `started`): no read of it, the same answer."""
    from instancetype.controller import Cluster
    from instancetype.controller.vmsync import generation

    reads = []
    read = generation._read_start_spec
    monkeypatch.setattr(generation, "_read_start_spec", lambda *a: reads.append(a) or read(*a))
    with Cluster.open(str(tmp_path / "s.db"), catalog=False) as c:
        c.apply(SMALL), c.apply(BIG), c.apply(vm())
        assert c.get("VirtualMachineInstance", "vm1")["status"]["virtualMachineRevisionName"]
        assert reads == []
        assert restart_required(c) is None
        edit(c, "vm1", _firmware_serial("abc"))          # a later reconcile reads it
        assert reads and restart_required(c) == NON_LIVE
