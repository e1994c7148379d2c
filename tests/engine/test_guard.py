"""Engine bugs surface as bugs, bad input as input errors (engine/guard.py).

Only what is known to mean bad input becomes a `DecodeError`: data no JSON document can hold, or
values Go's decoder refuses. On well-formed input an unexpected exception is an `InternalError`
(an `instancetype.Error`, never a `DecodeError`) that says it is a bug in instancetype."""
from __future__ import annotations

import pytest
from tests.builders import vm
from tests.cli._helpers import run

import instancetype
from instancetype.engine import cache as cache_module

VM = vm("x", instancetype={"name": "it"}, preference={"name": "p"}, domain={"devices": {}},
        volumes=[{"name": "d", "containerDisk": {"image": "i"}}])
IT = {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}
PREF = {"devices": {"preferredDiskBus": "virtio"}}


@pytest.fixture
def typo_in_a_handler(monkeypatch):
    """A bug on every spec lookup, found or not. (Planted in `cache.py`'s methods, which the
    compiled build calls by name: there a compiled caller calls a compiled function directly, and
    a dict's own `get` as a dict's, so replacing those would not reach them.)"""
    def buggy(*args, **kw):
        return {}["typo"]

    monkeypatch.setattr(cache_module.ContentCache, "hit", buggy)
    monkeypatch.setattr(cache_module.ContentCache, "put", buggy)


@pytest.mark.parametrize("fn", ["expand", "build_vmi", "admit_vm"])
def test_a_bug_on_well_formed_input_is_an_internal_error(typo_in_a_handler, fn):
    with pytest.raises(instancetype.InternalError) as info:
        getattr(instancetype, fn)(VM, instancetype=IT, preference=PREF)
    e = info.value
    assert not isinstance(e, instancetype.DecodeError) and isinstance(e, instancetype.Error)
    assert "this is a bug in instancetype" in str(e) and "KeyError: 'typo'" in str(e)
    assert isinstance(e.__cause__, KeyError) and "\n" not in str(e)


def test_a_bug_is_still_explained_by_bad_input_when_there_is_some(typo_in_a_handler):
    bad = {**VM, "spec": {**VM["spec"], "template": "not an object"}}
    with pytest.raises(instancetype.DecodeError, match="spec.template"):
        instancetype.expand(bad, instancetype=IT, preference=PREF)


def test_the_cli_says_it_is_a_bug_in_one_line(typo_in_a_handler, tmp_path):
    f = tmp_path / "vm.yaml"
    import yaml

    f.write_text(yaml.safe_dump_all([
        VM, {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
             "metadata": {"name": "it"}, "spec": IT},
        {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterPreference",
         "metadata": {"name": "p"}, "spec": PREF}]))
    r = run(tmp_path / "s.db", "expand", "-f", str(f))
    assert r.code == 1
    lines = [line for line in r.err.splitlines() if line.strip()]
    assert len(lines) == 1 and "this is a bug in instancetype" in lines[0], r.err
    assert "Traceback" not in r.err


# --- wrong types through the Python API: only instancetype.Error --------------------------------
def _vm(**spec):
    return {**VM, "spec": {**VM["spec"], **spec}}


@pytest.mark.parametrize("call", [
    lambda: instancetype.expand(VM, instancetype=IT, preference={0: {}}, config={False: "Halted"}),
    lambda: instancetype.expand(VM, instancetype={"cpu": {1: 2}, "memory": {"guest": "1Gi"}}, preference=PREF),
    lambda: instancetype.expand(VM, instancetype={"cpu": {"guest": b"1"}, "memory": {"guest": "1Gi"}}),
    lambda: instancetype.expand(VM, instancetype={"cpu": {"guest": 1}, "memory": {"guest": float("nan")}}),
    lambda: instancetype.expand(_vm(template={"spec": {"domain": {"devices": {}}, 3: 4}}), instancetype=IT),
    lambda: instancetype.expand(_vm(template={"spec": {"domain": {"devices": {"disks": (1, 2)}}}}), instancetype=IT),
    lambda: instancetype.build_vmi(VM, instancetype=IT, preference=PREF, config={"network": {1: b"x"}}),
    lambda: instancetype.build_vmi(VM, instancetype={"memory": {"guest": {"1Gi"}}}, preference=PREF),
    lambda: instancetype.infer(_vm(instancetype={"inferFromVolume": b"d"}), [{1: 2}]),
    lambda: instancetype.check_requirements(VM, instancetype=IT, preference={"requirements": {"cpu": {b"g": 1}}}),
])
def test_wrong_python_types_raise_only_input_errors(call):
    with pytest.raises(instancetype.Error) as info:
        call()
    assert not isinstance(info.value, instancetype.InternalError), info.value
    assert "\n" not in str(info.value)


def test_validate_answers_a_bad_request_for_a_non_string_key():
    obj = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
           "metadata": {"name": "x"}, "spec": {"cpu": {1: 2}}}
    res = instancetype.validate(obj)
    assert not res.allowed and res.code == 400 and "object key 1" in res.message


def test_validate_refuses_data_no_json_holds():
    obj = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
           "metadata": {"name": "x"}, "spec": {"cpu": {"guest": 1}, "memory": {"guest": b"1Gi"}}}
    try:
        res = instancetype.validate(obj)
    except instancetype.Error as e:
        assert not isinstance(e, instancetype.InternalError), e
    else:
        assert not res.allowed


def test_cyclic_and_deep_input_is_bad_input():
    cyclic = {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}
    cyclic["self"] = cyclic
    with pytest.raises(instancetype.DecodeError, match="contains itself"):
        instancetype.expand(VM, instancetype=cyclic)
    deep: dict = {}
    x = deep
    for _ in range(5000):
        x["a"] = {}
        x = x["a"]
    with pytest.raises(instancetype.Error) as info:
        instancetype.expand(_vm(template={"spec": {"domain": {"devices": {}}}, "metadata": {"labels": deep}}),
                            instancetype=IT)
    assert not isinstance(info.value, instancetype.InternalError)


# --- what the corpus fuzz (bench/fuzz.py --only corpus) found ----------------------------------
def test_null_list_items_are_read_as_go_reads_them():
    """Go decodes a null item of a struct list as the zero struct: well formed, answered."""
    with_nulls = _vm(template={"spec": {"domain": {"devices": {"disks": [None]}}, "volumes": [None]}})
    out = instancetype.expand(with_nulls, instancetype=IT, preference=PREF)
    assert out["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 1
    vmi = instancetype.build_vmi(with_nulls, instancetype=IT, preference=PREF)
    assert vmi["kind"] == "VirtualMachineInstance"


@pytest.mark.parametrize("call, text", [
    (lambda: instancetype.admit_vm(VM, instancetype=IT, config={"developerConfiguration": {"featureGates": 1.5}}),
     r"developerConfiguration.featureGates of type \[\]string"),
    (lambda: instancetype.expand(VM, objects=1.5), "objects: must be a list"),
    (lambda: instancetype.expand(VM, objects=[{"kind": "VirtualMachineClusterInstancetype",
                                               "metadata": {"name": "it", "namespace": {"a": 1}}}]),
     "metadata.namespace: must be a string"),
])
def test_badly_typed_configuration_and_objects_are_input_errors(call, text):
    with pytest.raises(instancetype.Error, match=text) as info:
        call()
    assert not isinstance(info.value, instancetype.InternalError)
