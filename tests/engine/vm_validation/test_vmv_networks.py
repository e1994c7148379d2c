"""Networks and interfaces (KubeVirt pkg/network/admitter Validator.Validate / ValidateCreation)."""
from __future__ import annotations

import pytest
from vmv_helpers import admit, causes, clean_vm, tspec

T = "spec.template.spec"
IFACES = f"{T}.domain.devices.interfaces"


def _ifaces(vm):
    return tspec(vm)["domain"]["devices"]["interfaces"]


@pytest.mark.parametrize("edit, expected", [
    (lambda vm: _ifaces(vm)[0].pop("masquerade"), [
        ("FieldValueInvalid", "logical default interface must have exactly one binding method or binding plugin",
         f"{IFACES}[0]")]),
    (lambda vm: _ifaces(vm)[0].update(binding={"name": "passt"}), [
        ("FieldValueInvalid", "logical default interface must have exactly one binding method or binding plugin",
         f"{IFACES}[0]")]),
    (lambda vm: tspec(vm).update(networks=[{"name": "default", "multus": {"networkName": "br"}}]), [
        ("FieldValueInvalid", "Masquerade interface only implemented with pod network", f"{IFACES}[0].name")]),
    (lambda vm: tspec(vm)["networks"].append({"name": "extra", "multus": {"networkName": "br"}}), [
        ("FieldValueRequired", f"{T}.networks[1].name 'extra' not found.", f"{T}.networks[1].name")]),
    (lambda vm: _ifaces(vm).append({"name": "nic2", "bridge": {}}), [
        ("FieldValueInvalid", f"{IFACES}[1].name 'nic2' not found.", f"{IFACES}[1].name")]),
    (lambda vm: _ifaces(vm)[0].update(ports=[{"port": 80, "protocol": "SCTP"}]), [
        ("FieldValueInvalid", "Unknown protocol, only TCP or UDP allowed", f"{IFACES}[0].ports[0].protocol")]),
    (lambda vm: _ifaces(vm)[0].update(pciAddress="bogus"), [
        ("FieldValueInvalid", f"interface {IFACES}[0].name has malformed PCI address (bogus).",
         f"{IFACES}[0].pciAddress")]),
    (lambda vm: (tspec(vm)["networks"].append({"name": "second", "pod": {}}),
                 _ifaces(vm).append({"name": "second", "masquerade": {}})), [
        ("FieldValueDuplicate", f"more than one interface is connected to a pod network in {T}.interfaces",
         f"{T}.interfaces")]),
])
def test_network_rules(edit, expected):
    vm = clean_vm()
    edit(vm)
    assert causes(vm) == expected


def test_slirp_is_refused_on_create_only():
    vm = clean_vm()
    _ifaces(vm)[0] = {"name": "default", "slirp": {}}
    assert causes(vm) == [("FieldValueInvalid", "Slirp interface support has been discontinued since v1.3",
                           "spec.domain.devices.interfaces[0].slirp")]
    assert causes(vm, operation="UPDATE", old=vm) == []


def test_the_default_interface_of_the_cluster():
    vm = clean_vm()
    del _ifaces(vm)[0], tspec(vm)["networks"][0]
    res = admit(vm, config={"network": {"defaultNetworkInterface": "bridge",
                                        "permitBridgeInterfaceOnPodNetwork": False}})
    # the VMI spec defaults refuse first: a 400 without causes
    assert res == {"allowed": False, "causes": [], "code": 400, "stage": "validate",
                   "message": "bridge interface is not enabled in kubevirt-config"}


def test_discontinued_feature_gate_in_use_on_create():
    vm = clean_vm()
    _ifaces(vm)[0] = {"name": "default", "macvtap": {}}
    res = causes(vm, config={"developerConfiguration": {"featureGates": ["Macvtap"]}})
    assert res == [("FieldValueNotSupported", "Macvtap network binding is discontinued since v1.3. Please refer to "
                    "Kubevirt user guide for alternatives.", "")]
