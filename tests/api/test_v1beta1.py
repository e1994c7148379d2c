"""The typed v1beta1 model: wire names, Go zero/pointer rules, decoding as Go decodes."""
import pytest

from instancetype.api import v1beta1 as b
from instancetype.errors import DecodeError, QuantityError


def test_wire_names_are_kubevirts_not_camel_case():
    names = {wire for _, wire, _, _ in b.struct_fields(b.CPUInstancetype)}
    assert {"guest", "model", "dedicatedCPUPlacement", "isolateEmulatorThread", "maxSockets"} <= names
    dev = {wire for _, wire, _, _ in b.struct_fields(b.DevicePreferences)}
    assert {"preferredTPM", "preferredDiskIO", "preferredDiskDedicatedIoThread"} <= dev


def test_round_trip_keeps_pointer_zeroes_and_drops_omitempty_zeroes():
    spec = {"cpu": {"guest": 2, "dedicatedCPUPlacement": False, "model": ""},
            "memory": {"guest": "1Gi", "overcommitPercent": 0}, "schedulerName": "",
            "launchSecurity": {}}
    assert b.to_dict(b.decode_instancetype_spec(spec)) == {
        "cpu": {"guest": 2, "dedicatedCPUPlacement": False, "model": ""},
        "memory": {"guest": "1Gi"}, "launchSecurity": {}}


def test_fields_without_omitempty_are_always_written():
    assert b.to_dict(b.decode_instancetype_spec({})) == {"cpu": {"guest": 0}, "memory": {"guest": "0"}}
    assert b.to_dict(b.decode_preference_spec({"requirements": {"cpu": {}}})) == {
        "requirements": {"cpu": {"guest": 0}}}


def test_keys_match_case_insensitively_and_unknown_keys_are_dropped():
    spec = b.decode_instancetype_spec({"CPU": {"Guest": 4}, "memory": {"guest": "1Gi"}, "bogus": 1})
    assert spec.cpu.guest == 4 and b.to_dict(spec) == {"cpu": {"guest": 4}, "memory": {"guest": "1Gi"}}


def test_null_means_absent():
    spec = b.decode_preference_spec({"cpu": None, "devices": {"preferredRng": None}})
    assert spec.cpu is None and spec.devices.preferred_rng is None


@pytest.mark.parametrize("spec, message", [
    ({"cpu": {"guest": -1}},
     "json: cannot unmarshal number -1 into Go struct field VirtualMachineInstancetype.spec.cpu.guest of type uint32"),
    ({"cpu": {"guest": 1.5}},
     "json: cannot unmarshal number 1.5 into Go struct field VirtualMachineInstancetype.spec.cpu.guest of type uint32"),
    ({"cpu": {"dedicatedCPUPlacement": "true"}},
     "json: cannot unmarshal string into Go struct field VirtualMachineInstancetype.spec.cpu.dedicatedCPUPlacement of type bool"),
    ({"gpus": [{"name": "a"}, {"name": 1}]},
     "json: cannot unmarshal number into Go struct field VirtualMachineInstancetype.spec.gpus.1.name of type string"),
    ({"gpus": [7]}, "json: cannot unmarshal number into VirtualMachineInstancetype.spec.gpus.0 of type v1.GPU"),
    ({"ioThreadsPolicy": 1},
     "json: cannot unmarshal number into Go struct field VirtualMachineInstancetype.spec.ioThreadsPolicy of type v1.IOThreadsPolicy"),
    ({"nodeSelector": {"a/b": 1}},
     "json: cannot unmarshal number into Go struct field VirtualMachineInstancetype.spec.nodeSelector.a~1b of type string"),
])
def test_decode_errors_are_gos(spec, message):
    with pytest.raises(DecodeError) as e:
        b.decode_instancetype_spec(spec)
    assert str(e.value) == message


def test_first_error_in_document_order_wins():
    with pytest.raises(DecodeError):
        b.decode_instancetype_spec({"cpu": {"guest": -1}, "memory": {"guest": "1 Gi"}})
    with pytest.raises(QuantityError):
        b.decode_instancetype_spec({"memory": {"guest": "1 Gi"}, "cpu": {"guest": -1}})


def test_preference_errors_name_the_preference_type():
    with pytest.raises(DecodeError) as e:
        b.decode_preference_spec({"cpu": {"preferredCPUTopology": 2}})
    assert str(e.value) == ("json: cannot unmarshal number into Go struct field VirtualMachinePreference."
                            "spec.cpu.preferredCPUTopology of type v1beta1.PreferredCPUTopology")


def test_quantities_come_out_canonical():
    pytest.importorskip("instancetype.api.quantity")
    spec = b.decode_instancetype_spec({"cpu": {"guest": 1}, "memory": {"guest": "1.5Gi", "maxGuest": 1024}})
    assert spec.memory.guest == "1536Mi" and spec.memory.max_guest == "1024"


def test_openapi_schema_required_and_ranges():
    s = b.openapi_schema(b.VirtualMachineInstancetypeSpec)
    assert s["required"] == ["cpu", "memory"]
    assert s["properties"]["cpu"]["properties"]["guest"] == {"type": "integer", "format": "int32"}
    assert s["properties"]["memory"]["properties"]["overcommitPercent"] == {
        "type": "integer", "minimum": 0, "maximum": 100}
    assert s["properties"]["gpus"]["x-kubernetes-list-type"] == "atomic"
    assert b.openapi_schema(b.VirtualMachinePreferenceSpec).get("required") is None
