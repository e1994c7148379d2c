"""Admission of instancetypes and preferences (pkg/instancetype/webhooks/instancetype and preference admitters)."""
import pytest
from tests import builders

from instancetype.engine.validation import validate
from instancetype.errors import UnexpectedKindError


def it(spec, kind="VirtualMachineInstancetype", **top):
    return builders.api_object(kind, "x", spec, **top)


def pref(spec, kind="VirtualMachinePreference", **top):
    return builders.api_object(kind, "x", spec, **top)


OK = {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}


def test_valid_and_zero_are_allowed():
    assert validate(it(OK)).to_dict() == {"allowed": True, "causes": [], "message": ""}
    assert validate(it({"cpu": {"guest": 0}, "memory": {"guest": "0"}})).allowed


def test_delete_is_always_allowed():
    assert validate(it({"memory": {"overcommitPercent": 500}}), operation="DELETE").allowed


def test_forbidden_keys_then_required_spec():
    obj = {"kind": "VirtualMachineInstancetype", "metadata": {}, "extra": 1, "status": {}}
    res = validate(obj).to_dict()
    assert res["code"] == 422 and res["reason"] == "Invalid"
    assert res["message"] == ".extra in body is a forbidden property, spec in body is required"
    assert res["causes"][0] == {"reason": "", "message": ".extra in body is a forbidden property", "field": ""}


def test_overcommit_rules_both_reported():
    res = validate(it({"cpu": {"guest": 1}, "memory": {"guest": "1Gi", "overcommitPercent": 250,
                                                     "hugepages": {}}}))
    assert [c.message for c in res.causes] == [
        "spec.memory.overcommitPercent '250': must be in range between 0 and 100.",
        "spec.memory.overcommitPercent and spec.memory.hugepages should not be requested together."]
    assert {c.field for c in res.causes} == {"spec.memory.overcommitPercent"}


def test_launch_security_warns():
    res = validate(it({**OK, "launchSecurity": {}}, kind="VirtualMachineClusterInstancetype"))
    assert res.allowed and res.warnings == [
        "launchSecurity is deprecated and will be removed in a future release. Use preference instead."]


def test_decode_failure_is_400_naming_the_namespaced_type():
    res = validate(pref({"preferSpreadSocketToCoreRatio": -2}, kind="VirtualMachineClusterPreference")).to_dict()
    assert res == {"allowed": False, "causes": [], "code": 400,
                   "message": "json: cannot unmarshal number -2 into Go struct field VirtualMachinePreference"
                              ".spec.preferSpreadSocketToCoreRatio of type uint32"}


def test_old_object_is_decoded_on_update():
    bad_old = it({"cpu": {"guest": -1}})
    assert validate(it(OK), operation="UPDATE", old=bad_old).code == 400
    assert validate(it(OK), operation="CREATE", old=bad_old).allowed


@pytest.mark.parametrize("cpu, message, field", [
    ({"preferredCPUTopology": "PreferSpread"}, "unknown preferredCPUTopology PreferSpread",
     "spec.cpu.preferredCPUTopology"),
    ({"preferredCPUTopology": "spread", "spreadOptions": {"across": "CoresSockets"}},
     "across CoresSockets is not supported", "spec.cpu.spreadOptions.across"),
    ({"preferredCPUTopology": "preferSpread", "spreadOptions": {"across": "CoresThreads", "ratio": 0}},
     "only a ratio of 2 (1 core 2 threads) is allowed when spreading vCPUs over cores and threads",
     "spec.cpu.spreadOptions.ratio"),
])
def test_preference_rules(cpu, message, field):
    res = validate(pref({"cpu": cpu}))
    assert [(c.reason, c.message, c.field) for c in res.causes] == [("FieldValueInvalid", message, field)]


def test_ratio_from_top_level_field_counts_for_cores_threads():
    res = validate(pref({"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "CoresThreads"}},
                         "preferSpreadSocketToCoreRatio": 3}))
    assert res.causes[0].field == "spec.cpu.spreadOptions.ratio"


def test_spread_options_ignored_for_other_topologies_and_deprecated_spelling_warns():
    assert validate(pref({"cpu": {"preferredCPUTopology": "cores", "spreadOptions": {"across": "x"}}})).allowed
    res = validate(pref({"cpu": {"preferredCPUTopology": "preferAny"}}))
    assert res.allowed and res.warnings == [
        "PreferredCPUTopology preferAny is deprecated for removal in a future release, please use any instead"]


def test_unknown_kind_raises():
    with pytest.raises(UnexpectedKindError):
        validate(it(OK, kind="VirtualMachineFlavor"))


def test_input_is_not_mutated():
    obj = it({"CPU": {"Guest": 1}, "memory": {"guest": "1.5Gi"}})
    before = repr(obj)
    validate(obj, operation="UPDATE")
    assert repr(obj) == before
