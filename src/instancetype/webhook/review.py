"""AdmissionReview v1 in, AdmissionReview v1 out: a cluster's webhook calls answered by
`lifecycle.admission`'s own functions (no rule is written twice).

    answer(path, review, objects=..., config=...) -> (response review dict, Denial | None)

* a refusal is `allowed: false` with KubeVirt's `status` (webhookutils.ToAdmissionResponse:
  code, reason, message, `details.causes` with reason/message/field), so the API server
  prefixes `admission webhook "NAME" denied the request: ` and kubectl prints it as KubeVirt's;
* warnings go in `response.warnings` (only the validating webhooks give them: KubeVirt's VM
  mutator gives none, and the deprecation warning of an old API version comes from the CRD);
* a mutating webhook answers with a base64 JSONPatch of what it changed (the VM: inference, the
  matcher kinds, the defaults and canonical quantities of KubeVirt's decode; the VMI: its
  defaults).
The VM mutator runs the whole VM admission and refuses only what the mutating webhook refuses;
the validating webhook sees the mutated VM and refuses the rest, as in KubeVirt.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import msgspec

from instancetype.api import kinds
from instancetype.api.versions import needs_upgrade, upgrade
from instancetype.engine.results import AdmissionResult
from instancetype.errors import Error
from instancetype.jsonutil import API_SERVER_MAX_DEPTH, clone
from instancetype.lifecycle.admission import Refused, admit_type, admit_vm_object

from . import jsonpatch

REVIEW_API_VERSION = "admission.k8s.io/v1"


class BadReview(Error):
    """The request body is not an AdmissionReview v1 (an HTTP 400 of the server, not a review answer)."""


@dataclass
class Denial:
    """A refused request, for the log line."""

    webhook: str
    uid: str
    operation: str
    kind: str
    namespace: str
    name: str
    code: int
    reason: str
    message: str


# kube-apiserver decodes objects nested up to 10,000 levels (Go's encoding/json scanner limit);
# an AdmissionReview holds the object two levels down (review, request, object).
MAX_OBJECT_DEPTH = API_SERVER_MAX_DEPTH
MAX_REVIEW_DEPTH = MAX_OBJECT_DEPTH + 2
# The bound on the work one review may cost: the JSON values it holds. An API server sends at most
# an object and its old object (etcd keeps 1.5 MiB each: at most ~750,000 values); the largest
# VMs seen (60,000 disks and volumes, 480,000 values) take about a second to admit.
MAX_VALUES = 2_000_000
# The key under which `decode` leaves a review's value count past MAX_VALUES in its request (a
# tuple: no JSON document can hold such a key).
_TOO_LARGE = ("values",)

_CONTAINERS = (dict, list)


def measure(value: Any, max_depth: int = MAX_REVIEW_DEPTH) -> tuple[int, int]:
    """(depth, values) of JSON data, level by level (no recursion); stops past `max_depth`. A
    scalar is depth 0, `{}` depth 1, as Go's scanner counts."""
    depth, values = 0, 1
    level = [value] if type(value) in _CONTAINERS else []
    while level:
        depth += 1
        if depth > max_depth:
            break
        below: list = []
        for x in level:
            items = x.values() if type(x) is dict else x
            values += len(items)
            below += [c for c in items if type(c) is dict or type(c) is list]
        level = below
    return depth, values


def decode(body: bytes) -> dict:
    """The AdmissionReview's `request`, checked for what is needed to answer it: anything else is
    `BadReview` (one line, an HTTP 400). Runs where the recursion limit allows MAX_REVIEW_DEPTH
    levels (`serve`'s admission workers)."""
    try:
        review = msgspec.json.decode(body)
    except msgspec.DecodeError as e:
        raise BadReview(f"the body is not JSON: {e}") from None
    except UnicodeDecodeError as e:     # msgspec's error for a string that is not UTF-8
        raise BadReview(f"the body is not JSON: a string is not UTF-8 ({e.reason})") from None
    except RecursionError:
        raise BadReview(f"the body is nested deeper than {MAX_REVIEW_DEPTH} levels") from None
    if not isinstance(review, dict) or review.get("kind") != "AdmissionReview":
        raise BadReview("the body is not an AdmissionReview")
    if review.get("apiVersion") != REVIEW_API_VERSION:
        raise BadReview(f"AdmissionReview version {_short(review.get('apiVersion'))} is not served "
                        f"(only {REVIEW_API_VERSION})")
    # Each level takes two bytes, each value at least two (with its separator): a body shorter
    # than that cannot be past a bound, and is not walked (most reviews are a few KiB).
    depth, values = measure(review) if len(body) > 2 * MAX_REVIEW_DEPTH else (0, 0)
    if depth > MAX_REVIEW_DEPTH:
        raise BadReview(f"the AdmissionReview is nested deeper than {MAX_REVIEW_DEPTH} levels (an object "
                        f"at most {MAX_OBJECT_DEPTH}, as the API server decodes it)")
    request = review.get("request")
    if not isinstance(request, dict) or not isinstance(request.get("uid"), str) or not request["uid"]:
        raise BadReview("the AdmissionReview has no request with a uid")
    _check_request(request)
    if values > MAX_VALUES:
        request[_TOO_LARGE] = values      # a well-formed review: refused in the answer
    return request


# AdmissionRequest's fields this server reads, with their Go types (an API server never sends
# another type; anything else is not an AdmissionReview it sent).
_REQUEST_STRINGS = ("operation", "namespace", "name", "subResource", "requestSubResource")
_REQUEST_OBJECTS = ("kind", "resource", "requestKind", "requestResource", "userInfo", "options")


def _check_request(request: dict) -> None:
    for key in _REQUEST_STRINGS:
        if request.get(key) is not None and not isinstance(request[key], str):
            raise BadReview(f"request.{key}: must be a string, not {_json_type(request[key])}")
    for key in _REQUEST_OBJECTS:
        if request.get(key) is not None and not isinstance(request[key], dict):
            raise BadReview(f"request.{key}: must be an object, not {_json_type(request[key])}")
    for key in ("object", "oldObject"):
        if request.get(key) is not None and not isinstance(request[key], dict):
            raise BadReview(f"request.{key}: must be an object, not {_json_type(request[key])}")
    for field in ("group", "version", "kind"):
        v = (request.get("kind") or {}).get(field)
        if v is not None and not isinstance(v, str):
            raise BadReview(f"request.kind.{field}: must be a string, not {_json_type(v)}")
    if request.get("dryRun") is not None and not isinstance(request["dryRun"], bool):
        raise BadReview(f"request.dryRun: must be a boolean, not {_json_type(request['dryRun'])}")


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    return "a string" if isinstance(v, str) else "an array" if isinstance(v, list) else \
        "an object" if isinstance(v, dict) else "null"


def _short(v: Any) -> str:
    text = repr(v) if isinstance(v, str) else _json_type(v)
    return text if len(text) <= 80 else text[:77] + "..."


def _status(result: AdmissionResult) -> dict:
    status: dict[str, Any] = {"status": "Failure", "message": result.message, "code": result.code or 400}
    if result.reason:
        status["reason"] = result.reason
    if result.causes:
        status["details"] = {"causes": [c.to_dict() for c in result.causes]}
    return status


def _response(uid: str, *, allowed: bool = True, status: dict | None = None, warnings: list[str] | None = None,
              patch: list[dict] | None = None) -> dict:
    response: dict[str, Any] = {"uid": uid, "allowed": allowed}
    if status is not None:
        response["status"] = status
    if warnings:
        response["warnings"] = list(warnings)
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(msgspec.json.encode(patch)).decode()
    return {"apiVersion": REVIEW_API_VERSION, "kind": "AdmissionReview", "response": response}


def _object(request: dict, key: str) -> dict | None:
    """The request's object as the engine takes it, the namespace the request names filled in.
    Its `metadata.managedFields` stay: the schema check reads their field sets as the opaque
    metav1.FieldsV1 they are, and no rule looks at them."""
    obj = request.get(key)
    if not isinstance(obj, dict):
        return None
    obj = dict(obj)
    meta = obj.get("metadata")
    if isinstance(meta, dict) and request.get("namespace") and not meta.get("namespace"):
        obj["metadata"] = {**meta, "namespace": request["namespace"]}
    return obj


def _changes(before: dict, after: dict) -> list[dict]:
    """What the webhook changed in the object (`status` is the status subresource's, never
    patched here)."""
    def body(o: dict) -> dict:
        return {k: v for k, v in o.items() if k != "status"}
    return jsonpatch.diff(body(before), body(after))


def answer(path: str, request: dict, *, objects: Any, config: dict | None) -> tuple[dict, Denial | None]:
    """The AdmissionReview answering `request` on webhook `path` (see kinds.WEBHOOKS)."""
    webhook = kinds.WEBHOOK_BY_PATH[path]
    uid = request["uid"]
    operation = request.get("operation") or ""
    obj = _object(request, "object")
    old = _object(request, "oldObject")
    if operation not in webhook.operations or obj is None:
        return _response(uid), None        # e.g. DELETE: nothing of KubeVirt's runs
    if _TOO_LARGE in request:
        result = AdmissionResult.bad_request(
            f"the request holds {request[_TOO_LARGE]:,} JSON values, more than this webhook admits "
            f"({MAX_VALUES:,})")
        return _deny(webhook.name, uid, operation, obj, result)
    request_kind = request.get("kind")
    kind = (request_kind.get("kind") if isinstance(request_kind, dict) else None) or obj.get("kind")
    if not isinstance(kind, str):
        kind = ""       # a malformed review (a kind that is not a string) is the wrong kind, not a crash
    if kind != webhook.kind and kinds.FLAVOR_KINDS.get(kind) != webhook.kind:
        result = AdmissionResult.bad_request(f"expect resource to be '{webhook.resource.qualified}'")
        return _deny(webhook.name, uid, operation, obj, result)
    try:
        if webhook.kind in kinds.ALL_TYPE_KINDS:
            return _type(webhook.name, uid, operation, obj, old)
        if webhook.kind == "VirtualMachine":
            return _vm(webhook, uid, operation, obj, old, objects, config)
        return _vmi(webhook.name, uid, operation, obj, config)
    except Error as e:        # anything the engine could not read: refused, never a crash
        return _deny(webhook.name, uid, operation, obj, AdmissionResult.bad_request(str(e)))
    except RecursionError:    # only past MAX_REVIEW_DEPTH, which decode refuses first
        return _deny(webhook.name, uid, operation, obj, AdmissionResult.bad_request(
            f"the object is nested deeper than {MAX_OBJECT_DEPTH} levels"))
    except Exception as e:  # noqa: BLE001 - a bug: refused with its one line, the server lives on
        result = AdmissionResult(allowed=False, code=500, message=(
            f"internal error: this is a bug in instancetype, not a problem with the request: "
            f"{type(e).__name__}: {e}"[:1000]))
        return _deny(webhook.name, uid, operation, obj, result)


def _deny(webhook: str, uid: str, operation: str, obj: dict, result: AdmissionResult) -> tuple[dict, Denial]:
    meta = got if isinstance(got := obj.get("metadata"), dict) else {}
    status = _status(result)
    denial = Denial(webhook, uid, operation, str(obj.get("kind", "")), str(meta.get("namespace", "")),
                    str(meta.get("name", "") or meta.get("generateName", "")), status["code"],
                    status.get("reason", ""), status["message"])
    return _response(uid, allowed=False, status=status), denial


def _type(webhook: str, uid: str, operation: str, obj: dict, old: dict | None) -> tuple[dict, Denial | None]:
    # An old API version reaches a webhook only if it is registered for it; its deprecation
    # warning is the CRD's to give (the API server sends it), so the conversion's is dropped.
    if needs_upgrade(obj):
        obj = upgrade(obj)[0]
    if old is not None and needs_upgrade(old):
        old = upgrade(old)[0]
    try:
        admitted = admit_type(obj, operation=operation, old=old)
    except Refused as e:
        return _deny(webhook, uid, operation, obj, e.result)
    return _response(uid, warnings=admitted.warnings), None


def _vm(webhook: kinds.Webhook, uid: str, operation: str, obj: dict, old: dict | None, objects: Any,
        config: dict | None) -> tuple[dict, Denial | None]:
    received = obj
    upgrade_warnings: list[str] = []
    if needs_upgrade(obj):      # seed 002's `spec.flavor`: rewritten as the embedded store's admit does
        obj, upgrade_warnings = upgrade(obj)
    try:
        # The mutating webhook's answer is its own step's: what the validating step finds is the
        # validating webhook's to answer (the API server calls it next, with the mutated VM).
        admitted = admit_vm_object(objects, obj, operation=operation, old=old, config=config,
                                   mutate_only=webhook.mutating)
    except Refused as e:
        return _deny(webhook.name, uid, operation, obj, e.result)
    if webhook.mutating:
        return _response(uid, patch=_changes(received, admitted.obj), warnings=upgrade_warnings or None), None
    return _response(uid, warnings=admitted.warnings), None


def _vmi(webhook: str, uid: str, operation: str, obj: dict, config: dict | None) -> tuple[dict, Denial | None]:
    """KubeVirt's VMI mutator: the defaults of a new VMI (SetDefaultVirtualMachineInstance)."""
    from instancetype.engine.vmi_mutate import mutate_new_vmi
    from instancetype.errors import DefaultsError

    if operation != "CREATE":
        return _response(uid), None
    vmi = clone(obj)
    try:
        mutate_new_vmi(vmi, config)
    except DefaultsError as e:
        return _deny(webhook, uid, operation, obj, AdmissionResult.bad_request(str(e)))
    # KubeVirt's VMI CRD has no status subresource, and its mutator replaces /status too (the
    # memory at boot and the CPU topology a live update starts from): the status is patched here.
    # KubeVirt's VMI CRD has no status subresource, and its mutator sets /status too (the memory
    # at boot and the CPU topology a live update starts from). What the request already carries
    # in its status (the simulated node's scheduling, sent with the create) is kept over the
    # mutator's defaults.
    incoming = obj.get("status")
    if isinstance(incoming, dict) and isinstance(vmi.get("status"), dict):
        vmi["status"] = {**vmi["status"], **incoming}
    return _response(uid, patch=jsonpatch.diff(obj, vmi)), None
