"""The cluster end to end from Python: admission, revisions, run strategies, cascade, on both
stores (`any_cluster`: the embedded store, and a real API server with the VM controller)."""
from __future__ import annotations

import base64
import json

import pytest

from instancetype.controller import Cluster
from instancetype.lifecycle.admission import Refused
from instancetype.store.base import Conflict, Invalid, NotFound
from tests import builders

IT = builders.instancetype_obj("csmall", cpu=1, memory="128Mi")
PREF = builders.preference_obj("cirros", {"devices": {"preferredDiskBus": "virtio"}})


# A VM of the default namespace using IT and PREF, booting a container disk.
vm = builders.csmall_vm


def refused(action, name, message):
    """The virtctl request `action(name)` is a Conflict whose message holds `message`."""
    with pytest.raises(Conflict) as e:
        action(name)
    assert message in str(e.value)


@pytest.fixture
def cluster(any_cluster):
    return any_cluster


def test_apply_create_start_pins_revisions(cluster):
    assert cluster.apply(IT).action == "created"
    assert cluster.apply(PREF).action == "created"
    assert cluster.apply(vm()).action == "created"
    stored = cluster.get("VirtualMachine", "vm1")
    it_uid = cluster.get("VirtualMachineInstancetype", "csmall")["metadata"]["uid"]
    rev = stored["spec"]["instancetype"]["revisionName"]
    assert rev == f"vm1-csmall-{it_uid}-1"
    assert stored["status"]["instancetypeRef"]["controllerRevisionRef"]["name"] == rev
    assert stored["status"]["printableStatus"] == "Running"
    cr = cluster.get("ControllerRevision", rev)
    assert cr["data"]["spec"] == IT["spec"]
    assert cr["metadata"]["labels"]["instancetype.kubevirt.io/object-kind"] == "VirtualMachineInstancetype"
    vmi = cluster.get("VirtualMachineInstance", "vm1")
    assert vmi["status"]["phase"] == "Running" and "simulated" in vmi["status"]["nodeName"]
    assert vmi["spec"]["domain"]["memory"]["guest"] == "128Mi"


def test_reapply_is_unchanged_and_edit_is_configured(cluster):
    cluster.apply(IT)
    assert cluster.apply(IT).action == "unchanged"
    edited = json.loads(json.dumps(IT))
    edited["spec"]["memory"]["guest"] = "256Mi"
    assert cluster.apply(edited).action == "configured"


def test_pinned_across_edit_and_restart(cluster):
    cluster.apply(IT), cluster.apply(PREF), cluster.apply(vm())
    edited = json.loads(json.dumps(IT))
    edited["spec"]["memory"]["guest"] = "256Mi"
    cluster.apply(edited)
    cluster.restart("vm1")
    assert cluster.get("VirtualMachineInstance", "vm1")["spec"]["domain"]["memory"]["guest"] == "128Mi"
    # clearing revisionName takes a fresh copy at the next start
    stored = cluster.get("VirtualMachine", "vm1")
    del stored["spec"]["instancetype"]["revisionName"]
    cluster.update(stored)
    cluster.restart("vm1")
    stored = cluster.get("VirtualMachine", "vm1")
    assert stored["spec"]["instancetype"]["revisionName"].endswith("-2")
    assert cluster.get("VirtualMachineInstance", "vm1")["spec"]["domain"]["memory"]["guest"] == "256Mi"


def test_requirements_refusal_changes_nothing(cluster):
    cluster.apply(IT)
    pref = json.loads(json.dumps(PREF))
    pref["spec"]["requirements"] = {"memory": {"guest": "512Mi"}}
    cluster.apply(pref)
    # Refused by the webhook run inline, or the API server's 422 `admission webhook ... denied the request`
    with pytest.raises((Refused, Invalid)) as e:
        cluster.apply(vm())
    causes = e.value.result.causes if isinstance(e.value, Refused) else e.value.causes
    assert causes[0].message == ("failure checking preference requirements: insufficient Memory "
                                 "resources of 128Mi provided by instance type, preference requires 512Mi")
    assert causes[0].field == "spec.instancetype"
    with pytest.raises(NotFound):
        cluster.get("VirtualMachine", "vm1")


def test_run_strategies_and_virtctl_errors(cluster):
    cluster.apply(IT), cluster.apply(PREF)
    cluster.apply(vm("halted", "Halted"))
    assert cluster.get("VirtualMachine", "halted")["status"]["printableStatus"] == "Stopped"
    refused(cluster.stop, "halted", "VM is not running")
    refused(cluster.restart, "halted", "RunStategy Halted does not support manual restart requests")
    cluster.start("halted")
    assert cluster.get("VirtualMachine", "halted")["spec"]["runStrategy"] == "Always"
    assert cluster.get("VirtualMachineInstance", "halted")
    refused(cluster.start, "halted", 'virtualmachine.kubevirt.io "halted": VM is already running')
    cluster.stop("halted")
    assert cluster.get("VirtualMachine", "halted")["spec"]["runStrategy"] == "Halted"
    with pytest.raises(NotFound):
        cluster.get("VirtualMachineInstance", "halted")
    cluster.apply(vm("manual", "Manual"))
    with pytest.raises(NotFound):
        cluster.get("VirtualMachineInstance", "manual")
    cluster.start("manual")
    assert cluster.get("VirtualMachineInstance", "manual")
    cluster.stop("manual")
    assert cluster.get("VirtualMachine", "manual")["spec"]["runStrategy"] == "Manual"
    legacy = vm("legacy", running=True)
    del legacy["spec"]["runStrategy"]
    cluster.apply(legacy)
    assert cluster.get("VirtualMachineInstance", "legacy")
    cluster.stop("legacy")
    assert cluster.get("VirtualMachine", "legacy")["spec"]["running"] is False


def test_delete_vm_cascades_to_vmi_and_revisions(cluster):
    cluster.apply(IT), cluster.apply(PREF), cluster.apply(vm())
    assert len(list(cluster.list("ControllerRevision"))) == 2
    cluster.delete("VirtualMachine", "vm1")
    assert list(cluster.list("ControllerRevision")) == []
    assert list(cluster.list("VirtualMachineInstance")) == []


def test_missing_instancetype_fails_then_starts_when_created(cluster):
    cluster.apply(PREF)
    cluster.apply(vm())  # admitted, as KubeVirt admits it
    status = cluster.get("VirtualMachine", "vm1")["status"]
    assert status["printableStatus"] == "Stopped"
    failure = [c for c in status["conditions"] if c["type"] == "Failure"][0]
    assert failure["reason"] == "FailedFindInstancetype"
    assert 'virtualmachineinstancetypes.instancetype.kubevirt.io "csmall" not found' in failure["message"]
    cluster.apply(IT)
    assert cluster.get("VirtualMachine", "vm1")["status"]["printableStatus"] == "Running"


def test_existing_revision_with_other_content_is_an_error(cluster):
    cluster.apply(IT), cluster.apply(PREF)
    uid = cluster.get("VirtualMachineInstancetype", "csmall")["metadata"]["uid"]
    cluster.apply({"apiVersion": "apps/v1", "kind": "ControllerRevision",
                   "metadata": {"name": f"vm1-csmall-{uid}-1"},
                   "data": {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
                            "metadata": {"name": "csmall"},
                            "spec": {"cpu": {"guest": 4}, "memory": {"guest": "1Gi"}}}})
    cluster.apply(vm())
    status = cluster.get("VirtualMachine", "vm1")["status"]
    failure = [c for c in status["conditions"] if c["type"] == "Failure"][0]
    assert "found existing ControllerRevision with unexpected data" in failure["message"]


def test_old_spec_revision_payload_is_upgraded_to_a_new_revision(cluster):
    # pkg/instancetype/upgrade: a revision's data is immutable on an API server, so the old
    # payload is replaced by a brand-new revision, the VM re-pointed, the old one deleted.
    spec = base64.b64encode(json.dumps(IT["spec"]).encode()).decode()
    uid = "6709b990-f717-44fe-a8ff-cb441d20b904"
    name = f"vm1-csmall-{uid}-1"
    cluster.apply({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": name},
                   "data": {"apiVersion": "", "spec": spec}})
    cluster.apply(IT), cluster.apply(PREF)
    v = vm()
    v["spec"]["instancetype"]["revisionName"] = name
    cluster.apply(v)
    new = f"vm1-csmall-v1beta1-{uid}-1"
    stored = cluster.get("VirtualMachine", "vm1")
    assert stored["spec"]["instancetype"]["revisionName"] == new
    assert stored["status"]["instancetypeRef"]["controllerRevisionRef"] == {"name": new}
    cr = cluster.get("ControllerRevision", new)
    assert cr["metadata"]["labels"]["instancetype.kubevirt.io/object-version"] == "v1beta1"
    assert cr["metadata"]["ownerReferences"][0]["uid"] == stored["metadata"]["uid"]
    assert cr["data"]["apiVersion"] == "instancetype.kubevirt.io/v1beta1"
    with pytest.raises(NotFound):
        cluster.get("ControllerRevision", name)
    assert cluster.get("VirtualMachineInstance", "vm1")["spec"]["domain"]["memory"]["guest"] == "128Mi"


def test_v1alpha_objects_are_stored_as_v1beta1_with_a_warning(cluster):
    old = dict(IT, apiVersion="instancetype.kubevirt.io/v1alpha1")
    result = cluster.apply(old)
    assert result.warnings and "deprecated" in result.warnings[0]
    assert cluster.get("VirtualMachineInstancetype", "csmall")["apiVersion"] == "instancetype.kubevirt.io/v1beta1"
    assert cluster.apply(old).action == "unchanged"


def test_reference_policy_expand(cluster):
    cluster.apply({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                   "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
                   "spec": {"configuration": {"instancetype": {"referencePolicy": "expand"}}}})
    cluster.apply(IT), cluster.apply(PREF), cluster.apply(vm())
    stored = cluster.get("VirtualMachine", "vm1")
    assert "instancetype" not in stored["spec"] and "preference" not in stored["spec"]
    assert stored["spec"]["template"]["spec"]["domain"]["memory"]["guest"] == "128Mi"
    assert list(cluster.list("ControllerRevision")) == []
    assert cluster.get("VirtualMachineInstance", "vm1")


def test_rerun_on_failure_and_once(cluster):
    cluster.apply(IT), cluster.apply(PREF)
    cluster.apply(vm("rerun", "RerunOnFailure"))
    assert cluster.get("VirtualMachineInstance", "rerun")
    cluster.stop("rerun")
    with pytest.raises(NotFound):
        cluster.get("VirtualMachineInstance", "rerun")
    cluster.apply(vm("rerun", "RerunOnFailure"))  # unchanged: a stopped VM stays stopped
    with pytest.raises(NotFound):
        cluster.get("VirtualMachineInstance", "rerun")
    cluster.start("rerun")
    assert cluster.get("VirtualMachineInstance", "rerun")
    cluster.apply(vm("once", "Once"))
    assert cluster.get("VirtualMachineInstance", "once")
    refused(cluster.start, "once", "VM is already running")
    refused(cluster.restart, "once", "RunStategy Once does not support manual restart requests")
    cluster.stop("once")
    assert cluster.get("VirtualMachine", "once")["spec"]["runStrategy"] == "Halted"


def test_revision_name_in_the_spec_is_mirrored_into_status(cluster):
    cluster.apply(IT), cluster.apply(PREF), cluster.apply(vm())
    stored = cluster.get("VirtualMachine", "vm1")
    first = stored["spec"]["instancetype"]["revisionName"]
    # a second capture of the edited instancetype, made by another VM
    edited = json.loads(json.dumps(IT))
    edited["spec"]["cpu"]["guest"] = 2
    cluster.apply(edited)
    cluster.apply(vm("vm2"))
    second = cluster.get("VirtualMachine", "vm2")["spec"]["instancetype"]["revisionName"]
    assert second != first
    # pointing vm1 at it is mirrored at once, and its next start uses it
    stored["spec"]["instancetype"]["revisionName"] = second
    cluster.update(stored)
    assert cluster.get("VirtualMachine", "vm1")["status"]["instancetypeRef"]["controllerRevisionRef"]["name"] == second
    cluster.restart("vm1")
    assert cluster.get("VirtualMachineInstance", "vm1")["spec"]["domain"]["cpu"]["sockets"] * \
        cluster.get("VirtualMachineInstance", "vm1")["spec"]["domain"]["cpu"]["cores"] == 2


def test_reference_policy_expand_all_expands_pinned_vms_too(cluster):
    cluster.apply(IT), cluster.apply(PREF), cluster.apply(vm())
    assert len(list(cluster.list("ControllerRevision"))) == 2
    cluster.apply({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                   "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
                   "spec": {"configuration": {"instancetype": {"referencePolicy": "expandAll"}}}})
    stored = cluster.get("VirtualMachine", "vm1")
    assert "instancetype" not in stored["spec"]
    assert list(cluster.list("ControllerRevision")) == []


@pytest.mark.embedded_only(reason="uploaded images on disk are the embedded store's")
def test_deleting_a_datavolume_removes_its_pvc_and_uploaded_image(cluster):
    import io

    dv = cluster.create({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
                         "metadata": {"name": "disk"}, "spec": {}}).object
    pvc = cluster.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                          "metadata": {"name": "disk", "ownerReferences": [
                              {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "name": "disk",
                               "uid": dv["metadata"]["uid"], "controller": True}]}, "spec": {}}).object
    uid = pvc["metadata"]["uid"]
    cluster.images.write(uid, io.BytesIO(b"qcow2"))
    image = cluster.images.path(uid)
    assert image.read_bytes() == b"qcow2"
    cluster.delete("DataVolume", "disk")
    assert not image.exists()
    with pytest.raises(NotFound):
        cluster.get("PersistentVolumeClaim", "disk")


def test_apply_of_a_name_that_is_not_a_string_is_refused_as_go_decodes_it(tmp_path):
    from instancetype.store.base import BadRequest

    obj = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
           "metadata": {"name": [1]}, "spec": {}}
    with Cluster.open(str(tmp_path / "state.db")) as cluster:
        try:
            cluster.apply(obj)
        except BadRequest as e:
            assert str(e) == "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.name of type string"
        else:
            raise AssertionError("not refused")


def test_images_kept_by_name_by_an_older_version_move_to_their_claims_uid(tmp_path):

    state = tmp_path / "state.db"
    with Cluster.open(str(state)) as c:
        pvc = c.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "disk"},
                        "spec": {}}).object
    old = tmp_path / "state.db.images" / "default"
    old.mkdir(parents=True)
    (old / "disk").write_bytes(b"qcow2")
    (old / "gone").write_bytes(b"orphan")            # no claim: left for the user to look at
    with Cluster.open(str(state)) as c:
        assert c.images.path(pvc["metadata"]["uid"]).read_bytes() == b"qcow2"
    assert sorted(p.name for p in old.iterdir()) == ["gone"]
