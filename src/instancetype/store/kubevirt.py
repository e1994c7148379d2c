"""The cluster's KubeVirt object and its `spec.configuration`, read one way by everyone: the
embedded Cluster, the cluster controller and its catalogue sync, virt-api's subresources and the
admission webhooks.

KubeVirt's rule (pkg/virt-config `ClusterConfig.GetConfigFromKubeVirtCR`): virt-config's informer
watches KubeVirt objects in the install namespace only; of those not being deleted, it takes one
(the last its cache lists that has a `status.phase`) and reads it by `<namespace>/<name>`. A
KubeVirt installation has exactly one, `kubevirt/kubevirt`, and virt-operator refuses a second.

Ours, the same on every store:
* only objects in the install namespace `kubevirt` count (one in another namespace configures
  nothing, as for virt-config);
* one being deleted (`metadata.deletionTimestamp`) counts for nothing;
* `kubevirt/kubevirt` when it counts, else the first other one by name (a cache's list order is
  no order at all, so "the last one listed" is replaced by a stable choice);
* a status phase is not required: no virt-operator runs here to set one (the embedded store sets
  `Deployed` itself; `instancetype install` creates the object without a status).
None: no KubeVirt object, or a cluster that does not serve the kind: every setting at its default.

Before this module the five readers disagreed: two took `kubevirt/kubevirt` first, three the
first KubeVirt listed in any namespace, and none skipped one being deleted.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple, Protocol

from instancetype.api.kinds import KUBEVIRT_NAME, KUBEVIRT_NAMESPACE
from instancetype.errors import NotFoundError

KIND = "KubeVirt"


class Lister(Protocol):
    """What reading the configuration needs of a store (every `Store` is one; `base` uses this
    module, so it is not imported here)."""

    def list(self, kind: str, namespace: str | None = None) -> Iterable[dict]: ...


def choose_kubevirt(objects: Iterable[Mapping]) -> Mapping | None:
    """The KubeVirt object that configures the cluster among `objects` (see the module's rule)."""
    chosen: Mapping | None = None
    for kv in objects:
        meta = kv.get("metadata") or {}
        if meta.get("namespace") != KUBEVIRT_NAMESPACE or meta.get("deletionTimestamp"):
            continue
        name = meta.get("name") or ""
        if name == KUBEVIRT_NAME:
            return kv
        if chosen is None or name < ((chosen.get("metadata") or {}).get("name") or ""):
            chosen = kv
    return chosen


def kubevirt_object(store: Lister) -> dict | None:
    """The KubeVirt object that configures the cluster, or None."""
    try:
        return choose_kubevirt(store.list(KIND, KUBEVIRT_NAMESPACE))   # type: ignore[return-value]
    except NotFoundError:       # the cluster serves no KubeVirt kind
        return None


def configuration_of(kubevirt: Mapping | None) -> dict | None:
    """`spec.configuration` of a KubeVirt object ({} when it has none); None without an object."""
    if kubevirt is None:
        return None
    return (kubevirt.get("spec") or {}).get("configuration") or {}


def kubevirt_config(store: Lister) -> dict | None:
    """`spec.configuration` of the KubeVirt object that configures the cluster (None: all defaults)."""
    return configuration_of(kubevirt_object(store))


class Settings(NamedTuple):
    """The cluster's settings one reconcile or virt-api verb works under: the KubeVirt object's
    `spec.configuration` and its shared-revisions opt-in (the `instancetype.kubevirt.io/
    shared-revisions` annotation), read together, once, by whoever drives the work (the embedded
    `Cluster` per write, the cluster controller per reconcile, virt-api per request) and passed
    down its calls as one value, as virt-controller's VM controller reads its `clusterConfig`.
    Here, below every driver, so that each passes the same value. (A NamedTuple: made at every
    write, and a frozen dataclass costs each command line its generated code at import.)"""

    # `spec.configuration` of the KubeVirt object ({} when it has none; None: there is no object).
    config: dict | None = None
    # The shared-revisions opt-in; None: not read with `config` (read where a pin needs it).
    shared_revisions: bool | None = None

    @classmethod
    def of(cls, kubevirt: Mapping | None) -> Settings:
        """The settings of this KubeVirt object (None: there is none, all defaults)."""
        from instancetype.engine import shared_revisions  # (the engine only when a write needs it)

        return cls(configuration_of(kubevirt), kubevirt is not None and shared_revisions.enabled(kubevirt))

    @classmethod
    def read(cls, store: Lister) -> Settings:
        """The settings of the store's KubeVirt object: one read for both."""
        return cls.of(kubevirt_object(store))

    def with_config(self, config: dict | None) -> Settings:
        """The same opt-in under another configuration (a reconcile run under a changed policy)."""
        return Settings(config, self.shared_revisions)
