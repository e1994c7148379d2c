"""The common-instancetypes catalogue in the embedded store, kept as virt-operator keeps it.

The operator reconciles continuously; the embedded store does the same at clear points: on first
use, when this project's catalogue version changes, when the KubeVirt object changes, and on
`instancetype catalog sync`. Then, as the operator does (virt-operator's
`createOrUpdateInstancetypes`), missing objects are created, edited managed objects are restored
(labels, annotations and spec compared), managed objects no longer in the catalogue are deleted,
and with `spec.configuration.commonInstancetypesDeployment.enabled: false` every managed object
is removed.
"""
from __future__ import annotations

from dataclasses import dataclass

from instancetype import __version__
from instancetype.api import kinds
from instancetype.jsonutil import clone
from instancetype.store.base import NotFound, Store

MARKER_KIND = kinds.CLUSTER_INSTANCETYPE
MARKER_NAME = "u1.medium"


@dataclass(frozen=True)
class Change:
    action: str      # created | configured | deleted
    kind: str
    name: str

    def __str__(self) -> str:
        res = kinds.BY_KIND[self.kind]
        return f"{res.qualified_singular}/{self.name} {self.action}"


def _config(store: Store) -> tuple[dict, int | None]:
    for kv in store.list("KubeVirt"):
        return (kv.get("spec") or {}).get("configuration") or {}, (kv.get("metadata") or {}).get("generation")
    return {}, None


def enabled(config: dict) -> bool:
    value = (config.get("commonInstancetypesDeployment") or {}).get("enabled")
    return value is not False


def _identifier() -> str:
    from instancetype import catalog

    return f"common-instancetypes-{catalog.VERSION}"


def desired(store: Store) -> list[dict]:
    from instancetype import catalog

    config, generation = _config(store)
    if not enabled(config):
        return []
    return catalog.cluster_objects(version=__version__, registry="embedded", identifier=_identifier(),
                                   generation=generation)


def needs_sync(store: Store) -> bool:
    """Cheap check at open: is the catalogue missing, or from another version of this project?"""
    config, _ = _config(store)
    try:
        marker = store.get(MARKER_KIND, MARKER_NAME)
    except NotFound:
        return enabled(config)
    ann = (marker.get("metadata") or {}).get("annotations") or {}
    from instancetype.catalog import INSTALL_STRATEGY_IDENTIFIER, INSTALL_STRATEGY_VERSION

    managed = ann.get(INSTALL_STRATEGY_VERSION) is not None
    if not enabled(config):
        return managed
    return not managed or ann.get(INSTALL_STRATEGY_VERSION) != __version__ or \
        ann.get(INSTALL_STRATEGY_IDENTIFIER) != _identifier()


def _differs(live: dict, want: dict) -> bool:
    lm, wm = live.get("metadata") or {}, want.get("metadata") or {}
    return (lm.get("labels") or {}) != (wm.get("labels") or {}) or \
        (lm.get("annotations") or {}) != (wm.get("annotations") or {}) or live.get("spec") != want.get("spec")


def sync(store: Store, *, dry_run: bool = False) -> list[Change]:
    """Bring the managed catalogue objects in line with the catalogue; returns what changed."""
    from instancetype.catalog import MANAGED_SELECTOR
    from instancetype.webhook.admission import admit

    changes: list[Change] = []
    with store.transaction() as tx:
        want = desired(tx)
        names = {(o["kind"], o["metadata"]["name"]) for o in want}
        for obj in want:
            kind, name = obj["kind"], obj["metadata"]["name"]
            try:
                live = tx.get(kind, name)
            except NotFound:
                live = None
            if live is None:
                changes.append(Change("created", kind, name))
                if not dry_run:
                    tx.create(admit(tx, obj).obj)
            elif _differs(live, obj):
                changes.append(Change("configured", kind, name))
                if not dry_run:
                    replacement = clone(admit(tx, obj, operation="UPDATE", old=live).obj)
                    replacement["metadata"]["resourceVersion"] = live["metadata"].get("resourceVersion")
                    tx.update(replacement)
        for kind in (kinds.CLUSTER_INSTANCETYPE, kinds.CLUSTER_PREFERENCE):
            for live in list(tx.list(kind, label_selector=MANAGED_SELECTOR)):
                name = live["metadata"]["name"]
                if (kind, name) not in names:
                    changes.append(Change("deleted", kind, name))
                    if not dry_run:
                        tx.delete(kind, name)
    return changes
