"""Malformed VMs and objects never escape admit_vm, infer or build_vmi as anything but an
instancetype.Error (fuzzed with hypothesis, bounded)."""
from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import instancetype as it
from instancetype.engine.results import AdmissionResult
from instancetype.errors import DecodeError, InferError, VMIError

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10), st.text(max_size=6),
                    st.sampled_from(["1Gi", "2", "bad-q", "Ignore", "Reject", "", "rootdisk"]))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)), max_leaves=8)


def mostly(strategy):
    """Usually the well-formed shape, sometimes anything (so the deep code is reached too)."""
    return st.one_of(strategy, strategy, strategy, json_values)


def matcher():
    return mostly(
        st.fixed_dictionaries({}, optional={
            "name": st.one_of(st.sampled_from(["u1.small", ""]), json_values),
            "kind": st.one_of(st.sampled_from(["VirtualMachineInstancetype", "virtualmachinepreferences", "x", ""]),
                              json_values),
            "revisionName": st.one_of(st.just("rev-1"), json_values),
            "inferFromVolume": st.one_of(st.sampled_from(["rootdisk", "missing"]), json_values),
            "inferFromVolumeFailurePolicy": st.one_of(st.sampled_from(["Ignore", "Reject", "x"]), json_values),
        }))


volume = mostly(st.fixed_dictionaries({}, optional={
    "name": st.one_of(st.just("rootdisk"), json_values),
    "persistentVolumeClaim": st.one_of(st.just({"claimName": "pvc"}), json_values),
    "dataVolume": st.one_of(st.just({"name": "dv"}), json_values),
    "containerDisk": st.one_of(st.just({"image": "img:latest"}), json_values),
}))

template_spec = mostly(st.fixed_dictionaries({}, optional={
    "domain": mostly(st.fixed_dictionaries({}, optional={
        "cpu": mostly(st.fixed_dictionaries({}, optional={
            "sockets": st.integers(0, 4), "cores": st.integers(0, 4), "model": st.text(max_size=4),
            "features": json_values, "numa": json_values, "realtime": json_values})),
        "memory": st.one_of(st.just({"guest": "1Gi"}), st.just({"hugepages": {"pageSize": "2Mi"}}), json_values),
        "resources": mostly(st.fixed_dictionaries({}, optional={
            "requests": st.dictionaries(st.sampled_from(["cpu", "memory"]), st.sampled_from(["1", "1Gi", "x"])),
            "limits": json_values})),
        "devices": mostly(st.fixed_dictionaries({}, optional={
            "disks": st.lists(mostly(st.fixed_dictionaries({"name": st.just("rootdisk")}, optional={
                "disk": json_values, "cdrom": json_values, "lun": json_values, "blockSize": json_values})),
                max_size=2),
            "interfaces": json_values, "inputs": json_values, "watchdog": json_values, "gpus": json_values,
            "autoattachInputDevice": st.booleans(), "autoattachPodInterface": st.booleans(),
            "rng": json_values})),
        "machine": json_values, "firmware": json_values, "clock": json_values,
        "features": mostly(st.fixed_dictionaries({}, optional={
            "acpi": json_values, "apic": json_values, "smm": json_values,
            "hyperv": mostly(st.fixed_dictionaries({}, optional={
                k: json_values for k in ("evmcs", "vapic", "ipi", "vpindex", "synic", "synictimer",
                                         "tlbflush", "spinlocks")}))})),
        "launchSecurity": json_values,
    })),
    "volumes": st.one_of(st.lists(volume, max_size=3), json_values),
    "networks": json_values,
    "architecture": json_values,
}))

vms = st.fixed_dictionaries({}, optional={
    "apiVersion": json_values,
    "kind": json_values,
    "metadata": st.one_of(st.just({"name": "vm", "namespace": "ns"}), json_values),
    "spec": mostly(st.fixed_dictionaries({}, optional={
        "instancetype": matcher(),
        "preference": matcher(),
        "dataVolumeTemplates": st.one_of(
            st.lists(st.one_of(json_values, st.just({"metadata": {"name": "dv"},
                                                     "spec": {"sourceRef": {"kind": "DataSource", "name": "ds"}}})),
                     max_size=2), json_values),
        "template": mostly(st.fixed_dictionaries({}, optional={
            "metadata": json_values, "spec": template_spec})),
        "runStrategy": json_values,
    })),
    "status": json_values,
})

objects = st.lists(st.one_of(
    json_values,
    st.fixed_dictionaries({"kind": st.sampled_from(["PersistentVolumeClaim", "DataVolume", "DataSource",
                                                    "VolumeSnapshot", "ControllerRevision", "Unknown",
                                                    "VirtualMachineClusterInstancetype"]),
                           "metadata": st.one_of(json_values, st.just({"name": "pvc", "labels": {
                               "instancetype.kubevirt.io/default-instancetype": "u1.small"}}))},
                          optional={"spec": json_values, "data": json_values}),
), max_size=3)

specs = st.one_of(st.none(), json_values, st.just({"cpu": {"guest": 2}, "memory": {"guest": "1Gi"}}),
                  st.just({"cpu": {"preferredCPUTopology": "spread"}}),
                  st.fixed_dictionaries({}, optional={
                      "cpu": json_values, "memory": json_values, "devices": json_values, "features": json_values,
                      "firmware": json_values, "machine": json_values, "requirements": json_values,
                      "preferredArchitecture": json_values, "volumes": json_values}))


def _only_errors(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except it.Error as e:
        msg = str(e)
        assert msg.strip() and "Traceback" not in msg, repr(msg)
        assert type(e) is not it.Error, repr(e)
        assert not isinstance(e, it.InternalError), repr(e)     # a bug, not bad input
        assert "\n" not in msg, repr(msg)
        return None


@SETTINGS
@given(vm=vms, objs=objects)
def test_infer_raises_only_errors(vm, objs):
    before = copy.deepcopy(vm)
    res = _only_errors(it.infer, vm, objs)
    assert vm == before
    if res is not None:
        # the answer's matchers are the ones written into its VM; inference leaves none to do
        for side, matcher in (("instancetype", res.instancetype), ("preference", res.preference)):
            if matcher is not None:
                assert res.vm["spec"][side] == matcher
                assert not matcher.get("inferFromVolume"), matcher


@SETTINGS
@given(vm=vms, old=st.one_of(st.none(), vms), objs=objects, ispec=specs, pspec=specs,
       operation=st.sampled_from(["CREATE", "UPDATE"]))
def test_admit_vm_raises_only_errors(vm, old, objs, ispec, pspec, operation):
    res = _only_errors(it.admit_vm, vm, operation=operation, old=old, instancetype=ispec, preference=pspec,
                       objects=objs)
    if res is not None:
        assert isinstance(res, AdmissionResult)
        assert res.stage in ("mutate", "validate")
        d = res.to_dict()
        assert d["allowed"] is res.allowed
        if not res.allowed:     # a refusal is an AdmissionReview status: a code and a message
            assert d["code"] in (400, 422) and d["message"], d


@SETTINGS
@given(vm=vms, objs=objects, ispec=specs, pspec=specs)
def test_build_vmi_raises_only_errors(vm, objs, ispec, pspec):
    vmi = _only_errors(it.build_vmi, vm, instancetype=ispec, preference=pspec, objects=objs)
    if vmi is not None:
        assert vmi["kind"] == "VirtualMachineInstance"
        assert vmi["status"]["phase"] == "Pending"


NOT_A_STRUCT = "json: cannot unmarshal {} into Go struct field VirtualMachine.spec.{} of type struct"
NO_VOLUME = "unable to find volume x to infer defaults"
WEIRD_OBJECTS = [{"kind": "Gadget", "metadata": {"name": "g"}}, {"kind": "PersistentVolumeClaim"}]


@pytest.mark.parametrize("vm", [
    {"spec": {}},                                                                 # no spec.template
    {"spec": {"template": {"spec": {"volumes": [{}, {"containerDisk": {}}]}}}},   # volumes without names
])
def test_malformed_shapes_without_matchers_are_defaulted(vm):
    """Without a matcher there is nothing to infer or apply: KubeVirt only defaults the template."""
    res = it.infer(vm, WEIRD_OBJECTS)
    assert (res.instancetype, res.preference, res.vm) == (None, None, vm)
    # the instancetype part of admission (whole=False): the whole VM admission would refuse
    # these shapes earlier, at the CRD schema
    adm = it.admit_vm(vm, objects=WEIRD_OBJECTS, whole=False)
    assert (adm.allowed, adm.stage) == (True, "validate")
    tspec = adm.vm["spec"]["template"]["spec"]
    assert tspec["architecture"] == "amd64" and tspec["domain"] == {"machine": {"type": "q35"}}
    vmi = it.build_vmi(vm, objects=WEIRD_OBJECTS)
    assert vmi["status"]["phase"] == "Pending"
    assert vmi["spec"]["domain"]["cpu"]["sockets"] == 1
    # SetDefaultVolumeDisk: one disk a volume, named as the volume (here "")
    volumes = vm["spec"].get("template", {}).get("spec", {}).get("volumes", [])
    assert vmi["spec"]["domain"]["devices"].get("disks", []) == [{"name": "", "disk": {"bus": "sata"}}] * len(volumes)


NO_NAME = 'virtualmachineclusterinstancetypes.instancetype.kubevirt.io "" not found'


@pytest.mark.parametrize("vm, error, message, vmi_error, vmi_message", [
    ({"spec": {"instancetype": "u1.small", "template": {}}}, DecodeError, NOT_A_STRUCT.format("string", "instancetype"),
     DecodeError, NOT_A_STRUCT.format("string", "instancetype")),
    ({"spec": {"preference": ["x"], "template": {}}}, DecodeError, NOT_A_STRUCT.format("array", "preference"),
     DecodeError, NOT_A_STRUCT.format("array", "preference")),
    # not inferred at admission, the VM controller looks the nameless matcher up (default kind)
    ({"spec": {"instancetype": {"inferFromVolume": "x"}, "template": {"spec": {"volumes": [{}]}}}},
     InferError, NO_VOLUME, VMIError, NO_NAME),
])
def test_malformed_shapes_with_matchers_are_refused(vm, error, message, vmi_error, vmi_message):
    """A matcher that is not a mapping is Go's decode error; a missing volume is infer's own error."""
    with pytest.raises(error) as e:
        it.infer(vm, WEIRD_OBJECTS)
    assert str(e.value) == message
    adm = it.admit_vm(vm, objects=WEIRD_OBJECTS, whole=False).to_dict()
    assert (adm["allowed"], adm["code"], adm["stage"], adm["message"]) == (False, 400, "mutate", message)
    with pytest.raises(vmi_error) as e:
        it.build_vmi(vm, objects=WEIRD_OBJECTS)
    assert str(e.value) == vmi_message
