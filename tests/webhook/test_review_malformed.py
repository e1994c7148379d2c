"""A malformed AdmissionReview request is answered, never raised on: the handler of `serve`
passes `review.answer` whatever `review.decode` lets through (a request with a uid). The
conformance driver likewise answers any request line."""
from __future__ import annotations

import pytest

from instancetype.webhook import review
from tests import builders

# found by the type checker: these raised AttributeError / TypeError out of the handler


def test_a_request_kind_that_is_not_an_object_falls_back_to_the_objects_kind():
    request = {"uid": "u1", "operation": "CREATE", "kind": "VirtualMachine", "object": builders.vm("vm1")}
    plain = {"uid": "u1", "operation": "CREATE", "object": builders.vm("vm1")}
    answer = review.answer("/virtualmachines-mutate", request, objects=[], config=None)[0]
    assert answer == review.answer("/virtualmachines-mutate", plain, objects=[], config=None)[0]


@pytest.mark.parametrize("request_kind, object_kind", [
    (None, []),                                # the object's kind unhashable
    ({"kind": 5}, None),                       # a kind that is not a string
])
def test_a_kind_that_is_not_a_string_is_a_bad_request(request_kind, object_kind):
    request = {"uid": "u1", "operation": "CREATE", "object": {**builders.vm("vm1"), "kind": object_kind}}
    if request_kind is not None:
        request["kind"] = request_kind
    out, _ = review.answer("/virtualmachines-mutate", request, objects=[], config=None)
    assert out["response"]["allowed"] is False
    assert out["response"]["status"]["code"] == 400
    assert "expect resource to be" in out["response"]["status"]["message"]


def test_the_conformance_driver_answers_an_unhashable_op_as_unsupported():
    from instancetype.conformance import answer

    assert answer('{"id": 1, "op": []}') == {"id": 1, "error": "unsupported op: []"}
