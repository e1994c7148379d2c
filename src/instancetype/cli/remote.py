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

import builtins
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from instancetype.lifecycle.catalog_sync import Change

from instancetype.api.kinds import FLAVOR_GROUP, FLAVOR_KINDS, SUBRESOURCE_GROUP_VERSION
from instancetype.store.base import NotFound, StoreReads, VMIActions


def _without_managed_fields(obj: dict) -> dict:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


class RemoteCluster(StoreReads, VMIActions):
    """The methods of `controller.Cluster` the command line uses, on a Kubernetes cluster, every
    request through `KubeStore` (lightkube: kubeconfig, auth, retries), opened on first use."""

    remote = True
    images = None

    def __init__(self, kubeconfig: str | None, context: str | None, config: Any = None):
        self._kubeconfig, self._context, self._config = kubeconfig, context, config
        self._store: Any = None

    @property
    def store(self) -> Any:  # type: ignore[override]  # StoreReads' attribute, here opened on first use
        """The `CommandLineKubeStore` (lightkube), opened on first use."""
        if self._store is None:
            from instancetype.gcpause import gc_paused

            with gc_paused(keep=True):       # the Kubernetes client's imports and its connection pool
                from .kube_store import CommandLineKubeStore

                self._store = CommandLineKubeStore(self._kubeconfig, self._context, config=self._config)
        return self._store

    @classmethod
    def open(cls, kubeconfig: str | None, context: str | None, config: Any = None) -> RemoteCluster:
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

    def __enter__(self) -> RemoteCluster:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- reads: as kubectl prints and edits objects, without metadata.managedFields -----------------
    # (kubectl's --show-managed-fields=false, printers.OmitManagedFieldsPrinter)

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict:
        return _without_managed_fields(self.store.get(kind, name, namespace))

    def list(self, kind: str, namespace: str | None = None, **selectors: Any) -> Iterator[dict]:
        return (_without_managed_fields(obj) for obj in self.store.list(kind, namespace, **selectors))

    # --- writes ----------------------------------------------------------------------------------

    def apply(self, obj: dict, *, namespace: str | None = None):
        """kubectl's client-side apply of the object at its own group and version (an old version
        or a flavor.kubevirt.io object is the API server's to serve or refuse, as for kubectl); the
        warnings are the API server's `Warning` headers, as kubectl prints them."""
        from instancetype.controller.apply import check_applied, original_of, three_way_patch, with_last_applied
        from instancetype.controller.cluster import ApplyResult
        from instancetype.store.base import check_create
        from instancetype.store.kube.client import resource_of

        check_applied(obj)
        kind, api_version = obj["kind"], obj.get("apiVersion")
        res = resource_of(kind, api_version)
        meta = obj.get("metadata") or {}
        ns = (meta.get("namespace") or namespace or self.store.default_namespace) if res.namespaced else None
        applied = with_last_applied(obj, ns)
        check_create(dict(applied, kind=FLAVOR_KINDS.get(kind, kind)) if res.group == FLAVOR_GROUP else applied,
                     namespace)
        name = meta.get("name") or ""
        try:
            current = self.store.get(kind, name, ns, api_version=api_version) if name else None
        except NotFound:
            current = None
        if current is None:
            created = self.store.create(applied, namespace=ns)
            return ApplyResult("created", created, list(self.store.last_warnings))
        patch = three_way_patch(original_of(current), applied, current)
        if not patch:
            return ApplyResult("unchanged", current, [])
        patched = self.store.patch(kind, name, patch, ns, api_version=api_version)
        return ApplyResult("configured", patched, list(self.store.last_warnings))

    def create(self, obj: dict, *, namespace: str | None = None):
        from instancetype.controller.cluster import ApplyResult

        return ApplyResult("created", self.store.create(obj, namespace=namespace))

    def update(self, obj: dict):
        from instancetype.controller.cluster import ApplyResult

        return ApplyResult("configured", self.store.update(obj))

    def delete(self, kind: str, name: str, namespace: str | None = None, *, propagation: str = "Background",
               grace_period: int | None = None) -> dict:
        return self.store.delete(kind, name, namespace, propagation=propagation, grace_period=grace_period)

    def sync_catalog(self, *, dry_run: bool = False) -> builtins.list[Change]:
        """virt-operator's catalogue deployment as `install` does it (its registry annotation),
        admitted by the API server's webhooks."""
        from instancetype.lifecycle.catalog_sync import CLUSTER_REGISTRY, sync

        return sync(self.store, dry_run=dry_run, registry=CLUSTER_REGISTRY, admit_here=False)

    # --- virtctl: KubeVirt's subresource API ----------------------------------------------------

    def _subresource(self, method: str, path: str, what: str, body: dict | None = None) -> dict:
        """One request to the subresource API; when no subresource API answers (the aggregator's
        404, no Status kind), virtctl's words: `the server could not find the requested resource
        (<what>)`."""
        try:
            return self.store.request(method, f"/apis/{SUBRESOURCE_GROUP_VERSION}/namespaces/{path}", body)
        except NotFound as e:
            if not e.kind:
                raise NotFound(f"the server could not find the requested resource ({what})",
                               kind="subresource") from None
            raise

    def _ns(self, namespace: str | None) -> str:
        return namespace or self.store.default_namespace

    def _vm_action(self, action: str, name: str, namespace: str | None, body: dict | None = None) -> dict:
        body = dict(body or {})
        if self.store.dry_run:
            body["dryRun"] = ["All"]       # virt-api reads the dry run from the options body (virtctl's way)
        return self._subresource("PUT", f"{self._ns(namespace)}/virtualmachines/{name}/{action}",
                                 f"put virtualmachines.kubevirt.io {name}", body)

    # The option bodies virtctl sends (v1.StartOptions, StopOptions, RestartOptions).
    def start(self, name: str, namespace: str | None = None, *, paused: bool = False) -> dict:
        return self._vm_action("start", name, namespace, {"paused": True} if paused else None)

    def stop(self, name: str, namespace: str | None = None, *, grace_period: int | None = None) -> dict:
        return self._vm_action("stop", name, namespace, None if grace_period is None else {"gracePeriod": grace_period})

    def restart(self, name: str, namespace: str | None = None, *, grace_period: int | None = None) -> dict:
        return self._vm_action("restart", name, namespace,
                               None if grace_period is None else {"gracePeriodSeconds": grace_period})

    def _vmi_action(self, action: str, name: str, namespace: str | None) -> dict:
        """PUT .../virtualmachineinstances/NAME/{pause,unpause,softreboot} with the options virtctl
        sends (PauseOptions/UnpauseOptions: the dry run; soft reboot has no body)."""
        body: dict | None = None
        if action != "softreboot":
            body = {"dryRun": ["All"]} if self.store.dry_run else {}
        return self._subresource("PUT", f"{self._ns(namespace)}/virtualmachineinstances/{name}/{action}",
                                 f"put virtualmachineinstances.kubevirt.io {name}", body)

    def add_volume(self, name: str, namespace: str | None = None, options: dict | None = None, *,
                   persist: bool = False) -> dict:
        return self._volume_action("addvolume", name, namespace, options, persist)

    def remove_volume(self, name: str, namespace: str | None = None, options: dict | None = None, *,
                      persist: bool = False) -> dict:
        return self._volume_action("removevolume", name, namespace, options, persist)

    def _volume_action(self, action: str, name: str, namespace: str | None, options: dict | None,
                       persist: bool) -> dict:
        """PUT .../virtualmachines/NAME/<action> (virtctl's `--persist`) or
        .../virtualmachineinstances/NAME/<action> with the options."""
        body = dict(options or {})
        if self.store.dry_run:
            body["dryRun"] = ["All"]
        plural = "virtualmachines" if persist else "virtualmachineinstances"
        return self._subresource("PUT", f"{self._ns(namespace)}/{plural}/{name}/{action}",
                                 f"put {plural}.kubevirt.io {name}", body)

    def expand_vm(self, name: str, namespace: str | None = None) -> dict:
        return self._subresource("GET", f"{self._ns(namespace)}/virtualmachines/{name}/expand-spec",
                                 f"get virtualmachines.kubevirt.io {name}")

    def expand_spec(self, vm: dict, namespace: str | None = None) -> dict:
        """`PUT .../namespaces/NS/expand-vm-spec` with the VM (virtctl `expand --file`)."""
        return self._subresource("PUT", f"{self._ns(namespace)}/expand-vm-spec", "put expand-vm-spec", vm)
