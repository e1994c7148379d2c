"""`KubeStore`: the `Store` interface over a Kubernetes API server (synchronous HTTP, client.py).

Every call is one request (two for an `update` without a resourceVersion); the API server does
what the embedded store does itself: metadata on create, optimistic concurrency on
`metadata.resourceVersion`, the status subresource, JSON merge patch, garbage collection of
dependents (kube-controller-manager's garbage collector, `propagationPolicy`). Its refusals are the
store's exceptions with the API server's own texts (`client.api_error`).

resourceVersions are Kubernetes' opaque strings. There are no multi-object transactions on a
cluster: `transaction()` is a no-op context that yields the store itself.
"""
from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import msgspec

from instancetype.api.kinds import Resource
from instancetype.gcpause import gc_paused
from instancetype.store.base import (
    DEFAULT_NAMESPACE,
    BadRequest,
    Conflict,
    Event,
    NotFound,
    ResourceVersion,
    Store,
    check_json,
    check_metadata,
    parse_field_selector,
    parse_label_selector,
)

from .client import (
    DEFAULT_TIMEOUT,
    FIELD_MANAGER,
    ApiClient,
    Gone,
    LineStream,
    Response,
    ThreadClient,
    api_error,
    load_config,
    resource_of,
    resource_path,
)
from .flavor import FLAVOR_API_VERSION, FLAVOR_OF, as_type

_decode = msgspec.json.decode
_encode = msgspec.json.encode


class _RawPage(msgspec.Struct):
    """A list page whose items stay JSON until each is wanted: an informer's relist then holds one
    object of the page as dicts at a time, not the whole page (the process's high-water mark)."""
    items: list[msgspec.Raw] | None = None
    metadata: dict | None = None


_raw_page_decoder = msgspec.json.Decoder(_RawPage)


def _decode_raw_page(data: bytes) -> dict:
    page = _raw_page_decoder.decode(data)
    return {"items": page.items or [], "metadata": page.metadata or {}}


PAGE = 500                      # objects per list request (the API server pages with `continue`)
UPDATE_RETRIES = 5              # an update without a resourceVersion retries this often on a conflict
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
_HTTP = {"get": "GET", "post": "POST", "put": "PUT", "patch": "PATCH", "delete": "DELETE"}


def selector_text(selector: Any, *, fields: bool = False) -> str | None:
    """A label or field selector for the API server: checked as the embedded store checks it (same
    400 texts), then sent as Kubernetes' string form."""
    if selector is None:
        return None
    (parse_field_selector if fields else parse_label_selector)(selector)
    if isinstance(selector, Mapping):
        return ",".join(f"{k}={v}" for k, v in selector.items()) or None
    return selector or None


def warnings_of(resp: Response) -> list[str]:
    """The texts of an answer's `Warning: 299 - "text"` headers (RFC 7234), in order."""
    return warning_texts(resp.header_values("warning"))


def warning_texts(values: list[str]) -> list[str]:
    """The texts of `Warning` header values (`299 - "text"`), in order."""
    out = []
    for value in values:
        value = value.strip()
        if value.startswith("299 ") and '"' in value:
            text = value.split('"', 1)[1].rsplit('"', 1)[0]
            out.append(text.replace('\\"', '"').replace("\\\\", "\\"))
        else:
            out.append(value)
    return out


def meta_of(obj: Mapping) -> Mapping:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


class KubeStore(Store):
    """Objects on a Kubernetes API server. `namespace=None` means the kubeconfig context's
    namespace (else `default`) for one object, and all namespaces for a list."""

    # Writes go through the API server's admission: its webhooks (`serve`) mutate what is created.
    calls_admission_webhooks = True

    def __init__(self, kubeconfig: str | None = None, context: str | None = None, *, config: Any = None,
                 timeout: float = DEFAULT_TIMEOUT, field_manager: str = FIELD_MANAGER):
        self.config = config if config is not None else load_config(kubeconfig, context)
        self.timeout = timeout
        self.field_manager = field_manager
        self.http = ApiClient(self.config, timeout=timeout)
        self.server = self.http.server
        self.default_namespace = self.http.namespace or DEFAULT_NAMESPACE
        self.last_warnings: list[str] = []     # the API server's `Warning` headers of the last request

    def new_client(self, *, timeout: float | None = None):
        """lightkube's typed Client on the same cluster and credentials (for lightkube's models),
        one per calling thread (client.ThreadClient)."""
        return ThreadClient(self.config, timeout=timeout or self.timeout, field_manager=self.field_manager)

    def close(self) -> None:
        self.http.close()

    # --- requests ------------------------------------------------------------------------------

    def _ns(self, res: Resource, namespace: str | None) -> str | None:
        if not res.namespaced:
            return None
        if namespace is not None and not isinstance(namespace, str):
            raise BadRequest(f"namespace: must be a string, not {type(namespace).__name__}")
        return namespace or self.default_namespace

    def _send(self, method: str, res: Resource, *, name: str | None = None, namespace: str | None = None,
              body: Any = None, content_type: str | None = None, params: dict | None = None,
              subresource: str | None = None) -> Any:
        """One request; the decoded JSON answer. `method` is get, post, put, patch or delete; the
        URL is `res`'s collection (post) or object."""
        if subresource not in (None, "status"):
            raise BadRequest(f'the server could not find the requested resource (subresource "{subresource}")')
        if name is not None and (not isinstance(name, str) or not name):
            raise BadRequest("resource name may not be empty")
        # The collection for a create; the object (and its subresource) otherwise.
        path = resource_path(res, namespace if res.namespaced else None, None if method == "post" else name,
                             subresource)
        query = dict(params or {})
        if method in ("post", "put", "patch"):
            query.setdefault("fieldManager", self.field_manager)
        headers: list[str] = []     # the Warning headers of this answer, a refusal's too
        try:
            resp = self.http.request(_HTTP[method], path, params=query, body=body, content_type=content_type,
                                     res=res, warning_headers=headers)
        finally:
            self.last_warnings = warning_texts(headers)
        return resp.json()

    # --- reads ---------------------------------------------------------------------------------

    def get(self, kind: str, name: str, namespace: str | None = None, *, api_version: str | None = None) -> dict:
        """`api_version` reads the object at another served version or group (`resource_of`)."""
        res = resource_of(kind, api_version)
        return self._send("get", res, name=name, namespace=self._ns(res, namespace))

    def get_flavor(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """The flavor.kubevirt.io object standing for instancetype `kind`, as v1beta1, or None
        (none by that name, or the flavor CRDs are not installed)."""
        flavor_kind = FLAVOR_OF.get(kind)
        if flavor_kind is None:
            return None
        res = resource_of(flavor_kind, FLAVOR_API_VERSION)
        try:
            return as_type(self._send("get", res, name=name, namespace=self._ns(res, namespace)))
        except NotFound:
            return None

    def list(self, kind: str, namespace: str | None = None, *, label_selector: Any = None,
             field_selector: Any = None) -> Iterator[dict]:
        items, _ = self.list_at(kind, namespace, label_selector=label_selector, field_selector=field_selector)
        return iter(items)

    def list_at(self, kind: str, namespace: str | None = None, *, label_selector: Any = None,
                field_selector: Any = None, api_version: str | None = None,
                convert: Callable[[dict], Any] | None = None) -> tuple[builtins.list[Any], str]:
        """Every object of `kind` (paged), ordered by namespace then name as the API server keeps
        them, and the list's resourceVersion (where a watch of the same kind starts). `convert`
        maps each object as its page arrives (an informer keeps a compact form, never the whole
        list as dicts)."""
        res = resource_of(kind, api_version)
        params = {"limit": PAGE, "labelSelector": selector_text(label_selector),
                  "fieldSelector": selector_text(field_selector, fields=True)}
        if namespace is not None and not isinstance(namespace, str):
            raise BadRequest(f"namespace: must be a string, not {type(namespace).__name__}")
        ns = namespace or None if res.namespaced else None
        items: list = []
        with gc_paused():
            for page in self.list_pages(res, ns, params, raw_items=convert is not None):
                for obj in page.get("items") or ():
                    if convert is not None:
                        obj = _decode(obj)
                    if not isinstance(obj, dict):
                        raise BadRequest("the API server's answer is not a list of objects")
                    obj.setdefault("apiVersion", res.api_version)
                    obj.setdefault("kind", res.kind)
                    items.append(obj if convert is None else convert(obj))
        return items, (page.get("metadata") or {}).get("resourceVersion") or ""

    def list_pages(self, res: Resource, namespace: str | None, params: dict,
                   headers: dict | None = None, *, raw_items: bool = False) -> Iterator[dict]:
        """The decoded pages of one list request (`limit`/`continue` paging), as the API server sent
        them: no object is built per item. `namespace` None lists a namespaced kind in all
        namespaces; `headers` may ask for another representation of the list (a Table);
        `raw_items`: each item left as its JSON (`msgspec.Raw`), for the caller to decode one at a
        time."""
        decode = _decode_raw_page if raw_items else _decode
        path = resource_path(res, namespace)
        query = dict(params)
        while True:
            resp = self.http.request("GET", path, params=query, headers=headers, res=res)
            try:
                with gc_paused():
                    page = decode(resp.content)
            except msgspec.DecodeError:
                raise BadRequest(f"the API server's answer is not JSON: {resp.content[:200]!r}") from None
            if not isinstance(page, dict):
                raise BadRequest("the API server's answer is not a list")
            yield page
            cont = (page.get("metadata") or {}).get("continue")
            if not cont:
                return
            query["continue"] = cont

    def count(self, kind: str, namespace: str | None = None, *, label_selector: Any = None,
              field_selector: Any = None) -> int:
        return len(self.list_at(kind, namespace, label_selector=label_selector, field_selector=field_selector)[0])

    def resource_version(self, kind: str = "Namespace") -> str:
        """The API server's current resourceVersion (a one-item list of `kind`): a watch of any
        kind can start there."""
        res = resource_of(kind)
        page = self.http.request_json("GET", resource_path(res), params={"limit": 1}, res=res)
        return (page.get("metadata") or {}).get("resourceVersion", "")

    # --- writes --------------------------------------------------------------------------------

    def create(self, obj: Mapping, *, namespace: str | None = None, dry_run: bool = False) -> dict:
        if not isinstance(obj, Mapping):
            raise BadRequest("Object is not a valid Kubernetes object: expected a JSON object")
        check_json(obj)
        res = resource_of(obj.get("kind"), obj.get("apiVersion"))
        body = dict(obj)
        meta = dict(meta_of(obj))
        check_metadata(meta)
        if res.namespaced:
            given = meta.get("namespace")
            if given and namespace and given != namespace:
                raise BadRequest("the namespace of the provided object does not match the namespace sent on the request")
            meta["namespace"] = given or namespace or self.default_namespace
        body["metadata"] = meta
        body.setdefault("apiVersion", res.api_version)
        return self._send("post", res, namespace=meta.get("namespace") if res.namespaced else None, body=body,
                          params={"dryRun": "All"} if dry_run else None)

    def update(self, obj: Mapping, *, subresource: str | None = None) -> dict:
        if not isinstance(obj, Mapping) or not isinstance(obj.get("metadata", {}), Mapping):
            raise BadRequest("Object is not a valid Kubernetes object: expected a JSON object with metadata")
        check_json(obj)
        res = resource_of(obj.get("kind"), obj.get("apiVersion"))
        meta = dict(meta_of(obj))
        check_metadata(meta)
        name = meta.get("name") or ""
        ns = self._ns(res, meta.get("namespace"))
        body = dict(obj)
        body["metadata"] = meta
        if res.namespaced:
            meta["namespace"] = ns
        if meta.get("resourceVersion"):
            return self._send("put", res, name=name, namespace=ns, body=body, subresource=subresource)
        # No resourceVersion: an unconditional replace (Kubernetes needs one for an update).
        for attempt in range(UPDATE_RETRIES):
            current = self.get(res.kind, name, ns)
            meta["resourceVersion"] = meta_of(current).get("resourceVersion")
            try:
                return self._send("put", res, name=name, namespace=ns, body=body, subresource=subresource)
            except Conflict:
                if attempt == UPDATE_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def patch(self, kind: str, name: str, patch: Mapping, namespace: str | None = None, *,
              subresource: str | None = None, api_version: str | None = None) -> dict:
        """JSON merge patch (RFC 7386); a `metadata.resourceVersion` in it is a precondition."""
        if not isinstance(patch, Mapping):
            raise BadRequest("a merge patch must be a JSON object")
        check_json(patch)
        res = resource_of(kind, api_version)
        return self._send("patch", res, name=name, namespace=self._ns(res, namespace), body=dict(patch),
                          content_type=MERGE_PATCH, subresource=subresource)

    def json_patch(self, kind: str, name: str, operations: builtins.list[Any], namespace: str | None = None, *,
                   subresource: str | None = None) -> dict:
        """RFC 6902 JSON patch (a `test` operation is a precondition)."""
        res = resource_of(kind)
        return self._send("patch", res, name=name, namespace=self._ns(res, namespace), body=list(operations),
                          content_type=JSON_PATCH, subresource=subresource)

    def delete(self, kind: str, name: str, namespace: str | None = None, *, propagation: str = "Background",
               resource_version: str | None = None, uid: str | None = None,
               grace_period: int | None = None) -> dict:
        """Delete with `propagationPolicy` (Background, Foreground, Orphan), `gracePeriodSeconds` and
        preconditions. Returns
        the object as the API server answered it; for kinds whose DELETE answers a Status, an object
        with the kind, name, namespace and uid the Status names."""
        res = resource_of(kind)
        ns = self._ns(res, namespace)
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation}
        if grace_period is not None:
            options["gracePeriodSeconds"] = grace_period
        pre = {k: v for k, v in (("resourceVersion", resource_version), ("uid", uid)) if v}
        if pre:
            options["preconditions"] = pre
        out = self._send("delete", res, name=name, namespace=ns, body=options)
        if isinstance(out, dict) and out.get("kind") == "Status":
            details = out.get("details") or {}
            meta = {"name": details.get("name", name), "uid": details.get("uid", "")}
            if ns:
                meta["namespace"] = ns
            return {"apiVersion": res.api_version, "kind": res.kind, "metadata": meta}
        return out

    def transaction(self) -> AbstractContextManager[Store]:
        """A no-op context yielding this store: the API server has no multi-object transactions;
        each write lands (or is refused) on its own, and optimistic concurrency on
        resourceVersions is what keeps concurrent writers apart."""
        return nullcontext(self)

    # --- the change feed -------------------------------------------------------------------------

    def open_watch(self, kind: str, namespace: str | None = None, *, since: str | None = None,
                   idle: float | None = None, server_timeout: int | None = None, bookmarks: bool = True,
                   label_selector: Any = None, api_version: str | None = None) -> WatchStream:
        """Kubernetes' watch of one kind from resourceVersion `since` (one request): iterate it for
        (type, object) pairs, BOOKMARK events included. It ends when the server closes it
        (`server_timeout`), or once `idle` seconds pass with no event; 410 Gone raises `Gone`;
        `abort()` (from any thread) ends it at once. `api_version`: as for `list_at`. The thread that
        iterates it makes the request and reads it on its own connection (client.ApiClient)."""
        res = resource_of(kind, api_version)
        params = {"watch": "true", "resourceVersion": since or None,
                  "allowWatchBookmarks": "true" if bookmarks else None,
                  "timeoutSeconds": server_timeout, "labelSelector": selector_text(label_selector)}
        path = resource_path(res, namespace or None if res.namespaced else None)
        return WatchStream(self.http.stream(path, params, idle=idle, res=res))

    def changes(self, since: ResourceVersion = 0, *, kind: str | None = None,
                namespace: str | None = None, objects: bool = True) -> Iterator[Event]:
        """Events of `kind` after resourceVersion `since` (a watch that ends once 0.25 s pass with
        no event). A cluster has no feed of all kinds at once: `kind` is required. An Informer
        is the way to follow changes continuously. A watch carries the objects whatever
        `objects` says."""
        if not kind:
            raise BadRequest("changes: a cluster's change feed is per kind: name the kind")
        yield from self.watch(kind, namespace, since=str(since) if since else None, timeout=0.25)

    def watch(self, kind: str | None = None, namespace: str | None = None, *, since: ResourceVersion | None = None,
              timeout: float | None = None, poll: float = 0.05) -> Iterator[Event]:
        """Events of `kind` as they happen (from `since`, default now), until `timeout` seconds pass idle."""
        if not kind:
            raise BadRequest("watch: a cluster's change feed is per kind: name the kind")
        res = resource_of(kind)
        since = self.resource_version(kind) if since is None else since
        for etype, obj in self.open_watch(kind, namespace, since=str(since), idle=timeout):
            if etype not in ("ADDED", "MODIFIED", "DELETED"):
                continue
            meta = meta_of(obj)
            yield Event(etype, res.kind, meta.get("namespace", ""), meta.get("name", ""), meta.get("uid", ""),
                        meta.get("resourceVersion", ""), obj)

    # --- cluster facts -------------------------------------------------------------------------------

    def ping(self) -> str:
        """The API server's version (`/version`): proves it can be reached with these credentials."""
        return self.http.request_json("GET", "/version").get("gitVersion", "")


class WatchStream:
    """One watch request's events as (type, dict) pairs (see `KubeStore.open_watch`)."""

    def __init__(self, lines: LineStream):
        self._lines = lines

    def __iter__(self) -> Iterator[tuple[str, dict]]:
        for line in self._lines:
            event = _decode(line)
            etype, obj = event.get("type"), event.get("object") or {}
            if etype == "ERROR":
                raise api_error(obj)
            yield etype, obj

    def abort(self) -> None:
        """End the stream now (another thread's blocked read returns)."""
        self._lines.abort()


def wait_deleted(store: KubeStore, kind: str, name: str, namespace: str | None = None, *,
                 timeout: float = 30.0) -> bool:
    """Poll until the object is gone (finalizers, the garbage collector); bounded by `timeout`."""
    from instancetype.store.base import NotFound

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            store.get(kind, name, namespace)
        except NotFound:
            return True
        time.sleep(0.1)
    return False


__all__ = ["KubeStore", "WatchStream", "Gone", "selector_text", "wait_deleted"]
