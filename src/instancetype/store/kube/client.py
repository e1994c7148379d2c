"""The Kubernetes API over HTTP: kubeconfig, API paths, requests and watch streams, and
Kubernetes' errors as the store's exception types.

The one module that knows lightkube and httpx2. lightkube reads the kubeconfig and builds an
httpx2 client from it (TLS, token/token-file/exec/certificate auth) through its public
`lightkube.config` API; the requests, paths and answers are ours (`ApiClient`, `resource_path`):
objects stay plain dicts decoded by msgspec, and no lightkube internals (`GenericSyncClient`,
`prepare_request`) are used. `make_client` is lightkube's typed Client for the few callers
that use its models. The versions this module is written against are pinned in pyproject.toml.
"""
from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import msgspec
from lightkube.config import client_adapter
from lightkube.config.client_adapter import ConnectionParams
from lightkube.config.kubeconfig import KubeConfig
from lightkube.core.exceptions import ApiError, ConfigError

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


def make_client(config, *, timeout: float = DEFAULT_TIMEOUT, field_manager: str = FIELD_MANAGER) -> Any:
    """A typed lightkube Client (lightkube's public API, for callers that use its models: the
    SubjectAccessReviews and ConfigMap reads of `serve`). Not shared between threads that may
    use it at once (see `ApiClient`)."""
    from lightkube.core.client import Client

    try:
        return Client(config, timeout=httpx2.Timeout(timeout), field_manager=field_manager, trust_env=False)
    except (ConfigError, OSError, ValueError, AssertionError) as e:
        raise Unreachable(f"kubeconfig: cannot use context {getattr(config, 'context_name', '')!r}: {e}") from None


# --- requests ---------------------------------------------------------------------------------

def resource_path(res: Resource, namespace: str | None = None, name: str | None = None,
                  subresource: str | None = None) -> str:
    """The API path of `res`'s collection (all namespaces when `namespace` is None), or of one
    object and its subresource: `/api/v1/...` for the core group, `/apis/GROUP/VERSION/...`."""
    parts = ["/api", res.version] if not res.group else ["/apis", res.group, res.version]
    if res.namespaced and namespace:
        parts += ["namespaces", namespace]
    parts.append(res.plural)
    if name is not None:
        parts.append(name)
        if subresource:
            parts.append(subresource)
    return "/".join(parts)


def _new_http(config, timeout: float) -> httpx2.Client:
    """An httpx2 client (one connection pool) for the kubeconfig context: lightkube's public
    adapter does the kubeconfig's TLS (CA, client certificate) and auth (token, token file, exec)."""
    try:
        return client_adapter.Client(config, ConnectionParams(timeout=httpx2.Timeout(timeout), trust_env=False))
    except (ConfigError, OSError, ValueError, AssertionError) as e:
        raise Unreachable(f"kubeconfig: cannot use context {getattr(config, 'context_name', '')!r}: {e}") from None


class PerThread:
    """One object per thread, made by `make()` on the thread's first `get()`, and closed (by
    `close(obj)`) only by its own thread (`close_thread`), or once its thread has ended: never
    under a thread that may be using it. `close()` closes the caller's and the ended threads';
    a live thread's is closed by that thread at its next `get()`, which then raises `Unreachable`.

    Why: an OpenSSL connection (`SSL`) must not be used by two threads at once, nor closed or
    shut down under a reader (OpenSSL's rule; CPython's `_ssl` releases the GIL in SSL_new,
    SSL_read and SSL_write and adds no lock of its own), and an `SSLContext` must not be changed
    while other threads make connections from it, which httpcore does on every new connection
    (`set_alpn_protocols`). One pool shared by the controller's workers, its informers' relists
    and its leader elector broke the second rule the moment an API server restart made them all
    reconnect at once; a pool per thread gives every SSL object and context one user."""

    def __init__(self, make: Callable[[], Any], close: Callable[[Any], None], what: str):
        self._make, self._close, self._what = make, close, what
        self._local = threading.local()
        self._all: dict[threading.Thread, Any] = {}     # thread -> its object
        self._lock = threading.Lock()
        self.closed = False

    def get(self) -> Any:
        obj = getattr(self._local, "obj", None)
        if obj is not None and not self.closed:
            return obj
        if self.closed:
            self.close_thread()
            raise Unreachable(f"{self._what} is closed")
        obj = self._make()
        with self._lock:
            ended = self._take_ended()
            self._all[threading.current_thread()] = obj
        for old in ended:       # the objects of threads that have ended: nobody uses them any more
            self._close(old)
        self._local.obj = obj
        return obj

    def _take_ended(self) -> list[Any]:
        ended = [thread for thread in self._all if not thread.is_alive()]
        return [self._all.pop(thread) for thread in ended]

    def close_thread(self) -> None:
        """Close the calling thread's object (a thread that is done with it)."""
        obj = getattr(self._local, "obj", None)
        if obj is None:
            return
        self._local.obj = None
        with self._lock:
            self._all.pop(threading.current_thread(), None)
        self._close(obj)

    def close(self) -> None:
        self.closed = True
        self.close_thread()
        with self._lock:
            ended = self._take_ended()
        for obj in ended:
            self._close(obj)


class ThreadClient:
    """lightkube's typed Client (`make_client`) with one Client per calling thread (`PerThread`):
    its methods (`get`, `create`, ...) are those of the calling thread's Client."""

    def __init__(self, config, *, timeout: float = DEFAULT_TIMEOUT, field_manager: str = FIELD_MANAGER):
        self._clients = PerThread(lambda: make_client(config, timeout=timeout, field_manager=field_manager),
                                  lambda c: c.close(), f"the client of {describe_server(config)}")
        self._clients.get()     # a context that cannot be used fails here, as one line

    def __getattr__(self, name: str) -> Any:
        return getattr(self._clients.get(), name)

    def close(self) -> None:
        self._clients.close()


class ApiClient:
    """Requests to one API server, as the store makes them: `request` (one answer, read whole)
    and `stream` (a watch's lines). This module is the only one that knows lightkube's and
    httpx2's types; callers see the store's exceptions (`api_errors`). Every thread has its own
    connection pool (`PerThread`); a thread done with the API server may `close_thread()`."""

    def __init__(self, config, *, timeout: float = DEFAULT_TIMEOUT):
        self.config = config
        self.timeout = timeout
        self.server = describe_server(config)
        self.namespace: str | None = getattr(config, "namespace", None)
        self._pools = PerThread(lambda: _new_http(config, timeout), lambda http: http.close(),
                                f"the client of {self.server}")
        self._pools.get()       # a context that cannot be used fails here, as one line

    def _http(self) -> httpx2.Client:
        """The calling thread's pool (made on its first request)."""
        return self._pools.get()

    def close_thread(self) -> None:
        """Close the calling thread's pool."""
        self._pools.close_thread()

    def close(self) -> None:
        """Close the calling thread's pool and those of ended threads (`PerThread.close`)."""
        self._pools.close()

    @staticmethod
    def _content(body: Any, content_type: str | None, headers: dict) -> bytes | None:
        if body is None:
            return None
        headers.setdefault("Content-Type", content_type or "application/json")
        return body if isinstance(body, bytes) else msgspec.json.encode(body)

    def request(self, method: str, path: str, *, params: Mapping | None = None, body: Any = None,
                content_type: str | None = None, headers: Mapping | None = None,
                res: Resource | None = None, warning_headers: list[str] | None = None) -> Response:
        """One request (`body` sent as JSON unless it is bytes; None params are left out); the
        answer read whole. 4xx/5xx and transport errors are the store's exceptions."""
        hdrs = dict(headers or {})
        content = self._content(body, content_type, hdrs)
        query = {k: v for k, v in (params or {}).items() if v is not None}
        with api_errors(self.server, res):
            resp = self._http().request(method, path, params=query, content=content, headers=hdrs)
            if warning_headers is not None:     # kept for the caller, a refusal's included
                warning_headers.extend(resp.headers.get_list("warning"))
            resp.raise_for_status()
        return Response(resp)

    def request_json(self, method: str, path: str, **kw: Any) -> Any:
        """`request`'s answer decoded ({} when empty); an answer that is not JSON is BadRequest."""
        resp = self.request(method, path, **kw)
        return resp.json()

    def stream(self, path: str, params: Mapping | None = None, *, idle: float | None = None,
               res: Resource | None = None) -> LineStream:
        """A streamed GET (a watch) read line by line by the thread that iterates it; `idle`: end
        once that many seconds pass with nothing read (None: wait as long as it is open)."""
        return LineStream(self, path, {k: v for k, v in (params or {}).items() if v is not None}, idle, res)


class Response:
    """An answer read whole: status, headers, body."""

    __slots__ = ("_resp",)

    def __init__(self, resp: httpx2.Response):
        self._resp = resp

    @property
    def status(self) -> int:
        return self._resp.status_code

    @property
    def content(self) -> bytes:
        return self._resp.content

    def header_values(self, name: str) -> list[str]:
        return self._resp.headers.get_list(name)

    def json(self) -> Any:
        data = self._resp.content
        if not data:
            return {}
        try:
            return msgspec.json.decode(data)
        except msgspec.DecodeError:
            raise BadRequest(f"the API server's answer is not JSON: {self._resp.text[:200]!r}") from None


class LineStream:
    """One streamed response's lines (see `ApiClient.stream`).

    Read, and closed, only by the thread that iterates it. `abort()` (from any thread) wakes a
    blocked read by shutting the socket down at the kernel (shutdown(2), which leaves the file
    descriptor and the SSL object alone); the reading thread then sees the end of the stream and
    closes the response itself. It never closes the socket (another thread's descriptor could
    take its number) nor drops the SSLSocket's SSL object under the reader, as `SSLSocket.shutdown`
    does."""

    def __init__(self, api: ApiClient, path: str, params: dict, idle: float | None, res: Resource | None):
        self._api, self._path, self._params, self._idle, self._res = api, path, params, idle, res
        self._sock: socket.socket | None = None
        self._aborted = False

    def __iter__(self) -> Iterator[str]:
        api = self._api
        timeout = httpx2.Timeout(api.timeout)
        timeout.read = self._idle
        with api_errors(api.server, self._res):
            if self._aborted:
                return
            http = api._http()
            resp = http.send(http.build_request("GET", self._path, params=self._params, timeout=timeout), stream=True)
            try:
                stream = resp.extensions.get("network_stream")
                self._sock = stream.get_extra_info("socket") if stream is not None else None
                if self._aborted:
                    return
                if resp.status_code >= 400:
                    resp.read()
                    resp.raise_for_status()
                for line in resp.iter_lines():
                    if line:
                        yield line
            except httpx2.ReadTimeout:
                if self._idle is None:
                    raise
            except (httpx2.TransportError, OSError, ValueError):
                if not self._aborted:
                    raise
            finally:
                self._sock = None
                resp.close()

    def abort(self) -> None:
        """End the stream now: the reader's blocked read returns (from any thread)."""
        self._aborted = True
        sock = self._sock
        if sock is None:
            return
        try:
            # socket.socket's own shutdown, not SSLSocket's: that one also drops the SSL object
            # the reader is using.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:
            pass


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
    kind, name = str(details.get("kind", "")), str(details.get("name", ""))
    kept = dict(details) if details else None
    body = dict(status)
    if code == 409:
        conflict = AlreadyExists if reason == "AlreadyExists" else Conflict
        return conflict(message, kind=kind, name=name, details=kept, status_body=body)
    if code == 422:
        raw = [c for c in details.get("causes") or () if isinstance(c, Mapping)]
        causes = [names.FieldError(c.get("field", ""), c.get("message", "")) for c in raw]
        return Invalid(message, causes=causes, kind=kind, name=name, details=kept, status_body=body)
    cls = _BY_CODE.get(code)
    if cls is not None:
        return cls(message, kind=kind, name=name, details=kept, status_body=body)
    return APIError(message, code=code, reason=reason or "InternalError", kind=kind, name=name, details=kept, status_body=body)


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
