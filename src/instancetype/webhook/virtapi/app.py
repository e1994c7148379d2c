"""virt-api's role: the aggregated API `subresources.kubevirt.io/v1` over HTTP (aiohttp).

    api = VirtAPI(store, vm_verbs=instancetype.controller.vm, vmi_verbs=instancetype.controller.pause,
                  requestheader=RequestHeaderConfig.from_configmap_data(cm["data"]), authorize=SubjectAccessReviewer(post))
    api.register(app)          # routes on any aiohttp Application (serve's, or `api.app()`)

Routes (pkg/virt-api/api.go): `/`, `/apis`, `/healthz`, `/apis/subresources.kubevirt.io`,
`.../v1` (APIResourceList), `.../v1/version`, `.../v1/healthz` without authentication (virt-api's
noAuthEndpoints); `PUT .../v1/namespaces/NS/virtualmachines/NAME/{start,stop,restart}`,
`PUT .../virtualmachineinstances/NAME/{pause,unpause,softreboot}` (when given `vmi_verbs`),
`PUT .../{virtualmachines,virtualmachineinstances}/NAME/{addvolume,removevolume}` (when given
`volume_verbs`),
`GET .../virtualmachines/NAME/expand-spec` and `PUT .../namespaces/NS/expand-vm-spec` after the
front-proxy authentication and a SubjectAccessReview (`auth.py`). Success is 202 with no body
for the actions, 200 with the VM for the expansions; failures are metav1.Status bodies.

The store work is blocking and runs on one worker thread that owns the store (an SQLite
connection stays on the thread that made it; a store backed by the API server must not block
the event loop that also answers the API server's admission calls).
"""
from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from aiohttp import web

from instancetype.store.base import APIError, Store

if TYPE_CHECKING:
    from instancetype.store.kube.store import KubeStore

from . import actions, discovery
from .auth import Attributes, RequestHeaderConfig, User, authenticate, forbidden_status, rbac_verb, unauthorized_status

log = logging.getLogger("instancetype.virtapi")

Authorize = Callable[[User, Attributes], "tuple[bool, str]"]
_NS = "/namespaces/{namespace}"


def _json(status: int, body: Any) -> web.Response:
    # Bytes, so that aiohttp adds no `; charset=utf-8`: Kubernetes' clients (lightkube among them)
    # read a Status only from `Content-Type: application/json` exactly, as go-restful's MIME_JSON
    # that virt-api writes (pkg/virt-api/rest: writeError).
    return web.Response(status=status, body=json.dumps(body).encode(), content_type="application/json")


def _document(make: Callable[[], dict]):
    async def handler(_request: web.Request) -> web.Response:
        return _json(200, make())
    return handler


class VirtAPI:
    """The subresource API over a store. `store` is a Store, or a function returning one (called
    on the worker thread, for stores bound to the thread that opens them). `requestheader` and
    `authorize` are required unless `insecure=True` (tests and the embedded store on loopback)."""

    def __init__(self, store: Store | Callable[[], Store], *, vm_verbs: actions.VMVerbs,
                 vmi_verbs: actions.VMIVerbs | None = None, volume_verbs: actions.VolumeVerbs | None = None,
                 requestheader: RequestHeaderConfig | None = None,
                 authorize: Authorize | None = None, insecure: bool = False,
                 apiserver_version: Callable[[], dict] | None = None):
        if not insecure and (requestheader is None or authorize is None):
            raise ValueError("VirtAPI: requestheader and authorize are required (or insecure=True)")
        self._store_arg = store
        self.vm_verbs = vm_verbs
        self.vmi_verbs = vmi_verbs          # None: the VMI subresources are not served
        self.volume_verbs = volume_verbs    # None: addvolume and removevolume are not served
        self._store: Store | None = store if isinstance(store, Store) else None
        self.requestheader = requestheader
        self.authorize = authorize
        self.insecure = insecure
        self.apiserver_version = apiserver_version
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="virtapi-store")

    # --- plumbing --------------------------------------------------------------------------------

    def _store_now(self) -> Store:
        if self._store is None:
            make = self._store_arg
            assert not isinstance(make, Store)      # a store given as is was kept in __init__
            self._store = make()
        return self._store

    async def _on_store(self, fn: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker, lambda: fn(self._store_now(), *args))

    def close(self) -> None:
        def _close():
            if self._store is not None and self._store is not self._store_arg:
                self._store.close()
        self._worker.submit(_close).result()
        self._worker.shutdown(wait=True)

    async def _check(self, request: web.Request, attrs: Attributes) -> web.Response | None:
        """None when the request may go on, else the 401/403 answer."""
        if self.insecure:
            return None
        assert self.requestheader is not None and self.authorize is not None     # (checked in __init__)
        peercert = request.transport.get_extra_info("peercert") if request.transport is not None else None
        user = authenticate(self.requestheader, peercert, request.headers)
        if user is None:
            return _json(401, unauthorized_status())
        loop = asyncio.get_running_loop()
        try:
            allowed, reason = await loop.run_in_executor(None, self.authorize, user, attrs)
        except Exception as e:       # the review could not be made: fail closed
            log.error("SubjectAccessReview failed: %s", e)
            return _json(500, actions.internal_error("internal server error").status())
        if not allowed:
            return _json(403, forbidden_status(user, attrs, reason))
        return None

    async def _answer(self, request: web.Request, attrs: Attributes, work: Callable[..., Any], *args: Any,
                      ok: int = 202, details: dict | None = None) -> web.Response:
        refused = await self._check(request, attrs)
        if refused is not None:
            return refused
        try:
            result = await self._on_store(work, *args)
        except APIError as e:
            return _json(e.code, actions.status_of(e, **(details or {})))
        except Exception as e:       # a bug or a broken store: a 500, never a dropped connection
            log.exception("subresource %s failed", request.path)
            return _json(500, actions.internal_error(e).status())
        if ok == 202:
            return web.Response(status=202)
        return _json(ok, result)

    # --- routes ------------------------------------------------------------------------------------

    def register(self, app: web.Application, *, root_routes: bool = True) -> None:
        """Add the routes to `app` (`root_routes=False`: leave `/` and `/healthz` to the app)."""
        p = discovery.PREFIX
        r = app.router
        if root_routes:
            r.add_get("/", _document(discovery.root_paths))
            r.add_get("/healthz", self._healthz)
        r.add_get("/apis", _document(discovery.api_group_list))
        r.add_get(f"/apis/{discovery.GROUP}", _document(discovery.api_group))
        r.add_get(p, _document(discovery.api_resource_list))
        r.add_get(p + "/", _document(discovery.api_resource_list))
        r.add_get(p + "/version", _document(discovery.version_info))
        r.add_get(p + "/healthz", self._healthz)
        for action in ("start", "stop", "restart"):
            r.add_put(f"{p}{_NS}/virtualmachines/{{name}}/{action}", self._vm_action(action))
        for action in actions.VMI_ACTIONS if self.vmi_verbs is not None else ():
            r.add_put(f"{p}{_NS}/virtualmachineinstances/{{name}}/{action}", self._vmi_action(action))
        for action in actions.VOLUME_ACTIONS if self.volume_verbs is not None else ():
            for kind, plural in (("vm", "virtualmachines"), ("vmi", "virtualmachineinstances")):
                r.add_put(f"{p}{_NS}/{plural}/{{name}}/{action}", self._volume_action(action, kind, plural))
        r.add_get(f"{p}{_NS}/virtualmachines/{{name}}/expand-spec", self._expand_spec)
        r.add_put(f"{p}{_NS}/expand-vm-spec", self._expand_vm_spec)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=4 << 20)
        self.register(app)

        async def _cleanup(_app):
            await asyncio.get_running_loop().run_in_executor(None, self.close)
        app.on_cleanup.append(_cleanup)
        return app

    async def _healthz(self, _request: web.Request) -> web.Response:
        if self.apiserver_version is None:
            code, body = discovery.healthz(None)
        else:
            try:
                version = await asyncio.get_running_loop().run_in_executor(None, self.apiserver_version)
                code, body = discovery.healthz(version)
            except Exception as e:
                code, body = discovery.healthz(None, str(e))
        return _json(code, body)

    def _vm_action(self, action: str):
        async def handler(request: web.Request) -> web.Response:
            ns, name = request.match_info["namespace"], request.match_info["name"]
            attrs = Attributes(rbac_verb(request.method, name) or "", discovery.GROUP, discovery.VERSION,
                               "virtualmachines", ns, name, action)
            body = await request.read()
            return await self._answer(request, attrs, actions.vm_action, action, ns, name, body, self.vm_verbs,
                                      details={"name": name, "group": actions.VM_GROUP, "kind": actions.VM_RESOURCE})
        return handler

    def _vmi_action(self, action: str):
        async def handler(request: web.Request) -> web.Response:
            ns, name = request.match_info["namespace"], request.match_info["name"]
            attrs = Attributes(rbac_verb(request.method, name) or "", discovery.GROUP, discovery.VERSION,
                               "virtualmachineinstances", ns, name, action)
            body = await request.read()
            return await self._answer(request, attrs, actions.vmi_action, action, ns, name, body, self.vmi_verbs,
                                      details={"name": name, "group": actions.VMI_GROUP,
                                               "kind": actions.VMI_RESOURCE})
        return handler

    def _volume_action(self, action: str, kind: str, plural: str):
        async def handler(request: web.Request) -> web.Response:
            ns, name = request.match_info["namespace"], request.match_info["name"]
            attrs = Attributes(rbac_verb(request.method, name) or "", discovery.GROUP, discovery.VERSION,
                               plural, ns, name, action)
            body = await request.read()
            resource = actions.VM_RESOURCE if kind == "vm" else actions.VMI_RESOURCE
            return await self._answer(request, attrs, actions.volume_action, action, kind, ns, name, body,
                                      self.volume_verbs, details={"name": name, "group": actions.VM_GROUP,
                                                                  "kind": resource})
        return handler

    async def _expand_spec(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["namespace"], request.match_info["name"]
        attrs = Attributes("get", discovery.GROUP, discovery.VERSION, "virtualmachines", ns, name, "expand-spec")
        return await self._answer(request, attrs, actions.expand_stored, ns, name, ok=200,
                                  details={"name": name, "group": actions.VM_GROUP, "kind": actions.VM_RESOURCE})

    async def _expand_vm_spec(self, request: web.Request) -> web.Response:
        ns = request.match_info["namespace"]
        attrs = Attributes("update", discovery.GROUP, discovery.VERSION, "expand-vm-spec", ns)
        body = await request.read()
        return await self._answer(request, attrs, actions.expand_posted, ns, body, ok=200)


def for_cluster(store: KubeStore, client: Any, vm_verbs: actions.VMVerbs,
                vmi_verbs: actions.VMIVerbs | None = None,
                volume_verbs: actions.VolumeVerbs | None = None) -> VirtAPI:
    """The subresource API of a cluster: the front-proxy settings read from
    `kube-system/extension-apiserver-authentication` (virt-api's readRequestHeader), decisions by
    SubjectAccessReviews, `healthz` from the API server's version (KubeStore.ping). `client` is a sync lightkube
    Client of the serve identity (reviews and the ConfigMap go through it, from worker threads).
    Raises `auth.AuthConfigError` when the ConfigMap has no front-proxy CA.
    The serving TLS context must then ask for client certificates: `auth.client_auth_context(ctx,
    api.requestheader)`."""
    from lightkube.resources.core_v1 import ConfigMap

    from .auth import CONFIGMAP_NAME, CONFIGMAP_NAMESPACE, SubjectAccessReviewer

    cm = client.get(ConfigMap, CONFIGMAP_NAME, namespace=CONFIGMAP_NAMESPACE)
    config = RequestHeaderConfig.from_configmap_data(cm.data or {})

    return VirtAPI(store, vm_verbs=vm_verbs, vmi_verbs=vmi_verbs, volume_verbs=volume_verbs, requestheader=config, authorize=SubjectAccessReviewer.lightkube(client),
                   apiserver_version=lambda: {"gitVersion": store.ping()})
