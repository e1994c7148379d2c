"""Names and content of shared ControllerRevisions (engine/shared_revisions.py)."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from tests import builders

from instancetype.api.names import subdomain_errors
from instancetype.engine import revisions as R
from instancetype.engine import shared_revisions as S

_LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?", fullmatch=True)
SUBDOMAINS = st.lists(_LABEL, min_size=1, max_size=6).map(".".join).filter(lambda s: len(s) <= 253)
KINDS = st.sampled_from(["VirtualMachineInstancetype", "VirtualMachineClusterInstancetype"])


@settings(max_examples=200, deadline=None)
@given(name=SUBDOMAINS, kind=KINDS, cpu=st.integers(1, 64))
def test_every_object_name_gives_a_valid_shared_name(name, kind, cpu):
    obj = builders.instancetype_obj(name, cpu=cpu, memory="1Gi", kind=kind)
    rev = S.build_shared_revision(obj, "default")["metadata"]["name"]
    assert len(rev) <= 253 and subdomain_errors(rev) == []
    assert S.is_shared_name(rev)
    assert R.parse_revision_name(rev, "vm") is None     # never mistaken for a VM's own revision
    short = "vmit" if kind == "VirtualMachineInstancetype" else "vmcit"
    assert re.search(rf"-{short}-[0-9a-f]{{16}}$", rev)
    if len(name) <= 253 - len(f"-{short}-") - 16:
        assert rev.startswith(name + "-")


def test_the_name_follows_kind_name_and_spec_only():
    a = builders.instancetype_obj("small", cpu=1, memory="1Gi", metadata={"uid": "u1", "generation": 3})
    same = builders.instancetype_obj("small", cpu=1, memory="1Gi", metadata={"uid": "u2", "generation": 1,
                                                                            "labels": {"x": "y"}})
    same["spec"] = dict(reversed(list(same["spec"].items())))       # key order does not count
    name = S.build_shared_revision(a, "ns")["metadata"]["name"]
    assert S.build_shared_revision(same, "other")["metadata"]["name"] == name
    assert S.build_shared_revision(builders.instancetype_obj("small", cpu=2, memory="1Gi"), "ns")[
        "metadata"]["name"] != name
    assert S.build_shared_revision(builders.instancetype_obj("small2", cpu=1, memory="1Gi"), "ns")[
        "metadata"]["name"] != name
    cluster = builders.instancetype_obj("small", cpu=1, memory="1Gi", kind="VirtualMachineClusterInstancetype")
    assert S.build_shared_revision(cluster, "ns")["metadata"]["name"].startswith("small-vmcit-")


def test_a_shared_revision_holds_the_object_as_a_vm_revision_does():
    vm = builders.vm_object("vm1", {}, namespace="ns", metadata={"uid": "v"})
    obj = builders.preference_obj("fedora", {"devices": {"preferredDiskBus": "virtio"}},
                                  metadata={"uid": "p", "generation": 2, "annotations": {"a": "b"}})
    own, shared = R.build_revision(vm, obj), S.build_shared_revision(obj, "ns")
    assert shared["data"] == own["data"] and R.same_content(own, shared)
    assert shared["metadata"]["labels"] == {**own["metadata"]["labels"], S.LABEL_SHARED_REVISION: "true"}
    assert "ownerReferences" not in shared["metadata"] and shared["metadata"]["namespace"] == "ns"
    assert shared["metadata"]["name"].startswith("fedora-vmp-") and S.is_shared(shared) and not S.is_shared(own)


def test_the_switch_is_the_annotation_true_only():
    kv = {"metadata": {"annotations": {S.ANNOTATION_SHARED_REVISIONS: "true"}}}
    assert S.enabled(kv)
    for value in ("false", "True", "1", ""):
        assert not S.enabled({"metadata": {"annotations": {S.ANNOTATION_SHARED_REVISIONS: value}}})
    assert not S.enabled({"metadata": {}}) and not S.enabled(None) and not S.enabled({"metadata": "x"})
