"""The command line on a Kubernetes cluster: the same methods as the embedded `Cluster`, driven
through the API server (`store.kube.KubeStore`).

On a cluster the API server runs admission (the webhooks `instancetype serve` answers) and the
controller reconciles; the command line only sends requests, as kubectl and virtctl do:

* `apply`: kubectl's client-side apply (GET, then create, or the three-way merge patch of
  `controller.apply` sent as a merge patch); `update` a PUT with the read resourceVersion.
* `start` / `stop` / `restart`: `PUT /apis/subresources.kubevirt.io/v1/namespaces/NS/
  virtualmachines/NAME/<action>` (virtctl's requests); `expand_vm`: `GET .../expand-spec`.
* dry runs: the API server's `dryRun=All` (a cluster has no transaction to roll back).

A cluster is only ever used when the command line names one (`--kubeconfig`, `--cluster`,
`--context`): see `cluster_options`.
"""
from __future__ import annotations

from typing import Any

from instancetype.api.kinds import BY_KIND
from instancetype.errors import LoadError
from instancetype.store.base import BadRequest, NotFound, StoreReads, check_json

SUBRESOURCE_GROUP = "subresources.kubevirt.io/v1"


def kubectl_last_applied(obj: dict, namespace: str | None) -> dict:
    """The object with kubectl's `last-applied-configuration` (apply's GetModifiedConfiguration):
    the object as kubectl sends it (its namespace set, `annotations` present even when empty, the
    annotation itself left out), JSON with sorted keys and Go's escapes, and a newline. Written
    exactly so that kubectl and this command line can apply the same objects in turn."""
    from instancetype.controller.apply import LAST_APPLIED
    from instancetype.jsonutil import clone

    from .gojson import go_json

    out = clone(obj)
    meta = out.get("metadata")
    meta = dict(meta) if isinstance(meta, dict) else {}
    if namespace is not None:
        meta["namespace"] = namespace
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != LAST_APPLIED}
    meta["annotations"] = annotations
    out["metadata"] = meta
    text = go_json(out) + "\n"
    out = clone(out)
    out["metadata"]["annotations"] = {**annotations, LAST_APPLIED: text}
    return out


class RemoteCluster(StoreReads):
    """The methods of `controller.Cluster` the command line uses, on a Kubernetes cluster, every
    request through `KubeStore` (lightkube: kubeconfig, auth, retries), opened on first use."""

    remote = True
    images = None

    def __init__(self, kubeconfig: str | None, context: str | None, config: Any = None):
        self._kubeconfig, self._context, self._config = kubeconfig, context, config
        self._store: Any = None

    @property
    def store(self) -> Any:
        """The `CommandLineKubeStore` (lightkube), opened on first use."""
        if self._store is None:
            from .kube_store import CommandLineKubeStore

            self._store = CommandLineKubeStore(self._kubeconfig, self._context, config=self._config)
        return self._store

    @classmethod
    def open(cls, kubeconfig: str | None, context: str | None, config: Any = None) -> "RemoteCluster":
        """`config`: the kubeconfig already loaded (lightkube `SingleConfig`), else it is read here."""
        cluster = cls(kubeconfig, context, config)
        try:
            cluster.store.ping()      # one clear line now for an unreachable or unauthorised cluster
        except BaseException:
            cluster.close()
            raise
        return cluster

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> "RemoteCluster":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- writes ----------------------------------------------------------------------------------

    def apply(self, obj: dict, *, namespace: str | None = None):
        from instancetype.api.versions import needs_upgrade, upgrade
        from instancetype.controller.apply import original_of, three_way_patch
        from instancetype.controller.cluster import ApplyResult
        from instancetype.store.base import check_create

        if not isinstance(obj, dict) or not obj.get("kind"):
            raise LoadError("apply: not a Kubernetes object")
        check_json(obj)
        if not isinstance(obj.get("metadata") or {}, dict):
            raise BadRequest("Object is not a valid Kubernetes object: its metadata is not a JSON object")
        res = BY_KIND.get(obj.get("kind", ""))
        meta = obj.get("metadata") or {}
        ns = (meta.get("namespace") or namespace or self.store.default_namespace) \
            if res is not None and res.namespaced else None
        applied = kubectl_last_applied(obj, ns)
        converted, warnings = upgrade(applied) if needs_upgrade(applied) else (applied, [])
        check_create(converted, namespace)
        kind = converted["kind"]
        name = (converted.get("metadata") or {}).get("name") or ""
        try:
            current = self.store.get(kind, name, ns) if name else None
        except NotFound:
            current = None
        if current is None:
            return ApplyResult("created", self.store.create(converted, namespace=ns), warnings)
        original = original_of(current)
        if original is not None and needs_upgrade(original):
            original = upgrade(original)[0]
        patch = three_way_patch(original, converted, current)
        if not patch:
            return ApplyResult("unchanged", current, warnings)
        return ApplyResult("configured", self.store.patch(kind, name, patch, ns), warnings)

    def create(self, obj: dict, *, namespace: str | None = None):
        from instancetype.controller.cluster import ApplyResult

        return ApplyResult("created", self.store.create(obj, namespace=namespace))

    def update(self, obj: dict):
        from instancetype.controller.cluster import ApplyResult

        return ApplyResult("configured", self.store.update(obj))

    def delete(self, kind: str, name: str, namespace: str | None = None) -> dict:
        return self.store.delete(kind, name, namespace)

    def sync_catalog(self, *, dry_run: bool = False) -> list:
        """virt-operator's catalogue deployment as `install` does it (its registry annotation),
        admitted by the API server's webhooks."""
        from instancetype.controller.catalog_sync import sync
        from instancetype.deploy import REGISTRY

        return sync(self.store, dry_run=dry_run, registry=REGISTRY, admit_here=False)

    # --- virtctl: KubeVirt's subresource API ----------------------------------------------------

    def _vm_path(self, name: str, namespace: str | None, action: str) -> str:
        ns = namespace or self.store.default_namespace
        return f"/apis/{SUBRESOURCE_GROUP}/namespaces/{ns}/virtualmachines/{name}/{action}"

    def _vm_action(self, action: str, name: str, namespace: str | None, body: dict | None = None) -> dict:
        try:
            return self.store.request("PUT", self._vm_path(name, namespace, action), body or {})
        except NotFound as e:
            if not getattr(e, "kind", ""):
                # No subresource API answers (virtctl's words for the aggregator's 404).
                raise NotFound(f"the server could not find the requested resource (put "
                               f"virtualmachines.kubevirt.io {name})", kind="subresource") from None
            raise

    def start(self, name: str, namespace: str | None = None) -> dict:
        return self._vm_action("start", name, namespace)

    def stop(self, name: str, namespace: str | None = None, **options: Any) -> dict:
        return self._vm_action("stop", name, namespace, options or None)

    def restart(self, name: str, namespace: str | None = None, **options: Any) -> dict:
        return self._vm_action("restart", name, namespace, options or None)

    def expand_vm(self, name: str, namespace: str | None = None) -> dict:
        try:
            return self.store.request("GET", self._vm_path(name, namespace, "expand-spec"))
        except NotFound as e:
            if not getattr(e, "kind", ""):
                raise NotFound(f"the server could not find the requested resource (get "
                               f"virtualmachines.kubevirt.io {name})", kind="subresource") from None
            raise
