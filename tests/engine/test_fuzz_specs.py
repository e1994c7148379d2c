"""Badly typed instancetype and preference specs end as `instancetype.Error`, never another exception."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.builders import vm

import instancetype

BASE_VM = vm("x", instancetype={"name": "it"}, preference={"name": "p"}, domain={"devices": {}},
              volumes=[{"name": "d", "containerDisk": {"image": "i"}}])
IT = {"cpu": {"guest": 2}, "memory": {"guest": "1Gi"}}
PREF = {"cpu": {"preferredCPUTopology": "spread"}, "devices": {"preferredDiskBus": "virtio"}}

values = st.one_of(st.none(), st.booleans(), st.integers(-3, 2**40), st.text(max_size=5),
                   st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
it_fields = st.sampled_from(["nodeSelector", "schedulerName", "gpus", "hostDevices", "ioThreadsPolicy", "ioThreads",
                             "launchSecurity", "annotations", "cpu", "memory"])
pref_fields = st.sampled_from(["cpu", "devices", "features", "firmware", "machine", "clock", "annotations",
                               "preferredTerminationGracePeriodSeconds", "requirements", "volumes",
                               "preferredSubdomain", "preferredArchitecture"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(it_fields, values, pref_fields, values, st.sampled_from(["expand", "admit_vm", "build_vmi"]))
def test_bad_specs_raise_only_errors(it_field, it_value, pref_field, pref_value, fn):
    it = dict(IT, **{it_field: it_value})
    pref = dict(PREF, **{pref_field: pref_value})
    try:
        # admit_vm's instancetype part (whole=False): the whole VM admission refuses many of
        # these applied specs for reasons of its own (feature gates, Go type names)
        kwargs = {"whole": False} if fn == "admit_vm" else {}
        out = getattr(instancetype, fn)(BASE_VM, instancetype=it, preference=pref, **kwargs)
    except instancetype.Error as e:
        # Go's decoder names the field it could not read (e.g. `spec.nodeSelector`)
        assert not isinstance(e, instancetype.InternalError), repr(e)     # a bug, not bad input
        assert type(e) is not instancetype.Error and (it_field in str(e) or pref_field in str(e)), repr(e)
        return
    if fn == "expand":
        assert out["kind"] == "VirtualMachine" and "instancetype" not in out["spec"], out
    elif fn == "admit_vm":
        assert out.allowed or it_field in out.message or pref_field in out.message, out.to_dict()
    else:
        assert out["kind"] == "VirtualMachineInstance" and out["status"]["phase"] == "Pending", out


@pytest.mark.parametrize("fn", ["expand", "admit_vm", "build_vmi"])
def test_named_bad_specs(fn):
    with pytest.raises(instancetype.Error, match="spec.nodeSelector"):
        r = getattr(instancetype, fn)(BASE_VM, instancetype=dict(IT, nodeSelector=[1]), preference=PREF)
        if getattr(r, "allowed", True) is False:
            raise instancetype.Error(r.message)
