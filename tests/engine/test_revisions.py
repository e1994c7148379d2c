"""ControllerRevision names, content, compare and upgrade (pkg/instancetype/revision,
pkg/instancetype/upgrade; seed 003)."""
from __future__ import annotations

import base64
import json

import pytest
from tests import builders

from instancetype.engine import revisions as R
from instancetype.errors import DecodeError, Error, UnexpectedKindError
from instancetype.jsonutil import clone

UID = "9160e5de-2540-476a-86d9-af0081aee68a"
VM = builders.vm_object("testvm", {"instancetype": {"name": "test-cluster-instancetype"}}, namespace="default",
                        metadata={"uid": "7ad77f47-ee51-4024-8d5b-4141aec7b04c"})


def cluster_instancetype(cpu=2, memory="128Mi", name="test-cluster-instancetype", **meta):
    """A stored cluster instancetype with all the metadata a revision must leave out."""
    return builders.instancetype_obj(name, cpu=cpu, memory=memory, kind="VirtualMachineClusterInstancetype", metadata={
        "uid": UID, "generation": 1, "resourceVersion": "42", "creationTimestamp": "2024-01-01T00:00:00Z",
        "labels": {"instancetype.kubevirt.io/common-instancetypes-version": "v1.0.0"},
        "annotations": {"a": "b"}, "finalizers": ["f"], "managedFields": [{}], "ownerReferences": [{"uid": "x"}],
        **meta})


# Seed 003: a KubeVirt v0.56 (v1alpha1) capture of instancetype csmall for VM vm-cirros-csmall.
SEED_003 = {
    "apiVersion": "apps/v1", "kind": "ControllerRevision",
    "data": {"apiVersion": "", "spec": "eyJjcHUiOnsiZ3Vlc3QiOjF9LCJtZW1vcnkiOnsiZ3Vlc3QiOiIxMjhNaSJ9fQ=="},
    "metadata": {
        "creationTimestamp": "2022-08-02T11:56:29Z",
        "name": "vm-cirros-csmall-csmall-6709b990-f717-44fe-a8ff-cb441d20b904-1",
        "namespace": "default",
        "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "blockOwnerDeletion": True, "controller": True,
                             "kind": "VirtualMachine", "name": "vm-cirros-csmall",
                             "uid": "7ad77f47-ee51-4024-8d5b-4141aec7b04c"}],
        "resourceVersion": "7819", "uid": "df3767bc-9413-4881-a961-2254f985dfd2"},
    "revision": 0,
}


# --- names -----------------------------------------------------------------------------------------

def test_names_in_both_forms():
    it = cluster_instancetype()
    assert R.revision_name("testvm", it) == f"testvm-test-cluster-instancetype-{UID}-1"
    assert R.kubevirt_revision_name("testvm", it) == f"testvm-test-cluster-instancetype-v1beta1-{UID}-1"
    csmall = {"metadata": {"name": "csmall", "uid": "72c3a35b-6e18-487d-bebf-f73c7d4f4a40", "generation": 1}}
    assert R.revision_name("vm-cirros-csmall", csmall) == \
        "vm-cirros-csmall-csmall-72c3a35b-6e18-487d-bebf-f73c7d4f4a40-1"
    assert R.kubevirt_revision_name("vm-cirros-csmall", csmall) == \
        "vm-cirros-csmall-csmall-v1beta1-72c3a35b-6e18-487d-bebf-f73c7d4f4a40-1"
    csmall["metadata"]["generation"] = 2
    assert R.revision_name("vm-cirros-csmall", csmall).endswith("-2")
    assert R.revision_name("vm", {"metadata": {"name": "x", "uid": "u"}}) == "vm-x-u-0"


def test_parse_revision_name():
    assert R.parse_revision_name(SEED_003["metadata"]["name"], "vm-cirros-csmall") == \
        ("csmall", "6709b990-f717-44fe-a8ff-cb441d20b904", 1)
    assert R.parse_revision_name(f"testvm-u1.medium-v1beta1-{UID}-3", "testvm") == ("u1.medium", UID, 3)
    assert R.parse_revision_name("revision-start-vm-abc-1", "testvm") is None
    assert R.parse_revision_name(f"other-x-{UID}-1", "testvm") is None


# --- building --------------------------------------------------------------------------------------

def test_build_revision_content_labels_and_owner():
    it = cluster_instancetype()
    before = clone(it)
    cr = R.build_revision(VM, it)
    assert it == before
    assert cr["apiVersion"] == "apps/v1" and cr["kind"] == "ControllerRevision" and cr["revision"] == 0
    meta = cr["metadata"]
    assert meta["name"] == f"testvm-test-cluster-instancetype-{UID}-1"
    assert meta["namespace"] == "default"
    assert meta["ownerReferences"] == [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": "testvm",
                                        "uid": VM["metadata"]["uid"], "controller": True,
                                        "blockOwnerDeletion": True}]
    assert meta["labels"] == {
        "instancetype.kubevirt.io/object-generation": "1",
        "instancetype.kubevirt.io/object-kind": "VirtualMachineClusterInstancetype",
        "instancetype.kubevirt.io/object-name": "test-cluster-instancetype",
        "instancetype.kubevirt.io/object-uid": UID,
        "instancetype.kubevirt.io/object-version": "v1beta1",
    }
    assert "annotations" not in meta
    assert cr["data"] == {
        "apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
        "metadata": {"name": "test-cluster-instancetype", "uid": UID, "generation": 1, "resourceVersion": "42",
                     "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {"cpu": {"guest": 2}, "memory": {"guest": "128Mi"}},
    }
    assert R.build_revision(VM, it, name="explicit")["metadata"]["name"] == "explicit"


def test_kind_comes_from_the_type_not_the_caller_spelling():
    pref = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "virtualmachinepreference",
            "metadata": {"name": "test-preference", "namespace": "default", "uid": UID, "generation": 1},
            "spec": {}}
    cr = R.build_revision(VM, pref)
    assert cr["data"]["kind"] == "VirtualMachinePreference"
    assert cr["data"]["metadata"]["namespace"] == "default"          # namespaced kinds keep it
    assert cr["metadata"]["labels"]["instancetype.kubevirt.io/object-kind"] == "VirtualMachinePreference"
    assert R.build_revision(VM, pref, kind="virtualmachineclusterpreferences")["data"]["kind"] == \
        "VirtualMachineClusterPreference"
    with pytest.raises(UnexpectedKindError):
        R.build_revision(VM, {**pref, "kind": "VirtualMachine"})


def test_cluster_objects_drop_their_namespace_and_each_vm_namespace_gets_a_copy():
    it = cluster_instancetype(namespace="stray")
    other_vm = clone(VM)
    other_vm["metadata"]["namespace"] = "team-b"
    cr = R.build_revision(other_vm, it)
    assert "namespace" not in cr["data"]["metadata"]
    assert cr["metadata"]["namespace"] == "team-b"


# --- reading and compare ---------------------------------------------------------------------------

def test_revision_object_and_spec():
    cr = R.build_revision(VM, cluster_instancetype())
    assert R.revision_spec(cr) == {"cpu": {"guest": 2}, "memory": {"guest": "128Mi"}}
    as_text = {**cr, "data": json.dumps(cr["data"])}
    assert R.revision_object(as_text) == cr["data"]
    with pytest.raises(DecodeError, match=r"^unexpected type in ControllerRevision: \*v1beta1.VirtualMachineClusterInstancetype$"):
        R.revision_spec(cr, accepted=("VirtualMachinePreference", "VirtualMachineClusterPreference"))


@pytest.mark.parametrize("data, message", [
    (None, "unexpected type in ControllerRevision: <nil>"),
    ({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "vm"}},
     "unexpected type in ControllerRevision: *v1.VirtualMachine"),
    ({"apiVersion": "example.com/v1", "kind": "Gizmo"},
     'failed to decode object in ControllerRevision: no kind "Gizmo" is registered for version "example.com/v1" '
     'in scheme "pkg/runtime/scheme.go:100"'),
    ({"spec": {"cpu": 1}}, "failed to decode object in ControllerRevision: Object 'Kind' is missing in "
                           "'{\"spec\":{\"cpu\":1}}'"),
    ("{not json", "failed to decode object in ControllerRevision: "),
])
def test_decode_errors(data, message):
    with pytest.raises(DecodeError) as e:
        R.revision_object({"data": data})
    assert str(e.value).startswith(message)


def test_same_content_compares_specs_only():
    a = R.build_revision(VM, cluster_instancetype())
    b = R.build_revision({**VM, "metadata": {**VM["metadata"], "name": "othervm"}},
                         cluster_instancetype(resourceVersion="99", generation=7))
    assert R.same_content(a, b)
    assert R.same_content(a, R.build_revision(VM, cluster_instancetype(memory="0.125Gi")))   # same quantity
    assert not R.same_content(a, R.build_revision(VM, cluster_instancetype(cpu=15)))
    assert R.check_existing(a, b) == b


def test_existing_revision_with_other_data_is_refused():
    built = R.build_revision(VM, cluster_instancetype(cpu=2))
    existing = R.build_revision(VM, cluster_instancetype(cpu=15))
    with pytest.raises(Error) as e:
        R.check_existing(built, existing)
    assert str(e.value) == f"found existing ControllerRevision with unexpected data: {built['metadata']['name']}"


def test_same_content_of_an_old_payload_and_its_upgrade():
    assert R.same_content(SEED_003, R.upgraded_revision(SEED_003))


# --- upgrade ---------------------------------------------------------------------------------------

def test_needs_upgrade_is_by_label_only():
    cr = R.build_revision(VM, cluster_instancetype())
    assert not R.needs_upgrade(cr)
    assert R.needs_upgrade(SEED_003)
    unlabelled = clone(cr)
    del unlabelled["metadata"]["labels"]
    assert R.needs_upgrade(unlabelled)                  # even with a v1beta1 payload
    unlabelled["metadata"]["labels"] = {"instancetype.kubevirt.io/object-version": "v1alpha2"}
    assert R.needs_upgrade(unlabelled)


def test_seed_003_spec_revision_upgrades_to_a_new_revision():
    # pkg/instancetype/upgrade: a brand-new revision under KubeVirt's name, owned by the VM.
    before = clone(SEED_003)
    up = R.upgraded_revision(SEED_003)
    assert SEED_003 == before
    meta = up["metadata"]
    assert meta["name"] == "vm-cirros-csmall-csmall-v1beta1-6709b990-f717-44fe-a8ff-cb441d20b904-1"
    assert meta["namespace"] == "default" and "uid" not in meta and "resourceVersion" not in meta
    assert meta["ownerReferences"] == SEED_003["metadata"]["ownerReferences"]
    assert meta["labels"] == {
        "instancetype.kubevirt.io/object-generation": "1",
        "instancetype.kubevirt.io/object-kind": "VirtualMachineInstancetype",
        "instancetype.kubevirt.io/object-name": "csmall",
        "instancetype.kubevirt.io/object-uid": "6709b990-f717-44fe-a8ff-cb441d20b904",
        "instancetype.kubevirt.io/object-version": "v1beta1",
    }
    assert up["data"]["apiVersion"] == "instancetype.kubevirt.io/v1beta1"
    assert up["data"]["kind"] == "VirtualMachineInstancetype"
    assert up["data"]["metadata"]["name"] == "csmall"
    assert up["data"]["spec"]["cpu"]["guest"] == 1 and up["data"]["spec"]["memory"]["guest"] == "128Mi"
    assert not R.needs_upgrade(up)


def test_an_upgraded_name_is_never_the_old_one():
    # An unlabelled revision already in KubeVirt's form: the seeds' form is used instead.
    cr = clone(SEED_003)
    cr["metadata"]["name"] = "vm-cirros-csmall-csmall-v1beta1-6709b990-f717-44fe-a8ff-cb441d20b904-1"
    up = R.upgraded_revision(cr)
    assert up["metadata"]["name"] == "vm-cirros-csmall-csmall-6709b990-f717-44fe-a8ff-cb441d20b904-1"
    assert R.upgraded_revision(up)["metadata"]["name"] != up["metadata"]["name"]


def test_spec_revision_kind_follows_the_vm_matcher():
    vm = {"metadata": {"name": "vm-cirros-csmall"},
          "spec": {"instancetype": {"name": "csmall", "kind": "virtualmachineclusterinstancetype"}}}
    up = R.upgraded_revision(SEED_003, vm)
    assert up["data"]["kind"] == "VirtualMachineClusterInstancetype"
    assert "namespace" not in up["data"]["metadata"]


def test_spec_revision_without_a_parsable_name_keeps_kubevirts_placeholder():
    cr = clone(SEED_003)
    cr["metadata"]["name"] = "hand-made"
    up = R.upgraded_revision(cr)
    assert up["data"]["metadata"]["name"] == R.OLD_INSTANCETYPE_NAME
    assert up["metadata"]["labels"]["instancetype.kubevirt.io/object-generation"] == "0"


def test_preference_spec_revision_is_tried_first():
    spec = base64.b64encode(json.dumps({"devices": {"preferredDiskBus": "virtio"}}).encode()).decode()
    cr = {"data": {"apiVersion": "instancetype.kubevirt.io/v1alpha1", "spec": spec},
          "metadata": {"name": "r", "namespace": "default"}}
    obj = R.revision_object(cr)
    assert obj["kind"] == "VirtualMachinePreference"
    assert obj["metadata"]["name"] == R.OLD_PREFERENCE_NAME
    assert obj["spec"]["devices"] == {"preferredDiskBus": "virtio"}
    with pytest.raises(DecodeError, match="Object 'Kind' is missing"):
        R.revision_object(cr, allow_old=False)


def test_v1alpha_objects_are_converted():
    for version in ("v1alpha1", "v1alpha2"):
        old = cluster_instancetype()
        old["apiVersion"] = f"instancetype.kubevirt.io/{version}"
        cr = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
              "metadata": {"name": f"testvm-test-cluster-instancetype-{UID}-1", "namespace": "default"},
              "data": old}
        obj = R.revision_object(cr)
        assert obj["apiVersion"] == "instancetype.kubevirt.io/v1beta1"
        assert obj["kind"] == "VirtualMachineClusterInstancetype"
        assert obj["spec"]["cpu"]["guest"] == 2
        up = R.upgraded_revision(cr, VM)
        assert up["metadata"]["name"] == f"testvm-test-cluster-instancetype-v1beta1-{UID}-1"
        assert up["metadata"]["labels"]["instancetype.kubevirt.io/object-uid"] == UID
        assert "labels" not in up["data"]["metadata"]
        with pytest.raises(DecodeError, match=f'no kind "VirtualMachineClusterInstancetype" is registered for '
                                              f'version "instancetype.kubevirt.io/{version}"'):
            R.revision_object(cr, allow_old=False)


def test_copies_only_where_the_answer_may_be_changed():
    """`revision_object` answers a copy, `read_revision_object` (for a reader) the revision's own
    data; `build_revision(..., handed_over=True)` takes the object's parts (the caller drops it),
    and the two builds hold the same revision."""
    obj = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
           "metadata": {"name": "it", "uid": "u", "generation": 2, "labels": {"a": "b"}},
           "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}}
    vm = {"metadata": {"name": "vm", "namespace": "ns", "uid": "v"}}
    copied = R.build_revision(vm, obj)
    taken = R.build_revision(vm, clone(obj), handed_over=True)
    assert copied == taken
    assert obj["metadata"]["labels"] == {"a": "b"}          # the given object's metadata is left alone
    assert R.revision_object(copied)["spec"] is not copied["data"]["spec"]
    assert R.read_revision_object(copied)["spec"] is copied["data"]["spec"]
    assert R.read_revision_object(copied) == R.revision_object(copied)
    text = {**copied, "data": json.dumps(copied["data"])}
    assert R.read_revision_object(text) == R.revision_object(copied)
