"""The Kubernetes API through lightkube: kubeconfig, resource classes, and Kubernetes' errors as the
store's exception types.

lightkube does the plumbing (kubeconfig and token/cert auth, TLS, URLs, paging, watch streams);
objects stay plain dicts: every kind is a lightkube *generic* resource built from `api.kinds`'
table, so no kind is spelt twice.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import httpx2
import msgspec
from lightkube.config.client_adapter import ConnectionParams
from lightkube.config.kubeconfig import KubeConfig
from lightkube.core import resource as lightkube_resource
from lightkube.core.exceptions import ApiError, ConfigError
from lightkube.core.generic_client import GenericSyncClient

from instancetype.api import kinds, names
from instancetype.api.kinds import Resource
from instancetype.errors import StoreError
from instancetype.store.base import (
    AlreadyExists,
    APIError,
    BadRequest,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
)

FIELD_MANAGER = "instancetype"
DEFAULT_TIMEOUT = 10.0


class Unreachable(StoreError):
    """The API server cannot be reached, or refused our credentials (one line, no traceback)."""


class Gone(APIError):
    """410: the resourceVersion asked for is older than the API server keeps (a watch relists)."""

    code, reason = 410, "Expired"


# --- kinds ------------------------------------------------------------------------------------

def resource_of(kind: Any, api_version: Any = None) -> Resource:
    """The Resource of a kind the cluster store serves; `api_version` chooses a served version of
    the same group (the instancetype kinds' v1alpha1/v1alpha2), and `flavor.kubevirt.io`'s kinds
    are served by their own group."""
    if not isinstance(kind, str) or not kind:
        raise BadRequest("Object 'Kind' is missing in the request body")
    group = kinds.group_of(api_version) if isinstance(api_version, str) and api_version else None
    if group == kinds.FLAVOR_GROUP and kind in kinds.FLAVOR_KINDS:
        twin = kinds.BY_KIND[kinds.FLAVOR_KINDS[kind]]
        version = api_version.rsplit("/", 1)[1]
        plural = kinds.FLAVOR_PLURALS[kind]
        return Resource(kind, kinds.FLAVOR_GROUP, version, plural, plural[:-1], twin.namespaced)
    res = kinds.CLUSTER_BY_KIND.get(kind)
    if res is None:
        raise NotFound(f'no matches for kind "{kind}"', kind=kind)
    if group == res.group and "/" in api_version:
        version = api_version.rsplit("/", 1)[1]
        if version != res.version:
            return Resource(res.kind, res.group, version, res.plural, res.singular, res.namespaced,
                            res.short_names)
    return res


_VERBS = ["delete", "deletecollection", "get", "global_list", "global_watch", "list", "patch", "post", "put",
          "watch"]


@cache
def resource_class(res: Resource) -> type[Any]:
    """lightkube's description of `res` for its request builder (`prepare_request`): the API info
    of `lightkube.generic_resource`'s classes, its `.Status` the status subresource. The store
    decodes answers itself (msgspec, plain dicts), so no generic model class is made (that module
    imports lightkube's async and typed clients)."""
    r = lightkube_resource
    info = r.ApiInfo(resource=r.ResourceDef(res.group, res.version, res.kind), plural=res.plural, verbs=_VERBS)
    status = r.ApiInfo(resource=info.resource, parent=info.resource, plural=res.plural, verbs=["get", "patch", "put"],
                       action="status")
    base, sub = (r.NamespacedResourceG, r.NamespacedResourceG) if res.namespaced else (r.GlobalResource,
                                                                                       r.GlobalSubResource)
    cls: type[Any] = type(res.kind, (base,), {"_api_info": info})
    cls.Status = type(f"{res.kind}Status", (sub,), {"_api_info": status})
    return cls


# --- connecting -------------------------------------------------------------------------------

def load_config(kubeconfig: str | os.PathLike | None = None, context: str | None = None):
    """The kubeconfig's context (`--kubeconfig`, else $KUBECONFIG, else ~/.kube/config): a
    lightkube SingleConfig. A missing or unreadable file is one StoreError line."""
    try:
        if kubeconfig is None:
            kubeconfig = os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or "~/.kube/config"
        return _read_kubeconfig(kubeconfig).get(context_name=context)
    except ConfigError as e:
        raise Unreachable(f"kubeconfig: {e}") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        where = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
        raise Unreachable(f"kubeconfig {where}: cannot be read ({type(e).__name__}: {e})") from None


def _read_kubeconfig(path: str | os.PathLike) -> KubeConfig:
    """lightkube's `KubeConfig.from_file`, the YAML read by libyaml's parser when PyYAML has it
    (the pure-Python one takes milliseconds on a kubeconfig with embedded certificates)."""
    import yaml

    filepath = Path(path).expanduser()
    if not filepath.is_file():
        raise ConfigError(f"Configuration file {path} not found")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(filepath.read_text(), Loader=loader)
    except yaml.YAMLError as e:
        raise ValueError("not YAML: " + " ".join(str(e).split())) from None
    return KubeConfig.from_dict(data, fname=filepath)


# httpcore's optional parts the store never uses, skipped at its import: trio (async clients under
# trio; about 40 ms with attrs), h2 (HTTP/2; about 9 ms) and anyio (its async network backend;
# about 4 ms): every client here is lightkube's synchronous one over HTTP/1.1 (lightkube's `http2`
# is off). httpcore imports each of them under `try: ... except ImportError`.
_UNUSED_TRANSPORT_EXTRAS = ("trio", "h2", "anyio")


def _import_sync_transport() -> None:
    """Import httpcore (httpx's transport) without its unused optional parts. They stay importable
    afterwards: the block lasts only for httpcore's own import."""
    if "httpcore2" in sys.modules:
        return
    blocked = [name for name in _UNUSED_TRANSPORT_EXTRAS if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None     # type: ignore[assignment]  # `import name` raises ImportError
    try:
        import httpcore2  # noqa: F401
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def make_client(config, *, timeout: float = DEFAULT_TIMEOUT, field_manager: str = FIELD_MANAGER) -> Any:
    """A typed lightkube Client (for callers that use lightkube's models)."""
    from lightkube.core.client import Client

    _import_sync_transport()
    try:
        return Client(config, timeout=httpx2.Timeout(timeout), field_manager=field_manager, trust_env=False)
    except (ConfigError, OSError, ValueError, AssertionError) as e:
        raise Unreachable(f"kubeconfig: cannot use context {getattr(config, 'context_name', '')!r}: {e}") from None


def make_generic_client(config, *, timeout: float = DEFAULT_TIMEOUT,
                        field_manager: str = FIELD_MANAGER) -> GenericSyncClient:
    """lightkube's generic sync client (what `lightkube.Client` wraps), with the same settings."""
    _import_sync_transport()
    try:
        return GenericSyncClient(ConnectionParams(timeout=httpx2.Timeout(timeout), trust_env=False), config,
                                 field_manager=field_manager)
    except (ConfigError, OSError, ValueError, AssertionError) as e:
        raise Unreachable(f"kubeconfig: cannot use context {getattr(config, 'context_name', '')!r}: {e}") from None


def generic(client: Any) -> GenericSyncClient:
    """lightkube's request layer (URL building, auth, paging, watch): the client itself, or the one
    under a typed Client."""
    return client if isinstance(client, GenericSyncClient) else client._client


# --- errors -----------------------------------------------------------------------------------

_BY_CODE: dict[int, type[APIError]] = {404: NotFound, 400: BadRequest, 403: Forbidden, 410: Gone}


def api_error(status: Any) -> APIError:
    """A Kubernetes `Status` (lightkube's model or a dict) as the store's exception, with the API
    server's message; 409 is AlreadyExists or Conflict by its reason, 422 carries its causes."""
    if not isinstance(status, Mapping):
        status = status.to_dict() if hasattr(status, "to_dict") else {}
    code = status.get("code") or 500
    reason = status.get("reason") or ""
    message = status.get("message") or reason or f"HTTP {code}"
    details = status.get("details") or {}
    attrs = {"kind": details.get("kind", ""), "name": details.get("name", ""), "status_body": dict(status)}
    if code == 409:
        conflict = AlreadyExists if reason == "AlreadyExists" else Conflict
        return conflict(message, **attrs)
    if code == 422:
        raw = [c for c in details.get("causes") or () if isinstance(c, Mapping)]
        causes = [names.FieldError(c.get("field", ""), c.get("message", "")) for c in raw]
        return Invalid(message, causes=causes, status_causes=raw, **attrs)
    cls = _BY_CODE.get(code)
    if cls is not None:
        return cls(message, **attrs)
    return APIError(message, code=code, reason=reason or "InternalError", **attrs)


def _status_body(resp: Any) -> dict | None:
    """The response's `Status`, when it is JSON of any parameters (`application/json;
    charset=utf-8`, as an aggregated API may answer: lightkube recognises only the bare type;
    client-go decodes by the media type alone), else None."""
    media = (resp.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        return None
    try:
        body = msgspec.json.decode(resp.content)
    except msgspec.DecodeError:
        return None
    return body if isinstance(body, dict) and body.get("kind") == "Status" else None


def describe_server(config) -> str:
    try:
        return config.cluster.server
    except AttributeError:
        return "the Kubernetes API server"


@contextmanager
def api_errors(server: str, res: Resource | None = None) -> Iterator[None]:
    """Kubernetes' refusals as the store's exceptions; a server that cannot be reached, or that
    refuses our credentials, as one `Unreachable` line. A 404 without a Status (the kind `res` is
    not served: its CRD is not installed) is a NotFound naming the resource."""
    try:
        yield
    except ApiError as e:
        status = e.status
        code = getattr(status, "code", None)
        if code == 401:
            raise Unreachable(f"the Kubernetes API server at {server} refused the credentials "
                              "(401 Unauthorized)") from None
        raise api_error(status) from None
    except httpx2.HTTPStatusError as e:
        resp = e.response
        if resp.status_code == 401:
            raise Unreachable(f"the Kubernetes API server at {server} refused the credentials "
                              "(401 Unauthorized)") from None
        body = _status_body(resp)
        if body is not None:
            raise api_error(body) from None
        if resp.status_code == 404:
            what = f" ({res.qualified}/{res.version})" if res is not None else ""
            raise NotFound(f"the server could not find the requested resource{what}") from None
        lines = resp.text.strip().splitlines()
        raise api_error({"code": resp.status_code, "message": lines[0] if lines else resp.reason_phrase}) from None
    except httpx2.TransportError as e:
        detail = str(e) or type(e).__name__
        raise Unreachable(f"cannot reach the Kubernetes API server at {server}: {detail}") from None
    except ConfigError as e:
        raise Unreachable(f"kubeconfig: {e}") from None
