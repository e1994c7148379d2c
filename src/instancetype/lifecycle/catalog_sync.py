"""The common-instancetypes catalogue in the embedded store, kept as virt-operator keeps it.

The operator reconciles continuously; the embedded store does the same at clear points: on first
use, when this project's catalogue version changes, when the KubeVirt object changes, and on
`instancetype catalog sync`. Then, as the operator does (virt-operator's
`createOrUpdateInstancetypes`), missing objects are created, edited managed objects are restored
(labels, annotations and spec compared), managed objects no longer in the catalogue are deleted,
and with `spec.configuration.commonInstancetypesDeployment.enabled: false` every managed object
is removed.

The decision is store-independent so that `instancetype install` (deploy/) keeps the catalogue
on a Kubernetes API server with the same code: `desired_objects(kubevirt, registry=...)` and
`plan(want, get_live, managed_live) -> [Step]`; `sync(store)` carries the plan out in the
embedded store.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from instancetype import __version__
from instancetype.api import kinds
from instancetype.jsonutil import clone
from instancetype.store.base import NotFound, Store
from instancetype.store.kubevirt import configuration_of, kubevirt_object

# The install-strategy-registry annotation of the catalogue objects each deployment keeps
# (virt-operator writes its image registry there): the embedded store's, and a cluster's, where
# `instancetype install` deploys and the controller keeps them.
EMBEDDED_REGISTRY = "embedded"
CLUSTER_REGISTRY = "instancetype"

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


def config_of(kubevirt: dict | None) -> tuple[dict, int | None]:
    """The KubeVirt object's `spec.configuration` and `metadata.generation` ({} and None without one)."""
    return configuration_of(kubevirt) or {}, ((kubevirt or {}).get("metadata") or {}).get("generation")


def _config(store: Store) -> tuple[dict, int | None]:
    return config_of(kubevirt_object(store))


def enabled(config: dict) -> bool:
    value = (config.get("commonInstancetypesDeployment") or {}).get("enabled")
    return value is not False


def _identifier() -> str:
    from instancetype import catalog

    return f"common-instancetypes-{catalog.VERSION}"


def desired_objects(kubevirt: dict | None, *, registry: str) -> list[dict]:
    """The catalogue objects virt-operator keeps for this KubeVirt object (none when its
    configuration disables the deployment). `registry` names who deploys them (the
    install-strategy-registry annotation): "embedded" for the embedded store."""
    from instancetype import catalog

    config, generation = config_of(kubevirt)
    if not enabled(config):
        return []
    return catalog.cluster_objects(version=__version__, registry=registry, identifier=_identifier(),
                                   generation=generation)


def desired(store: Store, *, registry: str = EMBEDDED_REGISTRY) -> list[dict]:
    return desired_objects(kubevirt_object(store), registry=registry)


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


def differs(live: dict, want: dict) -> bool:
    """What virt-operator compares before it restores a managed object: labels, annotations, spec."""
    lm, wm = live.get("metadata") or {}, want.get("metadata") or {}
    return (lm.get("labels") or {}) != (wm.get("labels") or {}) or \
        (lm.get("annotations") or {}) != (wm.get("annotations") or {}) or live.get("spec") != want.get("spec")


# The kinds the catalogue has; managed objects of these kinds not in the catalogue are deleted.
CATALOGUE_KINDS = (kinds.CLUSTER_INSTANCETYPE, kinds.CLUSTER_PREFERENCE)


@dataclass(frozen=True)
class Step:
    """One object's decision: `action` is created, configured, unchanged or deleted; `want` the
    catalogue object (None for deleted), `live` what exists (None for created)."""
    action: str
    kind: str
    name: str
    want: dict | None
    live: dict | None

    @property
    def change(self) -> Change:
        return Change(self.action, self.kind, self.name)


def plan(want: list[dict], get_live: Callable[[str, str], dict | None],
         managed_live: Callable[[str], Iterable[dict]]) -> list[Step]:
    """virt-operator's createOrUpdateInstancetypes decision, for any store or client: every wanted
    object created when missing, restored (configured) when `differs`, else unchanged; then every
    managed live object of CATALOGUE_KINDS not wanted, deleted. `get_live(kind, name)` returns the
    live object or None; `managed_live(kind)` the live objects carrying MANAGED_SELECTOR."""
    steps: list[Step] = []
    names = {(o["kind"], o["metadata"]["name"]) for o in want}
    for obj in want:
        kind, name = obj["kind"], obj["metadata"]["name"]
        live = get_live(kind, name)
        action = "created" if live is None else "configured" if differs(live, obj) else "unchanged"
        steps.append(Step(action, kind, name, obj, live))
    for kind in CATALOGUE_KINDS:
        for live in list(managed_live(kind)):
            name = live["metadata"]["name"]
            if (kind, name) not in names:
                steps.append(Step("deleted", kind, name, None, live))
    return steps


def sync(store: Store, *, dry_run: bool = False, registry: str = EMBEDDED_REGISTRY,
         admit_here: bool = True) -> list[Change]:
    """Bring the managed catalogue objects in line with the catalogue; returns what changed.
    `registry`: who deploys them (the cluster's controller passes install's). `admit_here`:
    run admission in this process (the embedded store); False where the API server's webhooks
    admit every write (the command line on a cluster)."""
    from instancetype.catalog import MANAGED_SELECTOR
    from instancetype.lifecycle.admission import admit

    def admitted(tx: Store, obj: dict, old: dict | None = None) -> dict:
        if not admit_here:
            return clone(obj)
        return clone(admit(tx, obj, operation="UPDATE" if old else "CREATE", old=old).obj)

    changes: list[Change] = []
    with store.transaction() as tx:
        def get_live(kind: str, name: str) -> dict | None:
            try:
                return tx.get(kind, name)
            except NotFound:
                return None

        steps = plan(desired(tx, registry=registry), get_live, lambda kind: tx.list(kind, label_selector=MANAGED_SELECTOR))
        for step in steps:
            if step.action == "unchanged":
                continue
            changes.append(step.change)
            if dry_run:
                continue
            if step.action == "created":
                assert step.want is not None
                tx.create(admitted(tx, step.want))
            elif step.action == "configured":
                assert step.want is not None and step.live is not None     # a replacement has both
                replacement = admitted(tx, step.want, step.live)
                replacement["metadata"]["resourceVersion"] = step.live["metadata"].get("resourceVersion")
                tx.update(replacement)
            else:
                tx.delete(step.kind, step.name)
    return changes
