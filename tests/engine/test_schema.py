"""The CRD schema step the API server (apiextensions-apiserver) runs before KubeVirt's webhook."""
import pytest
from tests import builders

from instancetype.engine.schema import check_schema
from instancetype.errors import UnexpectedKindError


def obj(spec, kind="VirtualMachineInstancetype", **top):
    return builders.api_object(kind, "x", spec, **top)


def test_valid_object_passes_and_unknown_fields_and_nulls_are_pruned():
    o = obj({"cpu": {"guest": 1, "bogus": 1}, "memory": {"guest": "1Gi"}, "nodeSelector": {"a": "b"},
             "schedulerName": None}, status={"x": 1}, extra=1)
    pruned, causes = check_schema(o)
    assert causes == []
    assert pruned == obj({"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}, "nodeSelector": {"a": "b"}})
    assert o["spec"]["cpu"]["bogus"] == 1


def test_empty_typed_objects_are_pruned_empty():
    pruned, causes = check_schema(obj({"devices": {"preferredRng": {"x": 1}}}, kind="VirtualMachinePreference"))
    assert pruned["spec"] == {"devices": {"preferredRng": {}}} and causes == []


def test_required_fields():
    _, causes = check_schema(obj({"cpu": {}}))
    assert [f"{c.field}: {c.message}" for c in causes] == ["spec.cpu.guest: Required value",
                                                           "spec.memory: Required value"]
    _, causes = check_schema({"kind": "VirtualMachineClusterPreference"})
    assert [f"{c.field}: {c.message}" for c in causes] == ["spec: Required value"]


def test_ranges_types_and_quantity_pattern():
    _, causes = check_schema(obj({"cpu": {"guest": "2"}, "memory": {"guest": "1 Gi", "overcommitPercent": 150}}))
    assert [f"{c.field}: {c.message}" for c in causes] == [
        'spec.cpu.guest: Invalid value: "string": spec.cpu.guest in body must be of type integer: "string"',
        "spec.memory.guest: Invalid value: \"1 Gi\": spec.memory.guest in body should match "
        "'^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$'",
        "spec.memory.overcommitPercent: Invalid value: 150: spec.memory.overcommitPercent in body "
        "should be less than or equal to 100"]
    assert causes[2].field == "spec.memory.overcommitPercent"


def test_zero_guest_passes_the_schema():
    assert check_schema(obj({"cpu": {"guest": 0}, "memory": {"guest": 0}}))[1] == []


def test_unknown_kind():
    with pytest.raises(UnexpectedKindError):
        check_schema({"kind": "Pod", "spec": {}})
