"""decode_instancetype / decode_preference: a spec decoded once answers as the dict it came from.

Every conformance case of expand, build_vmi and check_requirements that gives its specs directly
is answered twice, with the dicts and with the decoded specs, and the answers (or the errors)
must be the same."""
from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

import instancetype
from instancetype import DecodeError, Error

CONFORMANCE = pathlib.Path(__file__).parents[1] / "conformance"
CALLS = {"expand": "expand", "vmi": "build_vmi", "requirements": "check_requirements",
         "admit-vm": "admit_vm", "vm-admission": "admit_vm"}


def _cases() -> list[Any]:
    out = []
    for name in ("expand.jsonl", "vmi.jsonl", "requirements.jsonl", "admit-vm.jsonl", "vm-admission.jsonl"):
        for line in (CONFORMANCE / name).read_text().splitlines():
            case = json.loads(line)
            req = case["request"]
            if "finder" in req or "objects" in req or req.get("mode") or \
                    req.get("instancetype") is None or req.get("preference") is None:
                continue        # (specs looked up, or a mode the adapter maps: not the direct call)
            out.append(pytest.param(case["op"], req, id=case["id"]))
    return out


def _outcome(fn: Any, vm: Any, **kw: Any) -> Any:
    try:
        got = fn(vm, **kw)
        return "answer", got.to_dict() if hasattr(got, "to_dict") else got
    except Error as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("op,req", _cases())
def test_a_decoded_spec_answers_as_its_dict(op, req):
    fn = getattr(instancetype, CALLS[op])
    kw = {"config": req["config"]} if "config" in req else {}
    if op in ("admit-vm", "vm-admission"):
        kw.update(operation=req.get("operation") or "CREATE", old=req.get("oldVM"), whole=op == "vm-admission")
    want = _outcome(fn, req["vm"], instancetype=req["instancetype"], preference=req["preference"], **kw)
    try:
        it = instancetype.decode_instancetype(req["instancetype"])
        pref = instancetype.decode_preference(req["preference"])
    except Error:
        assert want[0] != "answer"      # a spec that does not decode: the dict call failed too
        return
    assert _outcome(fn, req["vm"], instancetype=it, preference=pref, **kw) == want
    assert _outcome(fn, req["vm"], instancetype=it, preference=pref, **kw) == want     # (reusable)


def test_a_decoded_spec_is_opaque_and_gives_its_spec_back():
    it = instancetype.decode_instancetype({"cpu": {"guest": 2}, "memory": {"guest": "1024Mi"}})
    assert repr(it) == "<decoded instancetype spec>"
    d = it.to_dict()
    assert d == {"cpu": {"guest": 2}, "memory": {"guest": "1Gi"}}
    d["cpu"]["guest"] = 99                  # a copy: the decoded spec is not changed
    assert it.to_dict() == {"cpu": {"guest": 2}, "memory": {"guest": "1Gi"}}
    assert instancetype.decode_instancetype(it) is it
    whole = {"kind": "VirtualMachineClusterPreference", "metadata": {"name": "p"},
             "spec": {"devices": {"preferredDiskBus": "virtio"}}}
    assert instancetype.decode_preference(whole).to_dict() == whole["spec"]


def test_a_decoded_spec_of_the_other_kind_is_refused():
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "v"},
          "spec": {"instancetype": {"name": "i"}, "preference": {"name": "p"}, "template": {"spec": {}}}}
    pref = instancetype.decode_preference({"devices": {"preferredDiskBus": "virtio"}})
    with pytest.raises(DecodeError, match="a decoded preference spec was given as the instancetype"):
        instancetype.expand(vm, instancetype=pref)


def test_bad_specs_are_refused_when_decoded_with_the_errors_expand_gives():
    for bad in ({"cpu": {"guest": "two"}}, {"memory": {"guest": "lots"}}, {"cpu": [1]}, [1], None):
        with pytest.raises(Error) as decoding:
            instancetype.decode_instancetype(bad)
        assert "bug" not in str(decoding.value)


def test_a_decoded_spec_is_only_made_by_the_decoders():
    with pytest.raises(TypeError, match="decode_instancetype"):
        instancetype.DecodedSpec("it", {"cpu": {"guest": 2}})
