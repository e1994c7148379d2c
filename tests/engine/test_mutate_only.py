"""admit_vm(mutate_only=True): the mutating webhook alone answers as the whole admission's first step.

A cluster's mutating webhook answers with the mutated VM and leaves every refusal of the validating
step to the validating webhook, which the API server calls next. That is sound only if the
validating step never changes the VM: every whole-admission conformance case is answered both ways
and the mutated VMs (or the mutating step's refusal) must be the same."""
from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

import instancetype
from instancetype import Error

CONFORMANCE = pathlib.Path(__file__).parents[1] / "conformance"


def _cases() -> list[Any]:
    out = []
    for line in (CONFORMANCE / "vm-admission.jsonl").read_text().splitlines():
        case = json.loads(line)
        out.append(pytest.param(case["request"], id=case["id"]))
    return out


def _call(req: dict, **kw: Any) -> Any:
    args = {k: req[k] for k in ("instancetype", "preference", "config", "objects") if k in req}
    try:
        return instancetype.admit_vm(req["vm"], operation=req.get("operation") or "CREATE",
                                     old=req.get("oldVM"), **args, **kw)
    except Error as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("req", _cases())
def test_the_mutating_step_alone_leaves_the_vm_the_whole_admission_leaves(req):
    whole = _call(req)
    alone = _call(req, mutate_only=True)
    if isinstance(whole, tuple) or whole.stage == "mutate":
        assert (alone if isinstance(alone, tuple) else alone.to_dict()) == \
            (whole if isinstance(whole, tuple) else whole.to_dict())
        return
    assert alone.allowed and alone.stage == "mutate" and not alone.warnings
    assert alone.vm == whole.vm


def test_mutate_only_skips_what_only_the_validating_webhook_refuses():
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "v", "namespace": "ns"},
          "spec": {"instancetype": {"name": "it"}, "template": {"spec": {"domain": {"cpu": {"cores": 2}, "devices": {}}}}}}
    it = {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}
    whole = instancetype.admit_vm(vm, instancetype=it)
    assert not whole.allowed and whole.stage == "validate"      # the template's CPU conflicts
    alone = instancetype.admit_vm(vm, instancetype=it, mutate_only=True)
    assert alone.allowed and alone.stage == "mutate" and alone.vm == whole.vm
