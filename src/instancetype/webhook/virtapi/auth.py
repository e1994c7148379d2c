"""Who is asking, as any aggregated API server finds out (virt-api's authorizer.go, and
k8s.io/apiserver's requestheader authenticator and SubjectAccessReview authorizer).

1. Authentication: the kube-apiserver's aggregator proxies a request with its front-proxy client
   certificate and names the user in `X-Remote-User` / `X-Remote-Group` / `X-Remote-Extra-*`.
   The TLS server asks for a client certificate and verifies one when given against
   `requestheader-client-ca-file` of the `kube-system/extension-apiserver-authentication`
   ConfigMap (`client_auth_context`); the request is then authenticated only when such a
   certificate was presented and its common name is one of `requestheader-allowed-names` (any,
   when the list is empty). Only then are the user headers read. Anything else is 401.
   (virt-api trusts the ConfigMap's `client-ca-file` too, so any client certificate of the
   cluster could name any user in the headers; here only the front-proxy CA can.)
2. Authorization: a SubjectAccessReview (authorization.k8s.io/v1) for the request's attributes
   (`update virtualmachines/start` in group subresources.kubevirt.io, namespace, name), as
   virt-api's `generateAccessReview`; a denial is 403 with the text Kubernetes' authorization
   filter writes (`responsewriters.forbiddenMessage`). virt-api itself answers a denial with a
   plain-text 401; the API server in front of it answers 403 as here.
"""
from __future__ import annotations

import json
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from instancetype.errors import AuthConfigError  # noqa: F401  (re-exported)

CONFIGMAP_NAMESPACE = "kube-system"
CONFIGMAP_NAME = "extension-apiserver-authentication"
CA_KEY = "requestheader-client-ca-file"




@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Attributes:
    """authorizer.Attributes of a resource request (virt-api's addNamespacedResourceAttributes)."""
    verb: str
    group: str
    version: str
    resource: str
    namespace: str
    name: str = ""
    subresource: str = ""

    def sar_spec(self) -> dict:
        attrs = {"namespace": self.namespace, "verb": self.verb, "group": self.group, "version": self.version,
                 "resource": self.resource}
        if self.subresource:
            attrs["subresource"] = self.subresource
        if self.name:
            attrs["name"] = self.name
        return attrs


def _string_list(data: Mapping[str, str], key: str, default: list[str]) -> list[str]:
    """The ConfigMap keeps lists as JSON arrays of strings (k8s.io/apiserver's authentication
    configmap controller); virt-api's deserializeStrings reads them so."""
    raw = data.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = json.loads(raw)
    except ValueError:
        raise AuthConfigError(f"{CONFIGMAP_NAMESPACE}/{CONFIGMAP_NAME}: {key}: not a JSON list of strings") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AuthConfigError(f"{CONFIGMAP_NAMESPACE}/{CONFIGMAP_NAME}: {key}: not a JSON list of strings")
    return value


@dataclass(frozen=True)
class RequestHeaderConfig:
    """The requestheader settings the API server publishes for aggregated servers."""
    client_ca: str                          # PEM
    allowed_names: tuple[str, ...] = ()
    username_headers: tuple[str, ...] = ("X-Remote-User",)
    group_headers: tuple[str, ...] = ("X-Remote-Group",)
    extra_prefixes: tuple[str, ...] = ("X-Remote-Extra-",)

    @classmethod
    def from_configmap_data(cls, data: Mapping[str, str] | None) -> RequestHeaderConfig:
        """virt-api's readRequestHeader: the CA is mandatory (no request could be trusted without it)."""
        data = data or {}
        ca = data.get(CA_KEY)
        if not isinstance(ca, str) or "BEGIN CERTIFICATE" not in ca:
            raise AuthConfigError(f"{CA_KEY} not found in {CONFIGMAP_NAME} ConfigMap")
        return cls(
            client_ca=ca,
            allowed_names=tuple(_string_list(data, "requestheader-allowed-names", [])),
            username_headers=tuple(_string_list(data, "requestheader-username-headers", ["X-Remote-User"])),
            group_headers=tuple(_string_list(data, "requestheader-group-headers", ["X-Remote-Group"])),
            extra_prefixes=tuple(_string_list(data, "requestheader-extra-headers-prefix", ["X-Remote-Extra-"])),
        )


def client_auth_context(ctx: ssl.SSLContext, config: RequestHeaderConfig) -> ssl.SSLContext:
    """Ask every TLS client for a certificate and verify one when given against the front-proxy
    CA (Go's VerifyClientCertIfGiven: the API server calls admission webhooks and probes discovery
    without one)."""
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.load_verify_locations(cadata=config.client_ca)
    return ctx


def _common_name(peercert: Mapping[str, Any]) -> str | None:
    for rdn in peercert.get("subject") or ():
        for key, value in rdn:
            if key == "commonName":
                return value
    return None


def authenticate(config: RequestHeaderConfig, peercert: Mapping[str, Any] | None,
                 headers: Mapping[str, str]) -> User | None:
    """The requestheader authenticator: None unless a verified front-proxy certificate with an
    allowed name was presented and a user header is set. `peercert` is `SSLSocket.getpeercert()`
    (non-empty only for a certificate the TLS layer verified against the CA)."""
    if not peercert:
        return None
    cn = _common_name(peercert)
    if config.allowed_names and cn not in config.allowed_names:
        return None
    name = None
    for key in config.username_headers:
        value = headers.get(key)
        if value:
            name = value
            break
    if not name:
        return None
    getall = getattr(headers, "getall", None)
    groups: list[str] = []
    for key in config.group_headers:
        groups.extend(getall(key, []) if getall else ([headers[key]] if key in headers else []))
    extra: dict[str, list[str]] = {}
    for key in headers:
        for prefix in config.extra_prefixes:
            if len(key) >= len(prefix) and key[:len(prefix)].lower() == prefix.lower():
                extra_key = unquote(key[len(prefix):].lower())
                values = getall(key, []) if getall else [headers[key]]
                extra.setdefault(extra_key, [])
                for v in values:
                    if v not in extra[extra_key]:
                        extra[extra_key].append(v)
    return User(name, tuple(groups), {k: tuple(v) for k, v in extra.items()})


def subject_access_review(user: User, attrs: Attributes) -> dict:
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": user.name, "groups": list(user.groups),
                     "extra": {k: list(v) for k, v in user.extra.items()},
                     "resourceAttributes": attrs.sar_spec()}}


class SubjectAccessReviewer:
    """Authorize by asking the API server (a SubjectAccessReview). `post(review) -> review`
    creates the review (the serve identity needs `create subjectaccessreviews`); blocking,
    called from a worker thread."""

    def __init__(self, post: Callable[[dict], dict]):
        self._post = post

    def __call__(self, user: User, attrs: Attributes) -> tuple[bool, str]:
        status = (self._post(subject_access_review(user, attrs)) or {}).get("status") or {}
        return bool(status.get("allowed")), str(status.get("reason") or "")

    @classmethod
    def lightkube(cls, client: Any) -> SubjectAccessReviewer:
        """Reviews created through a (sync) lightkube Client."""
        from lightkube.resources.authorization_v1 import SubjectAccessReview

        def post(review: dict) -> dict:
            obj = SubjectAccessReview.from_dict(review)
            return client.create(obj).to_dict()

        return cls(post)


# --- Kubernetes' answers -----------------------------------------------------------------------------

def unauthorized_status() -> dict:
    """k8s.io/apiserver's Unauthorized response (responsewriters.UnauthorizedNegotiated)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


def forbidden_status(user: User, attrs: Attributes, reason: str = "") -> dict:
    """responsewriters.Forbidden: `<resource>.<group> "<name>" is forbidden: User "<u>" cannot
    <verb> resource "<resource>/<sub>" in API group "<group>" in the namespace "<ns>"[: reason]`."""
    resource = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
    msg = (f'User "{user.name}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.group}" '
           f'in the namespace "{attrs.namespace}"')
    if reason:
        msg += f": {reason}"
    qualified = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"{subject} is forbidden: {msg}", "reason": "Forbidden",
            "details": {"name": attrs.name, "group": attrs.group, "kind": attrs.resource} if attrs.name
            else {"group": attrs.group, "kind": attrs.resource},
            "code": 403}


def rbac_verb(method: str, name: str) -> str | None:
    """virt-api's mapHttpVerbToRbacVerb."""
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method) or (
        ("get" if name else "list") if method in ("GET", "HEAD") else
        ("delete" if name else "deletecollection") if method == "DELETE" else None)
