"""`CachedStore`: reads from informers, writes to the API server.

The webhook's lookups (instancetypes, preferences, revisions, claims, DataVolumes, DataSources,
the KubeVirt configuration) and the controller's reads are served from memory: no request per
admission. Reads of a kind without an informer go to the API server (one request each).

Every read is a fresh copy (the informers keep objects encoded and decode on read), the
caller's to change.

The cache is what the API server said last: a read just after a write may not see that write
yet (as with client-go's listers); writers use resourceVersions (optimistic concurrency) and
retry on Conflict. The instancetype and preference kinds are read through on a miss, as
KubeVirt's finders read them (READ_THROUGH_KINDS).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from instancetype.api import kinds
from instancetype.engine.object_source import ObjectSource
from instancetype.store.base import (
    Event,
    NotFound,
    ResourceVersion,
    Store,
    fields_match,
    labels_match,
    not_found,
    parse_field_selector,
    parse_label_selector,
)

from ..kubevirt import kubevirt_config
from .client import resource_of
from .flavor import FLAVOR_INFORMER_KINDS, FLAVOR_OF, as_type, informer_key
from .informer import Informer, InformerSet
from .store import KubeStore

# The kinds a VM names: a miss in their informer is asked of the API server, as KubeVirt's finders
# do (pkg/instancetype/find, pkg/instancetype/preference/find: store.GetByKey, then the client), so
# an object created a moment before the VM that names it is found though the cache has not seen it.
# ControllerRevisions too (pkg/instancetype/find controllerRevisionFinder): a VM that virt-api's
# start pinned names revisions the controller's cache may not show yet.
READ_THROUGH_KINDS = frozenset({kinds.INSTANCETYPE, kinds.CLUSTER_INSTANCETYPE, kinds.PREFERENCE,
                                kinds.CLUSTER_PREFERENCE, "ControllerRevision"})
# What admission looks up: the four types, the revisions a VM is pinned to, what inference reads,
# and the KubeVirt object whose spec.configuration holds the cluster settings.
ADMISSION_KINDS = (
    kinds.INSTANCETYPE, kinds.CLUSTER_INSTANCETYPE, kinds.PREFERENCE, kinds.CLUSTER_PREFERENCE,
    "ControllerRevision", "PersistentVolumeClaim", "DataVolume", "DataSource", "KubeVirt",
    *FLAVOR_INFORMER_KINDS,
)


class CachedStore(Store):
    """A `Store` whose reads come from `informers` (an InformerSet on `store`'s cluster)."""

    # Writes go through the API server's admission: its webhooks (`serve`) mutate what is created.
    calls_admission_webhooks = True

    def __init__(self, store: KubeStore, informers: InformerSet):
        self.api = store
        self.informers = informers
        self.default_namespace = store.default_namespace

    @classmethod
    def start(cls, store: KubeStore, kinds_: tuple[str, ...] | list[str] = ADMISSION_KINDS, **kw: Any) -> CachedStore:
        """Informers of `kinds_` started on `store` (call `wait_for_sync` before trusting reads)."""
        return cls(store, InformerSet(store, kinds_, **kw).start())

    def informer(self, kind: str) -> Informer | None:
        return self.informers.informers.get(kind)

    @property
    def has_synced(self) -> bool:
        return self.informers.has_synced

    def sync_failures(self) -> list[str]:
        """Why informers that have not synced are failing (for a readiness answer)."""
        return self.informers.failures()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self.informers.wait_for_sync(timeout)

    def stop(self) -> None:
        self.informers.stop()

    def close(self) -> None:
        self.informers.stop()
        self.api.close()

    # --- reads: from memory --------------------------------------------------------------------

    def _ns(self, kind: str, namespace: str | None) -> str:
        res = resource_of(kind)
        return (namespace or self.default_namespace) if res.namespaced else ""

    def peek(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """The cached object (a fresh copy), or None. Only `namespace`'s object: a namespaced
        kind is never looked up in another namespace."""
        inf = self.informers.informers.get(kind)
        obj = None if inf is None else inf.get(name, self._ns(kind, namespace))
        if obj is None and (inf is None or kind in READ_THROUGH_KINDS):
            try:
                return self.api.get(kind, name, namespace)
            except NotFound:
                return None
        return obj

    def get_flavor(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """The flavor.kubevirt.io object standing for instancetype `kind`, as v1beta1, from the
        flavor informer (the API server when there is none), or None."""
        flavor_kind = FLAVOR_OF.get(kind)
        if flavor_kind is None:
            return None
        inf = self.informers.informers.get(informer_key(flavor_kind))
        obj = None if inf is None else inf.get(name, self._ns(kind, namespace))
        if obj is None:     # no informer, or a miss: the API server, as for READ_THROUGH_KINDS
            return self.api.get_flavor(kind, name, namespace)
        return as_type(obj)

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict:
        obj = self.peek(kind, name, namespace)
        if obj is None:
            raise not_found(resource_of(kind), name)
        return obj

    def list(self, kind: str, namespace: str | None = None, *, label_selector: Any = None,
             field_selector: Any = None) -> Iterator[dict]:
        inf = self.informers.informers.get(kind)
        if inf is None:
            return self.api.list(kind, namespace, label_selector=label_selector, field_selector=field_selector)
        labels = parse_label_selector(label_selector)
        fields = parse_field_selector(field_selector)
        ns = namespace if resource_of(kind).namespaced else None
        return (o for o in inf.iter(ns)
                if (not labels or labels_match((o.get("metadata") or {}).get("labels"), labels))
                and (not fields or fields_match(o, fields)))

    def count(self, kind: str, namespace: str | None = None, *, label_selector: Any = None,
              field_selector: Any = None) -> int:
        return sum(1 for _ in self.list(kind, namespace, label_selector=label_selector, field_selector=field_selector))

    def kubevirt_config(self) -> dict | None:
        """`spec.configuration` of the cluster's KubeVirt object (`kubevirt/kubevirt` as KubeVirt
        installs it; else the first one), from the cache; None when there is none (all defaults)."""
        return kubevirt_config(self)

    def objects(self) -> CachedObjects:
        """The engine's `ObjectSource` over the cache."""
        return CachedObjects(self)

    # --- writes: to the API server --------------------------------------------------------------

    def create(self, obj: Mapping, *, namespace: str | None = None) -> dict:
        return self.api.create(obj, namespace=namespace)

    def update(self, obj: Mapping, *, subresource: str | None = None) -> dict:
        return self.api.update(obj, subresource=subresource)

    def patch(self, kind: str, name: str, patch: Mapping, namespace: str | None = None, *,
              subresource: str | None = None) -> dict:
        return self.api.patch(kind, name, patch, namespace, subresource=subresource)

    def delete(self, kind: str, name: str, namespace: str | None = None, *, propagation: str = "Background",
               resource_version: str | None = None, uid: str | None = None,
               grace_period: int | None = None) -> dict:
        return self.api.delete(kind, name, namespace, propagation=propagation, resource_version=resource_version,
                               uid=uid, grace_period=grace_period)

    def changes(self, since: ResourceVersion = 0, *, kind: str | None = None,
                namespace: str | None = None, objects: bool = True) -> Iterator[Event]:
        return self.api.changes(since, kind=kind, namespace=namespace, objects=objects)

    def resource_version(self) -> str:
        return self.api.resource_version()

    def transaction(self) -> AbstractContextManager[Store]:
        """A no-op context (the API server has no multi-object transactions)."""
        return nullcontext(self)


class CachedObjects(ObjectSource):
    """An `ObjectSource` (engine.objects) over a CachedStore's informers."""

    __slots__ = ("cached",)

    def __init__(self, cached: CachedStore):
        self.cached = cached

    def lookup(self, kind: str, name: str, namespace: str) -> Mapping | None:
        try:
            obj = self.cached.peek(kind, name, namespace or None)
        except NotFound:            # a kind the cluster does not serve
            return None
        # A seed-002 flavor object of the same role (the embedded store upgraded it on apply).
        return obj if obj is not None else self.cached.get_flavor(kind, name, namespace or None)

