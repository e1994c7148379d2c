"""Generations and the start revision as KubeVirt v1.9 keeps them (controller/vmsync/generation.py),
on both stores."""
from __future__ import annotations

import pytest

from tests.controller.day2_helpers import SMALL, edit, template, vm


@pytest.fixture
def cluster(any_cluster):
    any_cluster.apply(SMALL)
    return any_cluster


def _generations(cluster, name="vm1"):
    obj = cluster.get("VirtualMachine", name)
    status = obj.get("status") or {}
    return obj["metadata"]["generation"], status.get("desiredGeneration"), status.get("observedGeneration")


def test_the_vmi_names_its_start_revision_holding_the_spec_it_was_started_from(cluster):
    cluster.apply(vm())
    stored = cluster.get("VirtualMachine", "vm1")
    vmi = cluster.get("VirtualMachineInstance", "vm1")
    name = vmi["status"]["virtualMachineRevisionName"]
    assert name == f"revision-start-vm-{stored['metadata']['uid']}-{stored['metadata']['generation']}"
    cr = cluster.get("ControllerRevision", name)
    assert cr["revision"] == stored["metadata"]["generation"]
    assert cr["metadata"]["ownerReferences"][0]["uid"] == stored["metadata"]["uid"]
    assert cr["data"]["spec"]["instancetype"]["revisionName"] == stored["spec"]["instancetype"]["revisionName"]
    assert cr["data"]["spec"]["template"] == stored["spec"]["template"]
    assert vmi["metadata"]["annotations"]["kubevirt.io/vm-generation"] == str(stored["metadata"]["generation"])


def test_observed_generation_follows_the_vmi_only_while_it_matches_the_template(cluster):
    cluster.apply(vm())
    generation, desired, observed = _generations(cluster)
    assert desired == observed == generation
    edit(cluster, "vm1", lambda obj: template(obj)["domain"].update(firmware={"serial": "abc"}))
    assert _generations(cluster) == (generation + 1, generation + 1, generation)     # not reflected
    edit(cluster, "vm1", lambda obj: template(obj)["domain"].pop("firmware"))
    assert _generations(cluster) == (generation + 2, generation + 2, generation + 2)  # the same again
    cluster.restart("vm1")
    assert _generations(cluster)[2] == generation + 2


def test_a_stopped_vm_keeps_its_last_generations(cluster):
    cluster.apply(vm(strategy="Halted"))
    assert _generations(cluster) == (1, None, None)       # never started: none
    cluster.start("vm1")
    generation, desired, observed = _generations(cluster)
    assert desired == observed == generation
    cluster.stop("vm1")
    assert _generations(cluster) == (generation + 1, desired, observed)


def test_a_first_start_from_halted_changes_the_generation_once(cluster):
    """v1.9 pins in the status only: the start's run strategy change is the one spec change. The
    seeds' revisionName goes into the matchers in that same write."""
    cluster.apply(vm(strategy="Halted"))
    cluster.start("vm1")
    stored = cluster.get("VirtualMachine", "vm1")
    assert stored["spec"]["runStrategy"] == "Always"
    assert stored["spec"]["instancetype"]["revisionName"] == \
        stored["status"]["instancetypeRef"]["controllerRevisionRef"]["name"]
    assert _generations(cluster) == (2, 2, 2)
    cluster.apply(vm("vm2", strategy="Halted"))
    cluster.start("vm2", paused=True)         # the controller's Halted-to-Always change
    assert _generations(cluster, "vm2") == (2, 2, 2)


def test_a_restart_replaces_the_start_revision(cluster):
    cluster.apply(vm())
    first = cluster.get("VirtualMachineInstance", "vm1")["status"]["virtualMachineRevisionName"]
    edit(cluster, "vm1", lambda obj: template(obj)["domain"].update(firmware={"serial": "abc"}))
    cluster.restart("vm1")
    second = cluster.get("VirtualMachineInstance", "vm1")["status"]["virtualMachineRevisionName"]
    assert second != first
    names = [cr["metadata"]["name"] for cr in cluster.list("ControllerRevision")
             if cr["metadata"]["name"].startswith("revision-start-vm-")]
    assert names == [second]
