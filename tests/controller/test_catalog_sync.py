"""The catalogue kept as virt-operator keeps it: on the embedded store, and (`any_cluster`) on a
real API server where `install` deployed it and the VM controller keeps it."""
from __future__ import annotations

import pytest

from instancetype import catalog
from instancetype.controller import Cluster
from tests.builders import vm

CLUSTER_IT = "VirtualMachineClusterInstancetype"
CLUSTER_PREF = "VirtualMachineClusterPreference"


@pytest.fixture
def cluster(any_cluster):
    return any_cluster


def test_first_use_deploys_the_catalogue_with_operator_metadata(cluster):
    its = list(cluster.list(CLUSTER_IT))
    assert len(its) == len(catalog.instancetypes())
    assert len(list(cluster.list(CLUSTER_PREF))) == len(catalog.preferences())
    u1 = cluster.get(CLUSTER_IT, "u1.medium")
    labels = u1["metadata"]["labels"]
    assert labels["app.kubernetes.io/managed-by"] == "virt-operator"
    assert labels["instancetype.kubevirt.io/common-instancetypes-version"] == catalog.VERSION
    assert cluster.sync_catalog() == []


@pytest.mark.embedded_only(reason="on a cluster the controller restores an edit at once, as virt-operator "
                                   "(tests/kube/test_controller.py::test_the_controller_keeps_the_catalogue_as_virt_operator)")
def test_edits_are_restored_and_strays_pruned(cluster):
    u1 = cluster.get(CLUSTER_IT, "u1.medium")
    u1["spec"]["memory"]["guest"] = "1Gi"
    cluster.update(u1)
    stray = cluster.get(CLUSTER_IT, "u1.small")
    stray["metadata"] = {"name": "u1.gone", "labels": stray["metadata"]["labels"]}
    cluster.create(stray)
    dry = cluster.sync_catalog(dry_run=True)
    assert {(c.action, c.name) for c in dry} == {("configured", "u1.medium"), ("deleted", "u1.gone")}
    assert cluster.get(CLUSTER_IT, "u1.medium")["spec"]["memory"]["guest"] == "1Gi"
    cluster.sync_catalog()
    assert cluster.get(CLUSTER_IT, "u1.medium")["spec"]["memory"]["guest"] == "4Gi"
    assert "u1.gone" not in {o["metadata"]["name"] for o in cluster.list(CLUSTER_IT)}


def test_turning_deployment_off_removes_managed_objects_only(cluster):
    cluster.apply({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": CLUSTER_IT,
                   "metadata": {"name": "mine"}, "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}})
    kv = {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt", "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
          "spec": {"configuration": {"commonInstancetypesDeployment": {"enabled": False}}}}
    cluster.apply(kv)
    assert [o["metadata"]["name"] for o in cluster.list(CLUSTER_IT)] == ["mine"]
    assert list(cluster.list(CLUSTER_PREF)) == []
    kv["spec"]["configuration"]["commonInstancetypesDeployment"]["enabled"] = True
    cluster.apply(kv)
    assert len(list(cluster.list(CLUSTER_IT))) == len(catalog.instancetypes()) + 1


def test_reopening_does_not_redeploy(tmp_path):
    path = str(tmp_path / "state.db")
    with Cluster.open(path) as c:
        rv = c.store.resource_version()
    with Cluster.open(path) as c:
        assert c.store.resource_version() == rv


def test_a_vm_using_the_catalogue_starts(cluster):
    cluster.apply(vm("f", namespace=None, runStrategy="Always", instancetype={"name": "u1.medium"},
                     preference={"name": "fedora"}, domain={"devices": {}},
                     volumes=[{"name": "root", "containerDisk": {"image": "quay.io/containerdisks/fedora"}}]))
    vmi = cluster.get("VirtualMachineInstance", "f")
    assert vmi["spec"]["domain"]["memory"]["guest"] == "4Gi"
    assert vmi["metadata"]["annotations"]["kubevirt.io/cluster-instancetype-name"] == "u1.medium"
