"""The simulated CDI (controller/cdi.py) and handleDataVolumes' edges, on the embedded store (the
cluster runs the same code from its informers: tests/controller/test_datavolumes.py shows both).
Each source CDI v1.64 knows, present and missing; a Halted VM; `immediate-data-volume-creation:
"false"`; a DataVolume deleted by hand; a DataSource that resolves to nothing; a failed
DataVolume as v1.9's printable status reads it."""
from __future__ import annotations

import pytest

from instancetype.controller import Cluster
from instancetype.controller.cdi import sync
from instancetype.store.base import NotFound


@pytest.fixture
def cluster(tmp_path):
    with Cluster.open(str(tmp_path / "state.db")) as c:
        yield c


def _vm(name: str = "vm1", *, strategy: str = "Always", annotations: dict | None = None, **dv_spec) -> dict:
    meta: dict = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": meta, "spec": {
        "runStrategy": strategy,
        "dataVolumeTemplates": [{"metadata": {"name": "disk", "labels": {"team": "a"}},
                                 "spec": {"storage": {"resources": {"requests": {"storage": "2Gi"}}}, **dv_spec}}],
        "template": {"spec": {"priorityClassName": "high", "domain": {"devices": {}, "memory": {"guest": "512Mi"}},
                              "volumes": [{"name": "disk", "dataVolume": {"name": "disk"}}]}}}}


def _get(cluster, kind: str, name: str) -> dict | None:
    try:
        return cluster.get(kind, name)
    except NotFound:
        return None


def _reasons(obj: dict) -> dict:
    return {c["type"]: (c["status"], c.get("reason", "")) for c in (obj.get("status") or {}).get("conditions") or ()}


@pytest.mark.parametrize("source", [{"blank": {}}, {"http": {"url": "https://example.com/disk.img"}},
                                    {"registry": {"url": "docker://quay.io/containerdisks/fedora:41"}},
                                    {"s3": {"url": "s3://bucket/disk"}}])
def test_an_import_is_filled_at_once_and_the_vm_starts(cluster, source):
    cluster.apply(_vm(source=source))
    dv = cluster.get("DataVolume", "disk")
    assert dv["spec"]["source"] == source and dv["spec"]["priorityClassName"] == "high"
    assert dv["metadata"]["labels"]["team"] == "a"
    assert (dv["status"]["phase"], dv["status"]["progress"]) == ("Succeeded", "100.0%")
    assert _reasons(dv) == {"Bound": ("True", "Bound"), "Ready": ("True", ""), "Running": ("False", "Completed")}
    assert dv["status"]["conditions"][2]["message"] == "Import Complete"
    pvc = cluster.get("PersistentVolumeClaim", "disk")
    assert pvc["spec"]["resources"]["requests"]["storage"] == "2Gi" and pvc["status"]["phase"] == "Bound"
    assert pvc["metadata"]["labels"]["app"] == "containerized-data-importer"
    assert cluster.get("VirtualMachine", "vm1")["status"]["printableStatus"] == "Running"


@pytest.mark.parametrize("kind", ["pvc", "snapshot"])
def test_a_clone_waits_for_its_source_then_completes(cluster, kind):
    cluster.apply(_vm(source={kind: {"name": "golden", "namespace": "default"}}))
    dv = cluster.get("DataVolume", "disk")
    assert dv["spec"]["source"] == {kind: {"name": "golden", "namespace": "default"}}
    assert dv["status"]["phase"] == "Pending"
    assert _reasons(dv)["Bound"] == ("False", "CloneWithoutSource")
    assert dv["status"]["conditions"][0]["message"] == f"The source {kind} golden doesn't exist"
    assert _get(cluster, "VirtualMachineInstance", "vm1") is None
    assert cluster.get("VirtualMachine", "vm1")["status"]["printableStatus"] == "Provisioning"
    if kind == "pvc":
        cluster.apply({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": {"name": "golden"},
                       "spec": {"source": {"blank": {}}, "storage": {"resources": {"requests": {"storage": "3Gi"}}}}})
    else:
        cluster.apply({"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshot",
                       "metadata": {"name": "golden"}, "spec": {"source": {"persistentVolumeClaimName": "x"}}})
    dv = cluster.get("DataVolume", "disk")
    assert dv["status"]["phase"] == "Succeeded"
    assert dv["status"]["conditions"][2]["message"] == "Clone Complete"
    assert cluster.get("VirtualMachineInstance", "vm1")["status"]["phase"] == "Running"


def test_an_unbound_source_claim_leaves_the_clone_scheduled(cluster):
    cluster.apply({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "golden"},
                   "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    cluster.apply(_vm(source={"pvc": {"name": "golden", "namespace": "default"}}))
    assert cluster.get("DataVolume", "disk")["status"]["phase"] == "CloneScheduled"
    assert _get(cluster, "VirtualMachineInstance", "vm1") is None


def test_a_halted_vm_gets_its_datavolumes_and_starts_on_request(cluster):
    """v1.9 creates the DataVolumes whatever the run strategy ("preserving legacy behavior")."""
    cluster.apply(_vm(strategy="Halted", source={"blank": {}}))
    assert cluster.get("DataVolume", "disk")["status"]["phase"] == "Succeeded"
    assert _get(cluster, "VirtualMachineInstance", "vm1") is None
    cluster.start("vm1")
    assert cluster.get("VirtualMachineInstance", "vm1")["status"]["phase"] == "Running"


def test_without_immediate_creation_the_datavolumes_come_with_the_start(cluster):
    cluster.apply(_vm(strategy="Halted", source={"blank": {}},
                      annotations={"kubevirt.io/immediate-data-volume-creation": "false"}))
    assert _get(cluster, "DataVolume", "disk") is None
    cluster.start("vm1")
    assert cluster.get("DataVolume", "disk")["status"]["phase"] == "Succeeded"
    assert cluster.get("VirtualMachine", "vm1")["status"]["printableStatus"] == "Running"


def test_a_datavolume_deleted_by_hand_is_created_again(cluster):
    cluster.apply(_vm(source={"blank": {}}))
    uid = cluster.get("DataVolume", "disk")["metadata"]["uid"]
    cluster.delete("DataVolume", "disk")
    dv = cluster.get("DataVolume", "disk")
    assert dv["metadata"]["uid"] != uid and dv["status"]["phase"] == "Succeeded"
    assert cluster.get("PersistentVolumeClaim", "disk")["metadata"]["ownerReferences"][0]["uid"] == dv["metadata"]["uid"]


def test_a_datasource_without_a_claim_or_snapshot_is_not_supported(cluster):
    cluster.apply({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataSource", "metadata": {"name": "empty"},
                   "spec": {"source": {}}})
    cluster.apply(_vm(sourceRef={"kind": "DataSource", "name": "empty"}))
    failure = next(c for c in cluster.get("VirtualMachine", "vm1")["status"]["conditions"] if c["type"] == "Failure")
    assert (failure["reason"], failure["message"]) == (
        "FailedCreate", "Error encountered while creating DataVolumes: DataVolume sourceRef not supported")
    assert _get(cluster, "DataVolume", "disk") is None


def test_a_failed_datavolume_is_a_datavolume_error(cluster):
    """CDI's failures are not simulated; one written as CDI writes it is read as v1.9 reads it."""
    cluster.apply(_vm(source={"pvc": {"name": "golden", "namespace": "default"}}))
    dv = cluster.get("DataVolume", "disk")
    dv["status"] = {**dv["status"], "phase": "Failed"}
    with cluster.store.transaction() as tx:
        tx.update(dv, subresource="status")
        cluster._storage_pass(tx, tx.resource_version() - 1, None)
    assert cluster.get("VirtualMachine", "vm1")["status"]["printableStatus"] == "DataVolumeError"
    assert _get(cluster, "VirtualMachineInstance", "vm1") is None


def test_an_existing_claim_is_adopted(cluster):
    """`allowClaimAdoption`: a Bound claim of the template's name becomes the DataVolume's."""
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "disk"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    with cluster.store.transaction() as tx:
        stored = tx.create(claim)
        stored["status"] = {"phase": "Bound"}
        tx.update(stored, subresource="status")
    cluster.apply(_vm(source={"blank": {}}))
    dv = cluster.get("DataVolume", "disk")
    assert dv["status"]["phase"] == "Succeeded"
    pvc = cluster.get("PersistentVolumeClaim", "disk")
    assert pvc["metadata"]["uid"] == stored["metadata"]["uid"]
    assert pvc["metadata"]["ownerReferences"][0]["uid"] == dv["metadata"]["uid"]
    assert sync(cluster.store, dv) is None      # nothing more to do


def test_a_datavolume_of_its_own_with_a_sourceref(cluster):
    """A DataVolume made by hand keeps its `sourceRef`: CDI resolves the DataSource itself (none
    yet: CDI's no-op, no status), then clones its claim."""
    dv = {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": {"name": "mine"},
          "spec": {"sourceRef": {"kind": "DataSource", "name": "golden"},
                   "storage": {"resources": {"requests": {"storage": "1Gi"}}}}}
    assert "status" not in cluster.apply(dv).object
    cluster.apply({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataSource", "metadata": {"name": "golden"},
                   "spec": {"source": {"pvc": {"name": "golden", "namespace": "default"}}}})
    assert cluster.get("DataVolume", "mine")["status"]["phase"] == "Pending"
    cluster.apply({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": {"name": "golden"},
                   "spec": {"source": {"blank": {}}, "storage": {"resources": {"requests": {"storage": "3Gi"}}}}})
    mine = cluster.get("DataVolume", "mine")
    assert mine["spec"]["sourceRef"] == {"kind": "DataSource", "name": "golden"}
    assert mine["status"]["phase"] == "Succeeded"
