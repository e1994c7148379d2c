"""The one reader of the cluster's KubeVirt configuration (store/kubevirt.py), and every former
copy now answering through it. The cases are those where the five old readers disagreed: a second
KubeVirt object listed before `kubevirt/kubevirt`, a KubeVirt outside the install namespace, one
being deleted, a cluster that serves no KubeVirt kind."""
from __future__ import annotations

import pytest

from instancetype.controller import Cluster
from instancetype.controller.runner import VMController
from instancetype.controller.shared_revisions import enabled as shared_enabled
from instancetype.engine.shared_revisions import ANNOTATION_SHARED_REVISIONS
from instancetype.lifecycle.catalog_sync import _config as catalog_config
from instancetype.store.base import NotFound
from instancetype.store.kubevirt import choose_kubevirt, kubevirt_config, kubevirt_object


def kubevirt(name: str, namespace: str = "kubevirt", configuration: dict | None = None, **meta) -> dict:
    return {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": name, "namespace": namespace, **meta},
            "spec": {} if configuration is None else {"configuration": configuration}}


REAL = {"developerConfiguration": {"featureGates": ["Real"]}}
OTHER = {"developerConfiguration": {"featureGates": ["Other"]}}


def test_kubevirt_kubevirt_wins_over_one_listed_before_it():
    # (three old readers took the first one listed: `a-first`)
    assert choose_kubevirt([kubevirt("a-first", configuration=OTHER), kubevirt("kubevirt", configuration=REAL)]
                           )["metadata"]["name"] == "kubevirt"


def test_without_kubevirt_kubevirt_the_first_other_by_name():
    chosen = choose_kubevirt([kubevirt("zz"), kubevirt("b"), kubevirt("c")])
    assert chosen["metadata"]["name"] == "b"


def test_only_the_install_namespace_counts():
    # (four old readers read a KubeVirt of any namespace)
    assert choose_kubevirt([kubevirt("kubevirt", namespace="default", configuration=OTHER)]) is None


def test_one_being_deleted_counts_for_nothing():
    deleting = kubevirt("kubevirt", configuration=OTHER, deletionTimestamp="2026-01-01T00:00:00Z")
    assert choose_kubevirt([deleting]) is None
    assert choose_kubevirt([deleting, kubevirt("other", configuration=REAL)])["metadata"]["name"] == "other"


class NoKubeVirtKind:
    """A cluster without KubeVirt's CRDs: the list is refused (lazily, as KubeStore's pages are)."""

    def list(self, kind, namespace=None):
        raise NotFound('the server could not find the requested resource (get kubevirts.kubevirt.io)')
        yield


def test_a_cluster_without_the_kind_is_all_defaults():
    assert kubevirt_object(NoKubeVirtKind()) is None and kubevirt_config(NoKubeVirtKind()) is None


def test_an_object_without_configuration_is_an_empty_one():
    class One:
        def list(self, kind, namespace=None):
            return iter([kubevirt("kubevirt")])
    assert kubevirt_config(One()) == {}


@pytest.fixture
def cluster(tmp_path):
    with Cluster.open(str(tmp_path / "state.db"), catalog=False) as c:
        yield c


def test_every_reader_answers_the_same_on_the_embedded_store(cluster):
    """Cluster.config, the cluster controller's config, the catalogue sync's and the shared-revisions
    switch read `kubevirt/kubevirt`, though `a-first` (same namespace) and `default/kubevirt` list
    before it."""
    kv = cluster.get("KubeVirt", "kubevirt", "kubevirt")
    kv["spec"]["configuration"] = REAL
    kv["metadata"]["annotations"] = {ANNOTATION_SHARED_REVISIONS: "true"}
    cluster.update(kv)
    cluster.create(kubevirt("a-first", configuration=OTHER))
    cluster.create(kubevirt("kubevirt", namespace="default", configuration=OTHER))
    listed = [(k["metadata"]["namespace"], k["metadata"]["name"]) for k in cluster.list("KubeVirt")]
    assert listed == [("default", "kubevirt"), ("kubevirt", "a-first"), ("kubevirt", "kubevirt")]
    assert cluster.config() == REAL
    assert VMController(cluster.store).config() == REAL
    assert catalog_config(cluster.store)[0] == REAL
    assert shared_enabled(cluster.store) is True
