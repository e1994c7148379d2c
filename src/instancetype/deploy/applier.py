"""Applying the manifests to a Kubernetes API server, and removing them (lightkube).

`install`: server-side apply (field manager `instancetype`, conflicts forced: these objects are
ours) of the CRDs, then a bounded wait until each is Established, then the namespace and RBAC,
the KubeVirt object (only when the cluster has none), the catalogue (lifecycle/catalog_sync's
plan: created, restored or deleted as virt-operator does; unchanged objects are not written, so
a second install sends nothing to the webhooks), the subresource API's APIService (deploy/apiservice;
only for an address the aggregator may dial, else a warning on stderr), and last the webhook
configurations. Each object
prints one kubectl-style line: `<resource>/<name> created|configured|unchanged|deleted`.

A cluster where KubeVirt's own CRDs exist (kubevirt.io or instancetype.kubevirt.io, not labelled
`app.kubernetes.io/managed-by: instancetype`) is refused: KubeVirt already serves these webhooks.
Storage CRDs (CDI, snapshots) that another owner installed are left as they are.

`uninstall`: the APIService and webhook configurations first (so nothing is refused on the way), then RBAC, the
catalogue (one DELETE per kind), the KubeVirt object and `kubevirt` namespace if ours, our CRDs
(each one's storage made ready first, see `_Cluster.wait_storage_ready`; waited for until gone),
and the namespace. Only objects with our label are removed; absent ones are skipped.

Public: `ClusterError`, `connect(kubeconfig, context) -> Client`, `install(client, ...)`,
`uninstall(client, ...)`.
"""
from __future__ import annotations

import builtins
import os
import sys
import time
from collections.abc import Callable

import httpx2
import yaml
from lightkube import Client, codecs
from lightkube.config.kubeconfig import KubeConfig
from lightkube.core.exceptions import ApiError, ConfigError
from lightkube.core.resource_registry import resource_registry
from lightkube.generic_resource import create_global_resource, create_namespaced_resource

from instancetype.api import kinds
from instancetype.deploy import (
    catalogue_objects,
    kubevirt_objects,
    namespace_object,
    rbac_objects,
    webhook_configurations,
)
from instancetype.deploy.apiservice import APISERVICE_NAME, TargetError, apiservice_objects, apiservice_rbac_objects
from instancetype.deploy.crds import KUBEVIRT_KINDS, STORAGE_KINDS, generate_crds, is_ours
from instancetype.deploy.webhooks import WebhookTarget
from instancetype.errors import Error
from instancetype.store.base import APIError, NotFound
from instancetype.store.kube.client import ApiClient, Unreachable, resource_of, resource_path

FIELD_MANAGER = "instancetype"
CRD_WAIT_SECONDS = 60.0
# A deleted CRD goes when the API server's finalizer has emptied it: seconds, once its storage is
# ready (`_Cluster.wait_storage_ready`); the bound is for a finalizer that backs off anyway.
CRD_DELETE_SECONDS = 300.0
RETRY_SECONDS = 30.0
Echo = Callable[[str], None]
_CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")


class ClusterError(Error):
    """One line: what failed on the cluster, and why."""


# --- the client -----------------------------------------------------------------------------------
def connect(kubeconfig: str, context: str | None = None) -> Client:
    """A lightkube Client for the kubeconfig's context; ClusterError when the file or context is bad
    or the API server does not answer."""
    if not os.path.isfile(kubeconfig):
        raise ClusterError(f"cannot read --kubeconfig {kubeconfig}: no such file")
    try:
        config = KubeConfig.from_file(kubeconfig)
        single = config.get(context)
        client = Client(single, field_manager=FIELD_MANAGER, trust_env=False,
                        timeout=httpx2.Timeout(30.0, connect=10.0))
    except FileNotFoundError:
        raise ClusterError(f"cannot read --kubeconfig {kubeconfig}: no such file") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ConfigError, yaml.YAMLError) as exc:
        what = f"context {context!r}: " if context else ""
        raise ClusterError(f"invalid --kubeconfig {kubeconfig}: {what}{_reason(exc)}") from None
    return client


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


_CUSTOM_GROUPS = {c["spec"]["group"] for c in generate_crds()}


# Generic resources for the custom kinds (lightkube's models cover the built-in ones).
def _custom_class(api_version: str, kind: str):
    group, _, version = api_version.rpartition("/")
    r = kinds.BY_KIND.get(kind)
    if r is None or r.group != group or group not in _CUSTOM_GROUPS:
        return None
    make = create_namespaced_resource if r.namespaced else create_global_resource
    return make(group, version, kind, r.plural)


def _resource(obj: dict):
    cls = _custom_class(obj["apiVersion"], obj["kind"])
    return cls(obj) if cls is not None else codecs.from_dict(obj)


def _class_of(api_version: str, kind: str):
    cls = _custom_class(api_version, kind)
    if cls is not None:
        return cls
    return resource_registry.load(api_version, kind)


def _label(obj: dict) -> str:
    """kubectl's `<kind>.<group>/<name>`."""
    group = kinds.group_of(obj["apiVersion"])
    kind = obj["kind"].lower()
    return f"{kind}.{group}/{obj['metadata']['name']}" if group else f"{kind}/{obj['metadata']['name']}"


def _as_dict(res) -> dict:
    return res.to_dict() if hasattr(res, "to_dict") else dict(res)


class _Cluster:
    """The few calls install and uninstall make, with errors turned into one line."""

    def __init__(self, client: Client):
        self.client = client
        # Requests lightkube's typed client does not make (a collection's DELETE, a raw list).
        self.http = ApiClient(client.config, timeout=30.0)

    def _call(self, what: str, fn, *args, **kwargs):
        deadline = time.monotonic() + RETRY_SECONDS
        while True:
            try:
                return fn(*args, **kwargs)
            except ApiError as exc:
                # 429/503/504 are the API server asking to come back (a new CRD's storage still
                # initialising answers 429 "storage is (re)initializing"): retried, bounded.
                if exc.status.code in (429, 503, 504) and time.monotonic() < deadline:
                    time.sleep(0.2)
                    continue
                raise ClusterError(f"{what}: {exc.status.message or exc.status.reason}") from None
            except APIError as exc:         # the same refusals through store/kube/client.py
                if exc.code in (429, 503, 504) and time.monotonic() < deadline:
                    time.sleep(0.2)
                    continue
                raise ClusterError(f"{what}: {exc}") from None
            except Unreachable as exc:
                raise ClusterError(str(exc)) from None
            except httpx2.HTTPError as exc:
                cluster = getattr(getattr(self.client, "config", None), "cluster", None)
                server = getattr(cluster, "server", "") or "(unknown)"
                raise ClusterError(f"cannot reach the API server {server}: {_reason(exc)}") from None

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict | None:
        cls = _class_of(api_version, kind)

        def fetch():
            try:
                return _as_dict(self.client.get(cls, name, namespace=namespace))
            except ApiError as exc:
                if exc.status.code == 404:
                    return None
                raise
        return self._call(f"get {kind} {name}", fetch)

    def list(self, api_version: str, kind: str, labels: dict | None = None,
             namespace: str | None = None) -> builtins.list[dict]:
        cls = _class_of(api_version, kind)
        kw = {"namespace": namespace} if namespace is not None else {}
        return self._call(f"list {kind}", lambda: [_as_dict(o) for o in self.client.list(  # type: ignore[call-overload]  # cls is made at run time
            cls, labels=labels, **kw)])

    def apply(self, obj: dict) -> str:
        """Server-side apply; created, configured or unchanged (by resourceVersion)."""
        meta = obj["metadata"]
        before = self.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
        after = self._call(f"apply {_label(obj)}", self.client.apply, _resource(obj),
                           field_manager=FIELD_MANAGER, force=True)
        if before is None:
            return "created"
        after_rv = _as_dict(after).get("metadata", {}).get("resourceVersion")
        return "unchanged" if after_rv == before["metadata"].get("resourceVersion") else "configured"

    def replace(self, obj: dict, resource_version: str) -> None:
        want = dict(obj, metadata=dict(obj["metadata"], resourceVersion=resource_version))
        self._call(f"update {_label(obj)}", self.client.replace, _resource(want), field_manager=FIELD_MANAGER)

    def delete_collection(self, api_version: str, kind: str, labels: dict) -> builtins.list[dict]:
        """One DELETE of the collection of a cluster-scoped kind (the objects with `labels`): the
        objects the API server deleted, in its list order (a hundred catalogue objects in one
        request, not one each)."""
        res = resource_of(kind, api_version)
        selector = ",".join(f"{k}={v}" for k, v in labels.items())

        def remove() -> list[dict]:
            out = self.http.request_json("DELETE", resource_path(res), params={"labelSelector": selector}, res=res)
            items = out.get("items") if isinstance(out, dict) else None
            return [o for o in items or () if isinstance(o, dict)]
        return self._call(f"delete {kind} -l {selector}", remove)

    def wait_storage_ready(self, crd: dict) -> None:
        """Until the API server serves the CRD's objects from its watch cache (a list at
        resourceVersion 0 of the storage version answers, not 429 "storage is (re)initializing").

        kube-apiserver makes a CRD's storage on the first request for its objects. When that first
        request is the CRD finalizer's own list, after a `delete` (a CRD nobody listed since this
        API server started, or since it was made), it meets a watch cache still initialising,
        fails, and is requeued with the workqueue's per-item exponential backoff (crd_finalizer.go
        `processNextWorkItem`, `AddRateLimited`): on a busy machine the retries drift to tens of
        seconds, and the CRD stays Terminating that long. Listing it here first makes the storage
        and waits (429 is retried by `_call`, bounded) until it is ready. Best effort: past the
        bound, or refused, the delete goes ahead (and says what is wrong, if anything is)."""
        spec = crd["spec"]
        version = next(v["name"] for v in spec["versions"] if v.get("storage"))
        path = f"/apis/{spec['group']}/{version}/{spec['names']['plural']}"

        def first_page() -> None:
            try:
                self.http.request("GET", path, params={"limit": 1, "resourceVersion": "0"})
            except NotFound:       # not served (yet), no storage to wait for
                pass
        try:
            self._call(f"list {spec['names']['plural']}.{spec['group']}", first_page)
        except ClusterError:
            pass

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> bool:
        cls = _class_of(api_version, kind)

        def remove():
            try:
                self.client.delete(cls, name, namespace=namespace)
                return True
            except ApiError as exc:
                if exc.status.code == 404:
                    return False
                raise
        return self._call(f"delete {kind} {name}", remove)


def _established(crd: dict | None) -> bool:
    for cond in ((crd or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Established" and cond.get("status") == "True":
            return True
    return False


# --- install --------------------------------------------------------------------------------------
def _refuse_foreign(cluster: _Cluster) -> None:
    for crd in generate_crds():
        if crd["spec"]["group"] not in (kinds.GROUP, "kubevirt.io"):
            continue
        live = cluster.get(*_CRD, crd["metadata"]["name"])
        if live is not None and not is_ours(live):
            raise ClusterError(f"KubeVirt already serves these webhooks: customresourcedefinition "
                               f"{crd['metadata']['name']} exists and is not managed by instancetype")


def install(client: Client, *, namespace: str, target: WebhookTarget, echo: Echo) -> None:
    cluster = _Cluster(client)
    _refuse_foreign(cluster)
    # 1. CRDs (after any of ours an uninstall left terminating), then wait until they are served
    terminating = []
    for crd in generate_crds():
        live = cluster.get(*_CRD, crd["metadata"]["name"])
        if live is not None and is_ours(live) and live["metadata"].get("deletionTimestamp"):
            terminating.append(crd["metadata"]["name"])
    _wait_gone(cluster, terminating)
    names = []
    for crd in generate_crds():
        name = crd["metadata"]["name"]
        if crd["spec"]["names"]["kind"] in STORAGE_KINDS:
            live = cluster.get(*_CRD, name)
            if live is not None and not is_ours(live):
                echo(f"{_label(crd)} unchanged (installed by another owner)")
                continue
        echo(f"{_label(crd)} {cluster.apply(crd)}")
        names.append(name)
    deadline = time.monotonic() + CRD_WAIT_SECONDS
    for name in names:
        while not _established(cluster.get(*_CRD, name)):
            if time.monotonic() > deadline:
                raise ClusterError(f"customresourcedefinition {name} is not Established after "
                                   f"{CRD_WAIT_SECONDS:.0f}s")
            time.sleep(0.1)
    # 2. namespace and RBAC (a namespace an uninstall left terminating is waited for first)
    _wait_not_terminating(cluster, namespace)
    for obj in [namespace_object(namespace)] + rbac_objects(namespace) + apiservice_rbac_objects(namespace):
        echo(f"{_label(obj)} {cluster.apply(obj)}")
    # 3. the KubeVirt object, only when the cluster has none
    existing = cluster.list(kinds.KUBEVIRT_API_VERSION, "KubeVirt", namespace="*")   # in any namespace
    kubevirt: dict | None
    if existing:
        kubevirt = existing[0]
        echo(f"{_label(kubevirt)} unchanged")
    else:
        _wait_not_terminating(cluster, kinds.KUBEVIRT_NAMESPACE)
        for obj in kubevirt_objects():
            echo(f"{_label(obj)} {cluster.apply(obj)}")
        kubevirt = cluster.get(kinds.KUBEVIRT_API_VERSION, "KubeVirt", kinds.KUBEVIRT_NAME, kinds.KUBEVIRT_NAMESPACE)
    # 4. the catalogue, as virt-operator keeps it
    _sync_catalogue(cluster, kubevirt, echo)
    # 5. the subresource API (virt-api's APIService), where an aggregated API may be served
    try:
        subresource_api = apiservice_objects(namespace, target)
    except TargetError as e:    # the webhooks work there; virtctl's subresources will not (a warning, stderr)
        print(f"Warning: apiservice.apiregistration.k8s.io/{APISERVICE_NAME} not registered: {e}", file=sys.stderr)
        subresource_api = []
    for obj in subresource_api:
        echo(f"{_label(obj)} {cluster.apply(obj)}")
    # 6. the webhooks, last
    for obj in webhook_configurations(target):
        echo(f"{_label(obj)} {cluster.apply(obj)}")


def _wait_gone(cluster: _Cluster, names: list[str]) -> None:
    deadline = time.monotonic() + CRD_DELETE_SECONDS
    for name in names:
        while cluster.get(*_CRD, name) is not None:
            if time.monotonic() > deadline:
                raise ClusterError(f"customresourcedefinition {name} is still terminating after "
                                   f"{CRD_DELETE_SECONDS:.0f}s")
            time.sleep(0.2)


def _wait_not_terminating(cluster: _Cluster, namespace: str) -> None:
    deadline = time.monotonic() + CRD_WAIT_SECONDS
    while True:
        live = cluster.get("v1", "Namespace", namespace)
        if live is None or not live["metadata"].get("deletionTimestamp"):
            return
        if time.monotonic() > deadline:
            raise ClusterError(f"namespace {namespace} is still terminating after {CRD_WAIT_SECONDS:.0f}s")
        time.sleep(0.2)


def _sync_catalogue(cluster: _Cluster, kubevirt: dict | None, echo: Echo) -> None:
    from instancetype.catalog import MANAGED_SELECTOR
    from instancetype.lifecycle.catalog_sync import plan

    def get_live(kind: str, name: str) -> dict | None:
        return cluster.get(kinds.API_VERSION, kind, name)

    def managed_live(kind: str) -> list[dict]:
        return cluster.list(kinds.API_VERSION, kind, labels=MANAGED_SELECTOR)

    for step in plan(catalogue_objects(kubevirt), get_live, managed_live):
        obj = step.want or step.live
        assert obj is not None      # a step wants an object, has a live one, or both
        label = _label(dict(obj, apiVersion=kinds.API_VERSION))
        if step.action == "created":
            assert step.want is not None
            cluster.apply(step.want)
        elif step.action == "configured":   # restored whole, as virt-operator replaces it
            assert step.want is not None and step.live is not None
            cluster.replace(step.want, step.live["metadata"]["resourceVersion"])
        elif step.action == "deleted":
            cluster.delete(kinds.API_VERSION, step.kind, step.name)
        echo(f"{label} {step.action}")


# --- uninstall ------------------------------------------------------------------------------------
def uninstall(client: Client, *, namespace: str, echo: Echo) -> None:
    cluster = _Cluster(client)

    def remove(obj: dict, *, only_ours: bool = True) -> None:
        meta = obj["metadata"]
        live = cluster.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
        if live is None or (only_ours and not is_ours(live)) or live["metadata"].get("deletionTimestamp"):
            return
        if cluster.delete(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace")):
            echo(f"{_label(obj)} deleted")

    for obj in reversed(apiservice_objects(namespace, WebhookTarget(url="https://192.0.2.1"))):
        remove(obj)
    for obj in webhook_configurations(WebhookTarget(url="https://unused")):
        remove(obj)
    for obj in reversed(rbac_objects(namespace) + apiservice_rbac_objects(namespace)):
        remove(obj)
    crds = [c for c in generate_crds() if is_ours(cluster.get(*_CRD, c["metadata"]["name"]))]
    crd_names = {c["metadata"]["name"] for c in crds}
    if kinds.BY_KIND[kinds.CLUSTER_INSTANCETYPE].qualified in crd_names:
        from instancetype.catalog import MANAGED_SELECTOR
        from instancetype.lifecycle.catalog_sync import CATALOGUE_KINDS

        for kind in CATALOGUE_KINDS:
            for live in cluster.delete_collection(kinds.API_VERSION, kind, MANAGED_SELECTOR):
                echo(f"{_label(dict(live, apiVersion=kinds.API_VERSION, kind=kind))} deleted")
    ns_obj, kv_obj = kubevirt_objects()
    if kinds.BY_KIND["KubeVirt"].qualified in crd_names:
        remove(kv_obj)
    remove(ns_obj)
    for crd in crds:
        cluster.wait_storage_ready(crd)
    for crd in reversed(crds):
        if cluster.delete(*_CRD, crd["metadata"]["name"]):
            echo(f"{_label(crd)} deleted")
    _wait_gone(cluster, [c["metadata"]["name"] for c in crds])
    remove(namespace_object(namespace))


__all__ = ["ClusterError", "connect", "install", "uninstall", "FIELD_MANAGER", "KUBEVIRT_KINDS"]
