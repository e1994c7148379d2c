"""Finding specs: kind rules, NotFound texts, ControllerRevisions (pkg/instancetype/find,
pkg/instancetype/preference/find)."""
from __future__ import annotations

import base64
import functools
import json

import pytest
from tests import builders

from instancetype.engine.find import find_instancetype, find_preference, index_for, objects_for_matchers
from instancetype.errors import DecodeError, NotFoundError, UnexpectedKindError

IT = {"cpu": {"guest": 2}, "memory": {"guest": "1Gi"}}
PREF = {"cpu": {"preferredCPUTopology": "cores"}}

vm = functools.partial(builders.vm, "vm1", namespace="team")
obj = builders.api_object


def cr(name, data, ns="team", labels=None):
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {}}, "data": data}


def test_no_matcher():
    v = vm()
    assert find_instancetype(v, index_for(v)) is None
    assert find_preference(v, index_for(v)) is None


@pytest.mark.parametrize("kind", ["", "VirtualMachineClusterInstancetype", "virtualmachineclusterinstancetypes",
                                  "VIRTUALMACHINECLUSTERINSTANCETYPE"])
def test_cluster_kinds(kind):
    v = vm(instancetype={"name": "u1", "kind": kind})
    idx = index_for(v, [obj("VirtualMachineClusterInstancetype", "u1", IT)])
    assert find_instancetype(v, idx)["cpu"]["guest"] == 2


@pytest.mark.parametrize("kind", ["VirtualMachineInstancetype", "virtualMachineInstanceType",
                                  "virtualmachineinstancetypes"])
def test_namespaced_kinds_use_vm_namespace(kind):
    v = vm(instancetype={"name": "u1", "kind": kind})
    idx = index_for(v, [obj("VirtualMachineInstancetype", "u1", IT, namespace="other")])
    with pytest.raises(NotFoundError) as e:
        find_instancetype(v, idx)
    assert str(e.value) == 'virtualmachineinstancetypes.instancetype.kubevirt.io "u1" not found'
    idx = index_for(v, [obj("VirtualMachineInstancetype", "u1", IT)])   # no namespace = VM's
    assert find_instancetype(v, idx)["memory"]["guest"] == "1Gi"


@pytest.mark.parametrize("side, matcher, error, message", [
    *[("instancetype", {"name": "u1", "kind": kind}, UnexpectedKindError,
       f"got unexpected kind in InstancetypeMatcher: {kind}")
      for kind in ("vmf", "instancetype", "virtualmachineinstancetype.instancetype.kubevirt.io", "VirtualMachineFlavor")],
    ("preference", {"name": "p", "kind": "vmcp"}, UnexpectedKindError, "got unexpected kind in PreferenceMatcher: vmcp"),
    ("preference", {"name": "rhel.8"}, NotFoundError,
     'virtualmachineclusterpreferences.instancetype.kubevirt.io "rhel.8" not found'),
    ("preference", {"name": "w", "kind": "VirtualMachinePreference"}, NotFoundError,
     'virtualmachinepreferences.instancetype.kubevirt.io "w" not found'),
    ("instancetype", {"name": "u1", "revisionName": "rev-x"}, NotFoundError,
     'controllerrevisions.apps "rev-x" not found'),
])
def test_lookup_errors(side, matcher, error, message):
    v = vm(**{side: matcher})
    find = find_instancetype if side == "instancetype" else find_preference
    with pytest.raises(error) as e:
        find(v, index_for(v))
    assert str(e.value) == message


def test_revision_name_wins_over_kind_and_live_object():
    stored = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
              "metadata": {"name": "u1"}, "spec": {"cpu": {"guest": 8}, "memory": {"guest": "2Gi"}}}
    v = vm(instancetype={"name": "u1", "kind": "vmf", "revisionName": "rev-1"})
    idx = index_for(v, [cr("rev-1", stored), obj("VirtualMachineClusterInstancetype", "u1", IT)])
    assert find_instancetype(v, idx)["cpu"]["guest"] == 8


def test_revision_data_as_json_text_and_wrong_type():
    stored = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
              "metadata": {"name": "p"}, "spec": PREF}
    v = vm(instancetype={"name": "u1", "revisionName": "rev"}, preference={"name": "p", "revisionName": "rev"})
    idx = index_for(v, [cr("rev", json.dumps(stored))])
    assert find_preference(v, idx) == PREF
    with pytest.raises(DecodeError) as e:
        find_instancetype(v, idx)
    assert str(e.value) == "unexpected type in ControllerRevision: *v1beta1.VirtualMachinePreference"


def test_old_spec_revision_wrapper_is_not_decoded():
    # KubeVirt v1.7 removed the v1alpha1 SpecRevision / v1alpha compat from
    # compatibility.DecodeControllerRevision: v1.9's decoder finds no kind in such a payload.
    blob = base64.b64encode(json.dumps(IT).encode()).decode()
    v = vm(instancetype={"name": "u1", "revisionName": "old"})
    idx = index_for(v, [cr("old", {"apiVersion": "", "spec": blob})])
    with pytest.raises(DecodeError) as e:
        find_instancetype(v, idx)
    assert str(e.value).startswith("failed to decode object in ControllerRevision: Object 'Kind' is missing in ")
    old = {"apiVersion": "instancetype.kubevirt.io/v1alpha2", "kind": "VirtualMachineInstancetype",
           "metadata": {"name": "u1"}, "spec": IT}
    idx = index_for(v, [cr("old", old)])
    with pytest.raises(DecodeError) as e:
        find_instancetype(v, idx)
    assert 'no kind "VirtualMachineInstancetype" is registered for version' in str(e.value)


def test_revision_decoding_is_revisions_module():
    # find reads payloads through engine/revisions.py only (no private decoder to drift).
    import pathlib

    # (the file itself: a compiled build's module has no source to inspect)
    src = (pathlib.Path(__file__).parents[2] / "src/instancetype/engine/find.py").read_text()
    assert "revision_object" in src and "json.loads" not in src and "b64decode" not in src


def test_status_ref_used_only_when_label_matches():
    stored = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
              "metadata": {"name": "u1"}, "spec": {"cpu": {"guest": 8}, "memory": {"guest": "2Gi"}}}
    status = {"instancetypeRef": {"name": "u1", "controllerRevisionRef": {"name": "rev"}}}
    live = obj("VirtualMachineClusterInstancetype", "u1", IT)
    v = vm(instancetype={"name": "u1"}, status=status)
    idx = index_for(v, [cr("rev", stored, labels={"instancetype.kubevirt.io/object-name": "u1"}), live])
    assert find_instancetype(v, idx)["cpu"]["guest"] == 8
    idx = index_for(v, [cr("rev", stored, labels={"instancetype.kubevirt.io/object-name": "old"}), live])
    assert find_instancetype(v, idx)["cpu"]["guest"] == 2


def test_objects_for_matchers():
    v = vm(instancetype={"name": "a", "kind": "virtualmachineinstancetypes"},
           preference={"name": "b", "kind": "bogus"})
    objs = objects_for_matchers(v, {"spec": IT, "kind": "x"}, PREF)
    assert objs == [{"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
                     "metadata": {"name": "a", "namespace": "team"}, "spec": IT}]
    idx = index_for(v, objs)
    assert find_instancetype(v, idx)["cpu"]["guest"] == 2
    with pytest.raises(UnexpectedKindError):
        find_preference(v, idx)


def test_objects_for_both_matchers():
    v = vm(instancetype={"name": "a"}, preference={"name": "b", "kind": "VirtualMachinePreference"})
    objs = objects_for_matchers(v, IT, {"kind": "VirtualMachinePreference", "spec": PREF})
    assert [(o["kind"], o["metadata"]) for o in objs] == [
        ("VirtualMachineClusterInstancetype", {"name": "a"}),
        ("VirtualMachinePreference", {"name": "b", "namespace": "team"})]
    idx = index_for(v, objs)
    assert find_preference(v, idx) == PREF
