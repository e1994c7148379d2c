"""Removed versions: the CRDs' None strategy, ControllerRevision payloads, the flavor API."""
import base64
import json

import pytest

from instancetype.api import v1alpha as a
from instancetype.errors import DecodeError, UnexpectedKindError


def _wrap(spec):
    return {"apiVersion": "", "spec": base64.b64encode(json.dumps(spec).encode()).decode()}


def test_none_strategy_only_changes_api_version():
    obj = {"apiVersion": "instancetype.kubevirt.io/v1alpha2", "kind": "VirtualMachinePreference",
           "metadata": {"name": "p"}, "spec": {"cpu": {"preferredCPUTopology": "preferCores"}, "x": 1}}
    out, warnings = a.convert_to_v1beta1(obj)
    assert out == {**obj, "apiVersion": "instancetype.kubevirt.io/v1beta1"}
    assert obj["apiVersion"].endswith("v1alpha2")  # input untouched
    assert warnings == ["instancetype.kubevirt.io/v1alpha2 VirtualMachinePreferences is now deprecated "
                        "and will be removed in v1."]


def test_cluster_instancetype_warning_keeps_kubevirts_spelling():
    assert a.deprecation_warning("v1alpha1", "VirtualMachineClusterInstancetype") == (
        "instancetype.kubevirt.io/v1alpha1 VirtualMachineClusterInstanceTypes is now deprecated "
        "and will be removed in v1.")


def test_v1beta1_passes_through_and_unknown_kinds_fail():
    obj = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype", "spec": {}}
    assert a.convert_to_v1beta1(obj) == (obj, [])
    with pytest.raises(UnexpectedKindError):
        a.convert_to_v1beta1({"apiVersion": "instancetype.kubevirt.io/v1beta1",
                              "kind": "VirtualMachineInstanceType", "spec": {}})


def test_spec_revision_wrapper_of_seed_003_is_an_instancetype():
    out = a.convert_revision_data({"apiVersion": "",
                                   "spec": "eyJjcHUiOnsiZ3Vlc3QiOjF9LCJtZW1vcnkiOnsiZ3Vlc3QiOiIxMjhNaSJ9fQ=="})
    assert out == {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
                   "metadata": {"name": "old-version-of-instancetype-object"},
                   "spec": {"cpu": {"guest": 1, "model": "", "dedicatedCPUPlacement": False,
                                    "isolateEmulatorThread": False}, "memory": {"guest": "128Mi"}}}


def test_spec_revision_wrapper_tries_preference_first():
    out = a.convert_revision_data(_wrap({"cpu": {"preferredCPUTopology": "preferSockets"}}))
    assert out["kind"] == "VirtualMachinePreference"
    assert out["metadata"]["name"] == "old-version-of-preference-object"
    assert out["spec"] == {"cpu": {"preferredCPUTopology": "preferSockets"}}


def test_generated_conversion_drops_v1beta1_only_fields_and_empty_topology():
    out = a.convert_revision_data({
        "apiVersion": "instancetype.kubevirt.io/v1alpha1", "kind": "VirtualMachinePreference",
        "metadata": {"name": "p"},
        "spec": {"cpu": {"preferredCPUTopology": ""}, "volumes": {"preferredStorageClassName": "x"},
                 "preferredArchitecture": "arm64"}})
    assert out["spec"] == {"cpu": {}}  # v1alpha1 had no volumes


def test_revision_with_unknown_kind_fails():
    with pytest.raises(DecodeError, match="unexpected type in ControllerRevision"):
        a.convert_revision_data({"apiVersion": "apps/v1", "kind": "Deployment"})


def test_flavor_objects_become_instancetypes():
    out, warnings = a.rewrite_flavor({"apiVersion": "flavor.kubevirt.io/v1alpha1", "kind": "VirtualMachineClusterFlavor",
                                      "metadata": {"name": "small"}, "spec": {"cpu": {"guest": 2}}})
    assert out["apiVersion"] == "instancetype.kubevirt.io/v1beta1"
    assert out["kind"] == "VirtualMachineClusterInstancetype"
    assert warnings == ["flavor.kubevirt.io/v1alpha1 VirtualMachineClusterFlavor is deprecated; "
                        "use instancetype.kubevirt.io/v1beta1 VirtualMachineClusterInstancetype"]


def test_vm_spec_flavor_becomes_spec_instancetype():
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
          "spec": {"flavor": {"kind": "virtualmachineflavors", "name": "small"}}}
    out, warnings = a.rewrite_flavor(vm)
    assert out["spec"] == {"instancetype": {"kind": "VirtualMachineInstancetype", "name": "small"}}
    assert warnings == ["flavor.kubevirt.io/v1alpha1 VirtualMachineFlavor is deprecated; "
                        "use instancetype.kubevirt.io/v1beta1 VirtualMachineInstancetype"]
    assert "flavor" in vm["spec"]


def test_never_shipped_names_are_left_alone():
    vm = {"kind": "VirtualMachine", "spec": {"instancetype": {"kind": "VirtualMachineInstanceType", "name": "x"}}}
    assert a.rewrite_flavor(vm) == (vm, [])
    with pytest.raises(UnexpectedKindError):
        a.rewrite_flavor({"apiVersion": "flavor.kubevirt.io/v1alpha1", "kind": "VirtualMachineInstanceType"})


def test_a_flavor_kind_that_is_not_a_string_is_an_unknown_kind():
    # found by the type checker: an unhashable kind used to raise TypeError from the dict lookup
    with pytest.raises(UnexpectedKindError, match=r'no kind "\[\]" is registered'):
        a.rewrite_flavor({"apiVersion": "flavor.kubevirt.io/v1alpha1", "kind": []})
