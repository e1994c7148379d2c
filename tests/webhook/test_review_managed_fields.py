"""An object the API server sends with `metadata.managedFields` (every stored object has them) is
answered exactly as the same object without: the VM schema check reads their field sets as the
opaque metav1.FieldsV1, no rule reads them, and a mutating webhook's patch never touches them."""
from __future__ import annotations

import copy

import pytest

from instancetype.webhook import review
from tests import builders

MANAGED = [{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "kubevirt.io/v1",
            "time": "2026-11-25T10:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}},
                         "f:spec": {".": {}, "f:runStrategy": {}, "f:template": {".": {}, "f:spec": {}}}}},
           {"manager": "instancetype", "operation": "Update", "apiVersion": "kubevirt.io/v1", "subresource": "status",
            "time": "2026-11-25T10:00:01Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:ready": {}}}}]

IT = builders.instancetype_obj("csmall", cpu=1, memory="128Mi")
IT["metadata"]["namespace"] = "default"


def _vm(**spec):
    return builders.csmall_vm("vm1", None, preference=None, namespace="default", **spec)


VMI = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
       "metadata": {"name": "vmi1", "namespace": "default"}, "spec": {"domain": {"devices": {}}}}
BAD_IT = {**copy.deepcopy(IT), "spec": {"cpu": {"guest": 1}}}          # no memory: refused

CASES = [
    ("/virtualmachines-mutate", "CREATE", _vm(runStrategy="Halted"), None),
    ("/virtualmachines-validate", "CREATE", _vm(runStrategy="Halted"), None),
    ("/virtualmachines-validate", "CREATE", _vm(runStrategy="Sometimes"), None),                 # refused
    ("/virtualmachines-mutate", "CREATE", {**_vm(runStrategy="Halted"), "bogus": 1}, None),     # schema refusal
    ("/virtualmachines-validate", "UPDATE", _vm(runStrategy="Always"), _vm(runStrategy="Halted")),
    ("/virtualmachineinstances-mutate", "CREATE", VMI, None),
    ("/virtualmachineinstancetypes-validate", "CREATE", IT, None),
    ("/virtualmachineinstancetypes-validate", "CREATE", BAD_IT, None),                          # refused
]


def _request(operation: str, obj: dict, old: dict | None) -> dict:
    req = {"uid": "u1", "operation": operation, "namespace": "default",
           "kind": {"group": "", "version": "v1", "kind": obj["kind"]}, "object": obj}
    if old is not None:
        req["oldObject"] = old
    return req


def _with_managed(obj: dict | None) -> dict | None:
    if obj is None:
        return None
    out = copy.deepcopy(obj)
    out["metadata"]["managedFields"] = copy.deepcopy(MANAGED)
    return out


@pytest.mark.parametrize("path,operation,obj,old", CASES)
def test_managed_fields_change_no_answer(path, operation, obj, old):
    plain = review.answer(path, _request(operation, copy.deepcopy(obj), copy.deepcopy(old)), objects=[IT], config=None)
    managed = review.answer(path, _request(operation, _with_managed(obj), _with_managed(old)), objects=[IT],
                            config=None)
    assert managed == plain
    assert "managedFields" not in str(managed[0]["response"].get("patch", ""))
