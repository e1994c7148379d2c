"""Matcher rules and the VM shape (engine/matchers.py, vm_decode.py, vm_fields.py, object_input.py;
KubeVirt webhooks/vm/mutator.go)."""
from __future__ import annotations

import pytest
from tests.builders import vm

from instancetype.engine import matchers, object_input, vm_decode, vm_fields
from instancetype.engine.results import Cause
from instancetype.errors import DecodeError, LoadError, QuantityError

RENAMED = Cause("FieldValueInvalid", "the Matcher Name has been updated without updating the RevisionName",
                "spec.instancetype.revisionName")


@pytest.mark.parametrize("old, new, refused", [
    ({"name": "a", "revisionName": "r"}, {"name": "b", "revisionName": "r"}, True),
    ({"name": "a", "revisionName": "r"}, {"name": "b", "revisionName": "r2"}, False),   # both changed
    ({"name": "a", "revisionName": "r"}, {"name": "b"}, False),                         # revision cleared
    ({"name": "a"}, {"name": "b"}, False),                                              # no old revision
    ({"name": "a", "revisionName": "r"}, {"name": "a", "kind": "x", "revisionName": "r"}, False),  # kind only
    ({"name": "a", "revisionName": "r"}, None, False),                                  # removed
    (None, {"name": "b", "revisionName": "r"}, False),                                  # added
])
def test_matcher_update(old, new, refused):
    old_vm = vm(instancetype=old) if old is not None else vm()
    new_vm = vm(instancetype=new) if new is not None else vm()
    assert matchers.check_matcher_update(old_vm, new_vm) == ([RENAMED] if refused else [])


def test_matcher_update_preference_field():
    causes = matchers.check_matcher_update(vm(preference={"name": "a", "revisionName": "r"}),
                                           vm(preference={"name": "b", "revisionName": "r"}))
    assert [c.field for c in causes] == ["spec.preference.revisionName"]


def test_matcher_shapes_in_order_instancetype_first():
    causes = matchers.check_matcher_shapes(vm(
        instancetype={"name": "a", "kind": "k", "inferFromVolume": "v", "inferFromVolumeFailurePolicy": "Never"},
        preference={}))
    assert [(c.reason, c.field) for c in causes] == [
        ("FieldValueNotSupported", "spec.instancetype.name"),
        ("FieldValueNotSupported", "spec.instancetype.kind"),
        ("FieldValueInvalid", "spec.instancetype.inferFromVolumeFailurePolicy"),
    ]
    assert causes[2].message == "Invalid value 'Never' for InferFromVolumeFailurePolicy"
    causes = matchers.check_matcher_shapes(vm(instancetype={"name": "ok"}, preference={"revisionName": "r"}))
    assert causes == [Cause("FieldValueNotFound",
                            "Either Name or InferFromVolume should be provided within the PreferenceMatcher",
                            "spec.preference")]
    # the policy is checked even without inferFromVolume; a kind alone is fine
    assert [c.field for c in matchers.check_matcher_shapes(
        vm(instancetype={"name": "a", "inferFromVolumeFailurePolicy": "ignore"}))] == \
        ["spec.instancetype.inferFromVolumeFailurePolicy"]
    assert matchers.check_matcher_shapes(vm(instancetype={"name": "a", "kind": "anything"})) == []


@pytest.mark.parametrize("bad, field", [
    ({"spec": {"instancetype": "u1.small"}}, "VirtualMachine.spec.instancetype"),
    ({"spec": {"template": {"spec": {"volumes": {"name": "x"}}}}}, "VirtualMachine.spec.template.spec.volumes"),
    ({"spec": {"template": {"spec": {"volumes": [{"name": 3}]}}}}, "VirtualMachine.spec.template.spec.volumes.name"),
    ({"spec": {"template": {"spec": {"domain": {"cpu": {"sockets": "2"}}}}}},
     "VirtualMachine.spec.template.spec.domain.cpu.sockets"),
    ({"metadata": []}, "VirtualMachine.metadata"),
])
def test_load_vm_names_the_bad_field(bad, field):
    with pytest.raises(DecodeError) as e:
        vm_decode.load_vm(bad)
    assert f"Go struct field {field} of type" in str(e.value)


def test_load_vm_copies_and_fills_spec():
    src = {"metadata": {"name": "a"}, "spec": {"template": {"spec": {"volumes": [None, {"name": "v"}]}}}}
    out = vm_decode.load_vm(src)
    assert out["spec"]["template"]["spec"]["volumes"] == [{}, {"name": "v"}]   # null item = zero struct
    out["spec"]["template"]["spec"]["volumes"][1]["name"] = "changed"
    assert src["spec"]["template"]["spec"]["volumes"][1]["name"] == "v"
    assert vm_decode.load_vm({})["spec"] == {}
    with pytest.raises(DecodeError):
        vm_decode.load_vm("not a vm")


def test_normalize_vm_quantities():
    v = vm_decode.load_vm({"spec": {
        "dataVolumeTemplates": [{"spec": {"storage": {"resources": {"requests": {"storage": "30720Mi"}}}}}],
        "template": {"spec": {"domain": {"memory": {"guest": "0.5Gi"}, "resources": {"requests": {"cpu": "2000m"}}},
                              "volumes": [{"name": "e", "emptyDisk": {"capacity": "1000M"}}]}}}})
    vm_fields.normalize_vm(v)
    assert v["spec"]["dataVolumeTemplates"][0]["spec"]["storage"]["resources"]["requests"]["storage"] == "30Gi"
    t = v["spec"]["template"]["spec"]
    assert t["domain"]["memory"]["guest"] == "512Mi"
    assert t["domain"]["resources"]["requests"]["cpu"] == "2"
    assert t["volumes"][0]["emptyDisk"]["capacity"] == "1G"
    with pytest.raises(QuantityError):
        vm_fields.normalize_vm(vm_decode.load_vm({"spec": {"template": {"spec": {"domain": {"memory": {"guest": "x"}}}}}}))


def test_object_index_checks_names():
    with pytest.raises(LoadError, match=r"objects\[0\]: metadata.name"):
        object_input.object_index([{"kind": "PersistentVolumeClaim", "metadata": {"name": ["x"]}}], "ns")
    with pytest.raises(LoadError):
        object_input.object_index(5, "ns")
    idx = object_input.object_index([{"kind": "Gadget", "metadata": {"name": "g"}}], "ns")
    assert idx.get("Gadget", "g", "ns") is not None


def test_load_vm_copies_a_map_given_as_another_mapping():
    # found by the type checker: a map field given as a non-dict Mapping was kept, not copied
    import types

    labels = types.MappingProxyType({"a": "b"})
    out = vm_decode.load_vm({"metadata": {"name": "x", "labels": labels}, "spec": {}})
    assert out["metadata"]["labels"] == {"a": "b"} and type(out["metadata"]["labels"]) is dict
