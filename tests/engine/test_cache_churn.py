"""No process-global state changes an answer: the same request gives the identical answer before
and after heavy cache churn (engine/cache.py: caches keyed by content only, bounded, and the
guest quantity format carried inside the normalised spec)."""
from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.builders import vm

import instancetype
from instancetype.engine import spec as spec_module
from instancetype.engine import virt_config, vm_admission
from instancetype.engine.vm_validation import spec as vm_validation_spec

VM = vm("x", instancetype={"name": "it"}, preference={"name": "p"}, domain={"devices": {}},
        volumes=[{"name": "d", "containerDisk": {"image": "i"}}])
PREF = {"cpu": {"preferredCPUTopology": "spread"}, "devices": {"preferredDiskBus": "virtio"}}
CONFIG = {"vmRolloutStrategy": "Stage", "developerConfiguration": {"featureGates": ["Sidecar"]}}
# Guest memories whose format canonical text loses ("1.5Ki" prints "1536", which reads back as
# DecimalSI): the overcommitted request is printed in the guest's format.
GUESTS = ["2Ki", "1.5Ki", "1953.125Ki", "2G", "1536", "1Gi"]


def _probes():
    out = []
    for guest in GUESTS:
        it = {"cpu": {"guest": 2}, "memory": {"guest": guest, "overcommitPercent": 10}}
        out.append(("expand", it))
        out.append(("build_vmi", it))
    return out


def _answer(fn: str, it: dict, config=CONFIG) -> str:
    kw = {"whole": False} if fn == "admit_vm" else {}
    try:
        got = getattr(instancetype, fn)(VM, instancetype=copy.deepcopy(it), preference=copy.deepcopy(PREF),
                                        config=copy.deepcopy(config), **kw)
    except instancetype.Error as e:
        return f"{type(e).__name__}: {e}"
    if hasattr(got, "to_dict"):
        got = got.to_dict()
    return json.dumps(got, sort_keys=False, default=str)


def _fresh() -> dict:
    spec_module._BY_CONTENT.clear()
    spec_module._LAST[:] = [None, None]
    virt_config._CACHE.clear()
    vm_admission._ACCEPTED.clear()
    vm_validation_spec._PASSED.clear()
    return {(fn, json.dumps(it)): _answer(fn, it) for fn, it in _probes()}


FRESH = None


def _check_same() -> None:
    global FRESH
    if FRESH is None:
        FRESH = _fresh()
    for fn, it in _probes():
        assert _answer(fn, it) == FRESH[(fn, json.dumps(it))], (fn, it)


def test_the_format_of_the_guest_is_kept_in_the_answer():
    _fresh()
    out = json.loads(_answer("expand", {"cpu": {"guest": 2}, "memory": {"guest": "2Ki", "overcommitPercent": 50}}))
    assert out["spec"]["template"]["spec"]["domain"]["resources"]["requests"]["memory"] == "1Ki"


def test_thousands_of_distinct_specs_and_configs_change_no_answer():
    _check_same()
    for i in range(5000):      # more than every cache holds
        it = {"cpu": {"guest": 1 + i % 4}, "memory": {"guest": f"{i + 1}Mi", "overcommitPercent": i % 50}}
        instancetype.expand(VM, instancetype=it, preference=PREF,
                            config={"vmRolloutStrategy": "Stage", "machineType": f"pc-q35-{i % 300}"})
    _check_same()


def test_specs_msgpack_cannot_pack_change_no_answer():
    _check_same()
    for i in range(5000):      # more than every cache holds
        # an integer msgpack cannot hold (> 2**64), in a field the engine ignores: built, never cached
        it = {"cpu": {"guest": 2}, "memory": {"guest": GUESTS[i % len(GUESTS)], "overcommitPercent": 10},
              "annotationsX": 2 ** 70 + i}
        instancetype.expand(VM, instancetype=it, preference=PREF, config={**CONFIG, "x": 2 ** 70 + i})
    _check_same()


def test_specs_and_configs_mutated_after_the_call_change_no_answer():
    _check_same()
    for fn, it in _probes():
        mine = copy.deepcopy(it)
        config = copy.deepcopy(CONFIG)
        pref = copy.deepcopy(PREF)
        getattr(instancetype, fn)(VM, instancetype=mine, preference=pref, config=config)
        mine["memory"]["guest"] = "7Gi"            # the caller reuses its dicts
        mine["cpu"]["guest"] = 9
        pref["cpu"]["preferredCPUTopology"] = "cores"
        config["vmRolloutStrategy"] = "LiveUpdate"
        config["developerConfiguration"]["featureGates"].append("Macvtap")
    _check_same()


quantities = st.builds(lambda n, unit: f"{n}{unit}", st.integers(1, 10 ** 6),
                       st.sampled_from(["", "Ki", "Mi", "Gi", "k", "M", "G", "m", "e3"]))
churn_specs = st.fixed_dictionaries(
    {"cpu": st.fixed_dictionaries({"guest": st.integers(1, 8)}),
     "memory": st.fixed_dictionaries({"guest": quantities},
                                     optional={"overcommitPercent": st.integers(0, 99)})},
    optional={"nodeSelector": st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2),
              "extra": st.one_of(st.integers(2 ** 65, 2 ** 70), st.text(max_size=4))})


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(churn_specs, st.sampled_from(["expand", "build_vmi", "admit_vm"]), st.booleans()),
                min_size=1, max_size=40))
def test_any_churn_changes_no_answer(calls):
    for it, fn, mutate in calls:
        kw = {"whole": False} if fn == "admit_vm" else {}
        try:
            getattr(instancetype, fn)(VM, instancetype=it, preference=PREF, config=CONFIG, **kw)
        except instancetype.InternalError:
            raise
        except instancetype.Error:
            pass
        if mutate:
            it["memory"]["guest"] = "3Gi"
            it["cpu"]["guest"] = 3
    _check_same()


def test_a_template_accepted_once_is_checked_again_under_other_inputs():
    """engine/vm_admission keeps the templates its validating step accepted, by the content of the
    template, both specs and the configuration: the same template with a preference whose
    requirements the instancetype misses, or under a configuration that refuses its defaults,
    is still refused after it was accepted (and accepted again after)."""
    it = {"cpu": {"guest": 2}, "memory": {"guest": "1Gi"}}
    needy = {**PREF, "requirements": {"cpu": {"guest": 4}}}
    no_bridge = {"network": {"permitBridgeInterfaceOnPodNetwork": False}}
    vm_admission._ACCEPTED.clear()
    vm_validation_spec._PASSED.clear()

    def refused(pref, config) -> str | None:
        try:
            instancetype.build_vmi(VM, instancetype=copy.deepcopy(it), preference=copy.deepcopy(pref),
                                   config=copy.deepcopy(config))
        except instancetype.Error as e:
            return str(e)
        return None

    for _ in range(2):
        assert refused(PREF, CONFIG) is None
        assert "requirements" in (refused(needy, CONFIG) or "")
        assert refused(PREF, no_bridge) is not None
        assert instancetype.admit_vm(VM, instancetype=copy.deepcopy(it), preference=copy.deepcopy(needy),
                                     config=CONFIG).allowed is False
    assert len(vm_admission._ACCEPTED) == 1


def test_a_vm_spec_passed_once_is_validated_again_under_another_configuration():
    """engine/vm_validation keeps the VM specs ValidateVirtualMachineSpec passed, by the content
    of the spec and the configuration: a spec that passes with the DownwardMetrics gate is still
    refused without it after it passed, and passes again after."""
    from instancetype.engine.vm_validation import spec as validation

    vm_spec = {"runStrategy": "Always", "template": {"metadata": {}, "spec": {
        "domain": {"devices": {"downwardMetrics": {}}}}}}
    gated = validation.context({"developerConfiguration": {"featureGates": ["DownwardMetrics"]}})
    plain = validation.context({"vmRolloutStrategy": "Stage"})
    validation._PASSED.clear()
    for _ in range(2):
        assert validation.validate_vm_spec(copy.deepcopy(vm_spec), gated) == []
        assert validation.validate_vm_spec(copy.deepcopy(vm_spec), plain) != []
    assert len(validation._PASSED) == 1
