"""Preference application on arbitrary JSON shapes: never raises, never mutates the preference."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from instancetype.engine.preference import apply_autoattach, apply_preference
from instancetype.engine.requirements import check
from instancetype.errors import DecodeError, Error, RequirementsError
from instancetype.jsonutil import clone

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 8), st.sampled_from(["", "virtio", "amd64", "x"]))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["name", "bus", "model", "pod", "disk", "cdrom", "lun", "efi", "bios"]),
                    inner, max_size=3)), max_leaves=8)

PREF_KEYS = ["cpu", "devices", "features", "firmware", "machine", "clock", "preferredSubdomain",
             "preferredTerminationGracePeriodSeconds", "preferredArchitecture", "annotations",
             "preferredLaunchSecurity", "requirements"]
DEVICE_KEYS = ["preferredDiskBus", "preferredInterfaceModel", "preferredInterfaceMasquerade",
               "preferredInputBus", "preferredPanicDeviceModel", "preferredVideoType", "preferredTPM",
               "preferredAutoattachPodInterface", "preferredSoundModel", "preferredDiskBlockSize"]

preferences = st.fixed_dictionaries({}, optional={
    **{k: json_values for k in PREF_KEYS},
    "devices": st.dictionaries(st.sampled_from(DEVICE_KEYS), json_values, max_size=5),
})
specs = st.fixed_dictionaries({}, optional={
    "domain": st.fixed_dictionaries({}, optional={
        "devices": st.dictionaries(st.sampled_from(["disks", "interfaces", "inputs", "panicDevices", "sound",
                                                    "video", "tpm"]), json_values, max_size=4),
        "cpu": json_values, "features": json_values, "firmware": json_values, "clock": json_values}),
    "networks": json_values, "architecture": scalars,
})


@settings(max_examples=300, deadline=None)
@given(preferences, specs)
def test_never_raises_and_never_mutates_preference(pref, spec):
    before = clone(pref)
    apply_preference(pref, spec, metadata={})
    apply_autoattach(pref, spec)
    assert pref == before


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["cpu", "memory", "architecture"]), json_values, max_size=3), specs)
def test_check_only_raises_our_errors(reqs, spec):
    before = clone(spec)
    try:
        err = check({"requirements": reqs}, None, spec)
    except Error as e:      # a requirement Go could not have decoded
        assert isinstance(e, DecodeError) and "requirements" in str(e), repr(e)
        return
    assert spec == before
    if err is not None:     # returned, not raised: VM admission wraps it in its cause
        assert isinstance(err, RequirementsError), repr(err)
        assert err.fields and all(f.startswith("spec.template.spec.") for f in err.fields), err.fields
        assert str(err).startswith(("insufficient ", "no ", "preference requires ")), str(err)
