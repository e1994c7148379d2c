"""Audit of the expand path against KubeVirt v1.9's Go source, for inputs the public
conformance cases do not cover. Each test names the Go function whose behaviour it pins."""
from __future__ import annotations

import copy

import pytest
from tests import builders

from instancetype import expand

IT = {"cpu": {"guest": 4}, "memory": {"guest": "1Gi"}}


def make_vm(template_spec=None, it=True, pref=True) -> dict:
    """A VM naming the instancetype `it` and the preference `pref` (False: none)."""
    return builders.vm(template=template_spec, runStrategy="Always", instancetype={"name": "it"} if it else None,
                       preference={"name": "pref"} if pref else None)


def tspec(out):
    return out["spec"]["template"]["spec"]


# --- preferred CPU topology ----------------------------------------------------------------------

def test_empty_preferred_topology_gives_one_one_one():
    # preference/apply GetPreferredTopology returns the non-nil pointer's "" as is, and
    # apply/cpu.go applyGuestCPUTopology's switch matches no case: sockets = cores = threads = 1.
    out = expand(make_vm(), instancetype=IT, preference={"cpu": {"preferredCPUTopology": ""}})
    assert tspec(out)["domain"]["cpu"] == {"sockets": 1, "cores": 1, "threads": 1}


def test_null_preferred_topology_is_sockets():
    out = expand(make_vm(), instancetype=IT, preference={"cpu": {"preferredCPUTopology": None}})
    assert tspec(out)["domain"]["cpu"] == {"sockets": 4, "cores": 1, "threads": 1}


@pytest.mark.parametrize("across", ["", "Sockets", "socketscores"])
def test_unknown_spread_across_gives_one_one_one(across):
    # applyGuestCPUTopology: a spread `across` that is none of the three constants matches no case.
    pref = {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": across}}}
    out = expand(make_vm(), instancetype=IT, preference=pref)
    assert tspec(out)["domain"]["cpu"] == {"sockets": 1, "cores": 1, "threads": 1}


def test_zero_guest_vcpus():
    # cpu.guest 0 is not 1: the sockets case sets sockets = 0; SetDefaultGuestCPUTopology then leaves
    # the topology alone because cores and threads are not 0.
    out = expand(make_vm(pref=False), instancetype={"cpu": {"guest": 0}, "memory": {"guest": "1Gi"}})
    cpu = tspec(out)["domain"]["cpu"]
    assert (cpu.get("sockets", 0), cpu["cores"], cpu["threads"]) == (0, 1, 1)


# --- cluster configuration (virt-config setConfigFromKubeVirt: the CR's configuration is marshalled
# with omitempty and unmarshalled over the defaults) ------------------------------------------------

def test_empty_default_network_interface_is_bridge():
    out = expand(make_vm(pref=False), instancetype=IT, preference=None, config={"network": {"defaultNetworkInterface": ""}})
    assert tspec(out)["domain"]["devices"]["interfaces"] == [{"name": "default", "bridge": {}}]


def test_empty_arch_machine_type_keeps_the_default():
    cfg = {"architectureConfiguration": {"amd64": {"machineType": ""}}}
    out = expand(make_vm(pref=False), instancetype=IT, preference=None, config=cfg)
    assert tspec(out)["domain"]["machine"] == {"type": "q35"}


def test_null_eviction_strategy_keeps_the_default():
    out = expand(make_vm(pref=False), instancetype=IT, preference=None, config={"evictionStrategy": None})
    assert tspec(out)["evictionStrategy"] == "None"


def test_empty_eviction_strategy_is_kept():
    # EvictionStrategy is a pointer: "" survives omitempty and replaces the default.
    out = expand(make_vm(pref=False), instancetype=IT, preference=None, config={"evictionStrategy": ""})
    assert tspec(out)["evictionStrategy"] == ""


# --- inputs are never mutated ----------------------------------------------------------------------

def test_inputs_untouched():
    vm = make_vm({"domain": {"devices": {"disks": [{"name": "d"}]}}, "volumes": [{"name": "v", "containerDisk": {"image": "x"}}]})
    it = {"cpu": {"guest": 2, "numa": {"guestMappingPassthrough": {}}}, "memory": {"guest": "1Gi", "hugepages": {"pageSize": "2Mi"}},
          "gpus": [{"name": "g", "deviceName": "x"}], "annotations": {"a": "b"}, "nodeSelector": {"k": "v"}}
    pref = {"devices": {"preferredDiskBus": "virtio", "preferredTPM": {}, "preferredRng": {}},
            "features": {"preferredHyperv": {"relaxed": {}}}, "firmware": {"preferredEfi": {"secureBoot": True}},
            "clock": {"preferredTimer": {"hpet": {}}}, "annotations": {"p": "q"}}
    before = copy.deepcopy((vm, it, pref))
    out = expand(vm, instancetype=it, preference=pref)
    assert (vm, it, pref) == before
    # and the output shares nothing mutable with the preference/instancetype
    tspec(out)["domain"]["devices"]["tpm"]["x"] = 1
    tspec(out)["domain"]["cpu"]["numa"]["x"] = 1
    assert (vm, it, pref) == before


# --- features ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("passthrough,applied", [
    ({"enabled": True}, False), ({"enabled": False}, True), ({}, True), (None, True)])
def test_hyperv_preferences_skip_passthrough(passthrough, applied):
    # preference/apply/features.go applyFeaturePreferences: PreferredHyperv is applied only when
    # HypervPassthrough is nil, has no Enabled, or is not enabled.
    features = {} if passthrough is None else {"hypervPassthrough": passthrough}
    vm = make_vm({"domain": {"features": features}}, it=False)
    out = expand(vm, preference={"features": {"preferredHyperv": {"relaxed": {}}, "preferredSmm": {}}})
    feats = tspec(out)["domain"]["features"]
    assert ("hyperv" in feats) is applied
    assert feats["smm"] == {}


# --- find: ControllerRevisions are read by engine/revisions.py (compatibility.GetInstancetypeSpec) ----

def _cr(name, data):
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": name, "namespace": "ns"},
            "data": data, "revision": 1}


def test_revision_name_wins_over_an_unknown_kind():
    # find/spec.go Find: the revision is looked up before the matcher's kind is switched on.
    vm = make_vm(pref=False)
    vm["spec"]["instancetype"] = {"name": "it", "kind": "vmf", "revisionName": "r"}
    stored = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
              "metadata": {"name": "it"}, "spec": IT}
    out = expand(vm, objects=[_cr("r", stored)])
    assert tspec(out)["domain"]["cpu"] == {"sockets": 4, "cores": 1, "threads": 1}


def test_revision_of_the_other_side_is_unexpected_type():
    from instancetype.errors import DecodeError

    vm = make_vm(pref=False)
    vm["spec"]["instancetype"] = {"name": "it", "revisionName": "r"}
    stored = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterPreference",
              "metadata": {"name": "p"}, "spec": {}}
    with pytest.raises(DecodeError) as e:
        expand(vm, objects=[_cr("r", stored)])
    assert str(e.value) == "unexpected type in ControllerRevision: *v1beta1.VirtualMachineClusterPreference"


# --- robustness: mutated public cases end in a result or an instancetype.Error ----------------------

def test_mutated_public_cases_raise_only_instancetype_errors():
    import json
    import pathlib
    import random

    from instancetype.conformance import _lookup_kwargs
    from instancetype.errors import Error, InternalError

    here = pathlib.Path(__file__).resolve().parents[1] / "conformance"
    cases = [json.loads(line)["request"] for line in (here / "expand.jsonl").read_text().splitlines()[:300]]
    values = [None, {}, [], "", 0, -1, True, "abc", 2 ** 70, 1.5, "1.5Gi", "-1", [{}], "spread", "CoresThreads"]
    rng = random.Random(7)

    def paths(x, p=()):
        yield p
        items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
        for k, v in items:
            yield from paths(v, p + (k,))

    expanded = refused = 0
    for _ in range(400):
        req = copy.deepcopy(rng.choice(cases))
        for _ in range(rng.randint(1, 3)):
            target = rng.choice(["vm", "instancetype", "preference"])
            root = req.get(target)
            if not isinstance(root, (dict, list)):
                continue
            p = rng.choice(list(paths(root)))
            if not p:
                continue
            parent = root
            for k in p[:-1]:
                parent = parent[k]
            if isinstance(parent, dict) and rng.random() < 0.3:
                del parent[p[-1]]
            else:
                parent[p[-1]] = copy.deepcopy(rng.choice(values))
        before = copy.deepcopy(req)
        try:
            out = expand(req["vm"], **_lookup_kwargs(req))
        except Error as e:
            assert type(e) is not Error and str(e).strip(), repr(e)
            assert not isinstance(e, InternalError), repr(e)     # a bug, not bad input
            refused += 1
        else:
            # Expand answers the VM with the matchers gone (or the VM itself when it has none)
            assert isinstance(out, dict) and "instancetype" not in (out.get("spec") or {}), out
            assert "preference" not in (out.get("spec") or {}), out
            expanded += 1
        assert req == before, "expand mutated its input"
    assert expanded > 50 and refused > 50, (expanded, refused)


@pytest.mark.parametrize("arch,machine", [("arm64", "virt"), ("s390x", "s390-ccw-virtio"), ("amd64", "q35"),
                                          ("ppc64le", "q35"), ("riscv64", "q35")])
def test_machine_type_per_architecture(arch, machine):
    # virt-config ClusterConfig.GetMachineType: arm64 and s390x have their own case, anything else
    # reads the amd64 configuration.
    out = expand(make_vm({"domain": {}, "architecture": arch}, pref=False), instancetype=IT)
    assert tspec(out)["domain"]["machine"] == {"type": machine}
