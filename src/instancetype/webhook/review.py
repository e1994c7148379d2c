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
from instancetype.jsonutil import clone
from instancetype.lifecycle.admission import Refused, admit_type, admit_vm_object, stored_vm

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


def decode(body: bytes) -> dict:
    """The AdmissionReview's `request`, checked for what is needed to answer it."""
    try:
        review = msgspec.json.decode(body)
    except msgspec.DecodeError as e:
        raise BadReview(f"the body is not JSON: {e}") from None
    if not isinstance(review, dict) or review.get("kind") != "AdmissionReview":
        raise BadReview("the body is not an AdmissionReview")
    if review.get("apiVersion") != REVIEW_API_VERSION:
        raise BadReview(f"AdmissionReview version {review.get('apiVersion')!r} is not served (only {REVIEW_API_VERSION})")
    request = review.get("request")
    if not isinstance(request, dict) or not isinstance(request.get("uid"), str):
        raise BadReview("the AdmissionReview has no request with a uid")
    return request


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
        admitted = admit_vm_object(objects, obj, operation=operation, old=old, config=config)
    except Refused as e:
        if webhook.mutating and e.result.stage == "validate":
            # The mutating webhook passed it: its changes are made; the validator refuses.
            return _response(uid, patch=_changes(received, stored_vm(obj, clone(e.result.vm)))), None
        if not webhook.mutating or e.result.stage == "mutate":
            return _deny(webhook.name, uid, operation, obj, e.result)
        raise
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
    return _response(uid, patch=_changes(obj, vmi)), None
