"""The informer cache's packing (store/kube/informer.Packer): what is cached reads back whole,
equal objects pack to equal bytes (a relist compares them), and objects made from one template
cost a fraction of their msgpack."""
from __future__ import annotations

import copy

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from instancetype.store.kube.informer import ZDICT_MAX, Packer
from tests.builders import csmall_vm


def vm(name: str, uid: str) -> dict:
    return csmall_vm(name, instancetype={"kind": "VirtualMachineClusterInstancetype", "name": "u1.medium"},
                     preference=None, namespace="default", image="quay.io/containerdisks/fedora:latest",
                     metadata={"uid": uid, "resourceVersion": "17", "managedFields": [
                         {"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}}]})


def test_round_trip_drops_managed_fields_only():
    packer = Packer()
    obj = vm("a", "1")
    want = copy.deepcopy(obj)
    del want["metadata"]["managedFields"]
    assert packer.unpack(packer.pack(obj)) == want
    assert packer.unpack(packer.pack(vm("b", "2")))["metadata"]["name"] == "b"


def test_equal_objects_pack_equal_and_siblings_pack_small():
    packer = Packer()
    first = packer.pack(vm("vm-0", "0" * 36))
    again = packer.pack(vm("vm-0", "0" * 36))
    assert first == again
    sibling = vm("vm-1", "1" * 36)
    plain = len(msgspec.msgpack.encode({**sibling, "metadata": {k: v for k, v in sibling["metadata"].items()
                                                                 if k != "managedFields"}}))
    assert len(packer.pack(sibling)) < plain / 4


def test_a_large_first_object_and_unlike_objects_still_read_back():
    packer = Packer()
    big = vm("big", "9")
    big["metadata"]["annotations"] = {f"k{i}": "v" * 50 for i in range(2 * ZDICT_MAX // 50)}
    assert packer.unpack(packer.pack(copy.deepcopy(big)))["metadata"]["annotations"] == big["metadata"]["annotations"]
    other = {"kind": "ControllerRevision", "metadata": {"name": "x"}, "data": {"blob": "z" * 5000}, "revision": 3}
    assert packer.unpack(packer.pack(copy.deepcopy(other))) == other


json_values = st.recursive(st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                      max_size=4),
                           max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=8), json_values, max_size=5), min_size=1, max_size=5))
def test_any_objects_read_back(objs):
    packer = Packer()
    packed = [packer.pack(copy.deepcopy(o)) for o in objs]
    assert [packer.unpack(p) for p in packed] == objs
