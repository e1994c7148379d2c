"""Shared revisions on a store: pin, release, collect (engine/shared_revisions.py names them).

Pinning: get-or-create by the content-addressed name. Two VMs starting at once on the same spec
both try the create; the loser's AlreadyExists is success when the stored revision holds the same
spec (`revisions.same_content`), and KubeVirt's "found existing ControllerRevision with
unexpected data" error when it does not.

Collection: a shared revision has no ownerReferences (one owner per VM would put thousands on one
object, and an instancetype owning it would take the VMs' pinned spec with it when deleted).
The reference count is derived from the VMs themselves: a shared revision is referenced while a
VM of its namespace has its name in `spec.<side>.revisionName`. When a VM lets go of one (the VM
is deleted, re-pinned, or expanded in place) `release` looks for another VM still naming it
(first the VM last seen holding it, else a read of the namespace's VMs stopping soon after one is
found), and deletes it when there is none. On the embedded store each release runs
in the transaction of the write that caused it. On a cluster (controller/runner.py) a VM's
deletion event queues a `sweep` of its namespace (one list of its shared revisions and one of its
VMs, from the informers' caches), and the controller's start sweeps every namespace, which
collects what VMs deleted while no controller ran pinned. There each write lands on its own and
reads lag behind writes, so a revision this controller pinned less than its
`collect_grace` ago is not collected (the VM about to name it may not show it yet) but swept
again later. A start that still races a collection (another process's pin) finds its revision
gone at the next start and re-creates it from the object when the object still has the same spec
(the name is the spec's hash: see `restore`).

Deletion is conditional on the uid read, so a revision re-created meanwhile is kept.

What a controller remembers (the revisions it built, pinned, created; the VM last seen holding
each) is a `SharedRevisions` it owns, bound around its reconciles: never process-wide.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from instancetype.api.kinds import DEFAULT_NAMESPACE
from instancetype.engine import revisions
from instancetype.engine import shared_revisions as shared
from instancetype.errors import Error
from instancetype.jsonutil import clone
from instancetype.store.base import AlreadyExists, Conflict, NotFound, Store
from instancetype.store.kubevirt import kubevirt_object

_CAPTURE_ERROR = "error encountered while storing instancetype.kubevirt.io controllerRevisions"
_BUILT_MAX = 256
_PINNED_MAX = 65536
_HOLDERS_MAX = 4096
_LOOKAHEAD = 256   # VMs read past the first holder found, to remember a holder less likely to go next


def enabled(store: Store) -> bool:
    """The cluster's opt-in, read from its KubeVirt object (off when there is none): for a caller
    whose settings did not carry it (`store.kubevirt.Settings`)."""
    kubevirt = kubevirt_object(store)
    return kubevirt is not None and shared.enabled(kubevirt)


class SharedRevisions:
    """What one controller remembers about shared revisions, and the operations that use it.

    Owned by the driver that runs the reconciles (`controller.Cluster`, one per embedded store;
    `runner.VMController`, one per cluster controller) and bound around them (`bound`), so two
    stores or two controllers in one process never see each other's pins.

    `collect_grace` (seconds): a driver without transactions (a cluster's controller: each write
    lands on its own, reads come from a cache) keeps a revision pinned less than that long ago,
    since the VM about to name it may not show it yet (the pin and the VM's patch are two writes,
    and the cache lags behind both); `defer_collect(namespace)` is then called so that the
    driver sweeps that namespace again later. The embedded store runs pin and release in one
    transaction: grace 0.
    """

    def __init__(self, collect_grace: float = 0.0, defer_collect: Callable[[str], None] | None = None):
        self.collect_grace = collect_grace
        self._defer_collect = defer_collect
        # (namespace, kind, name, uid, generation) of an object -> (its spec, its shared revision as
        # built, read only). The spec is compared on every use: an entry serves only an object
        # holding the same spec.
        self.built: dict[tuple, tuple[object, dict]] = {}
        # (namespace, revision) -> when this controller last pinned it (time.monotonic).
        self.pinned_at: dict[tuple[str, str], float] = {}
        # (namespace, revision) -> (when, the revision) this controller created, while its cache may
        # not show it yet (`collect_grace`); forgotten when this controller deletes it.
        self.created: dict[tuple[str, str], tuple[float, dict]] = {}
        self._create_lock = threading.Lock()
        # (namespace, revision) -> the name of a VM last seen pinning it. Only a hint, always checked
        # with a read of that VM, so a stale entry costs a read and nothing else: it spares the scan
        # of the namespace's VMs on most releases.
        self.holders: dict[tuple[str, str], str] = {}

    @contextmanager
    def bound(self) -> Iterator[SharedRevisions]:
        """This state is the one `current()` answers (in this thread) until the block ends."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)

    def _build(self, obj: Mapping, kind: str, namespace: str) -> dict:
        meta = got if isinstance(got := obj.get("metadata"), Mapping) else {}
        key = (namespace, kind, meta.get("name"), meta.get("uid"), meta.get("generation"))
        hit = self.built.get(key)
        if hit is not None and hit[0] == obj.get("spec"):
            return hit[1]
        built = shared.build_shared_revision(obj, namespace, kind=kind)
        if len(self.built) >= _BUILT_MAX:
            self.built.clear()
        self.built[key] = (clone(obj.get("spec")), built)
        return built

    def pin(self, store: Store, obj: Mapping, kind: str, namespace: str) -> dict:
        """The shared revision holding `obj` in `namespace`, created when it does not exist yet. An
        old payload found under its name is not reused: the pin goes to its replacement
        (engine upgraded_shared_name), which the upgrade of the VMs pinned to the old one also uses."""
        return self._get_or_create(store, self._build(obj, kind, namespace), namespace)

    def upgrade(self, store: Store, cr: Mapping, vm: Mapping, namespace: str) -> dict:
        """The shared revision replacing the old-payload shared revision `cr` for `vm` (get or create)."""
        return self._get_or_create(store, shared.upgraded_shared_revision(cr, vm, namespace), namespace, hops=0)

    def _get_or_create(self, store: Store, built: dict, namespace: str, hops: int = 1) -> dict:
        name = built["metadata"]["name"]
        for _ in range(3):   # get, create, and once more if a collection deleted it in between
            try:
                existing: dict | None = store.get("ControllerRevision", name, namespace)
            except NotFound:
                existing = self._created_recently(namespace, name)
            if existing is None and self.collect_grace:
                # Workers starting VMs on one new spec at once: one creates it, the others wait for
                # that and use it (a cache does not show it yet), rather than each trying a create.
                with self._create_lock:
                    existing = self._created_recently(namespace, name)
                    if existing is None:
                        self._pinned_now(namespace, name)
                        try:
                            created = store.create(built)
                        except AlreadyExists:
                            continue
                        self.created[(namespace, name)] = (time.monotonic(), created)
                        return created
            if existing is not None:
                if not shared.same_stored_spec(built, existing):
                    try:
                        revisions.check_existing(built, existing)
                    except Error as e:
                        raise Error(f"{_CAPTURE_ERROR}: {e}", reason="FailedCreate") from None
                if not revisions.needs_upgrade(existing):
                    self._pinned_now(namespace, name)
                    return existing
                if hops <= 0:
                    raise Error(f"{_CAPTURE_ERROR}: ControllerRevision {name} holds an old payload",
                                reason="FailedCreate")
                meta = {**built["metadata"], "name": shared.upgraded_shared_name(built, name)}
                return self._get_or_create(store, {**built, "metadata": meta}, namespace, hops - 1)
            self._pinned_now(namespace, name)
            try:
                return store.create(built)
            except AlreadyExists:
                continue
        raise Error(f"{_CAPTURE_ERROR}: ControllerRevision {name} was deleted while it was being pinned",
                    reason="FailedCreate")

    def _pinned_now(self, namespace: str, name: str) -> None:
        if len(self.pinned_at) >= _PINNED_MAX:
            self.pinned_at.clear()
        self.pinned_at[(namespace, name)] = time.monotonic()

    def _created_recently(self, namespace: str, name: str) -> dict | None:
        hit = self.created.get((namespace, name))
        if not self.collect_grace or hit is None:
            return None
        if time.monotonic() - hit[0] >= self.collect_grace:
            self.created.pop((namespace, name), None)
            return None
        return hit[1]

    def _too_recent(self, namespace: str, name: str) -> bool:
        at = self.pinned_at.get((namespace, name))
        return bool(self.collect_grace) and at is not None and time.monotonic() - at < self.collect_grace

    def restore(self, store: Store, name: str, obj: Mapping, kind: str, namespace: str) -> dict | None:
        """Re-create the missing shared revision `name` from `obj` when `obj` still has the spec the
        name was made from (None when it does not: the pinned spec is gone)."""
        if self._build(obj, kind, namespace)["metadata"]["name"] != name:
            return None
        return self.pin(store, obj, kind, namespace)

    def _holds(self, store: Store, namespace: str, vm_name: str, revision: str, ignore_uid: str | None) -> bool:
        try:
            vm = store.get("VirtualMachine", vm_name, namespace)
        except NotFound:
            return False
        return (vm.get("metadata") or {}).get("uid") != ignore_uid and revision in shared.pinned_names(vm)

    def _remember(self, namespace: str, revision: str, vm_name: str) -> None:
        if len(self.holders) >= _HOLDERS_MAX:
            self.holders.clear()
        self.holders[(namespace, revision)] = vm_name

    def release(self, store: Store, namespace: str, names: Iterable[str], *,
                ignore_uid: str | None = None) -> list[str]:
        """Delete each shared revision of `names` that no VM of `namespace` (other than `ignore_uid`)
        pins any more; returns the deleted names. A VM remembered pinning it settles it with one read;
        else one read of the namespace's VMs, stopping soon after every revision is found pinned.
        Names of another form (a VM's own revisions) are left alone: their owner collects them."""
        found: dict[str, dict] = {}
        for name in sorted({n for n in names if shared.is_shared_name(n)}):
            try:
                cr = store.get("ControllerRevision", name, namespace)
            except NotFound:
                continue
            if shared.is_shared(cr) or not _owned_by_a_vm(cr):   # (an old payload has no label)
                found[name] = cr
        unpinned = {n for n in found
                    if not (self.holders.get((namespace, n))
                            and self._holds(store, namespace, self.holders[(namespace, n)], n, ignore_uid))}
        if unpinned:
            lookahead = _LOOKAHEAD
            for vm in store.list("VirtualMachine", namespace):
                meta = vm.get("metadata") or {}
                if ignore_uid and meta.get("uid") == ignore_uid:
                    continue
                held = shared.pinned_names(vm) & found.keys()
                for name in held:
                    self._remember(namespace, name, meta.get("name") or "")
                unpinned -= held
                if not unpinned:
                    lookahead -= 1
                    if lookahead <= 0:
                        break
        deleted = []
        for name in sorted(unpinned):
            self.holders.pop((namespace, name), None)
            if self._too_recent(namespace, name):
                if self._defer_collect is not None:
                    self._defer_collect(namespace)   # swept later (controller.runner)
                continue
            try:
                # The uid precondition: a revision re-created meanwhile is another one, kept.
                store.delete("ControllerRevision", name, namespace, uid=(found[name].get("metadata") or {}).get("uid"))
            except (NotFound, Conflict):
                continue
            finally:
                self.created.pop((namespace, name), None)
            deleted.append(name)
        return deleted

    def on_vm_deleted(self, store: Store, vm: Mapping) -> list[str]:
        """A VM is gone: release what it held (the VM-deletion event of a cluster driver lands here)."""
        meta = got if isinstance(got := vm.get("metadata"), Mapping) else {}
        return self.release(store, meta.get("namespace") or DEFAULT_NAMESPACE, shared.referenced_names(vm),
                            ignore_uid=meta.get("uid"))

    def sweep(self, store: Store, namespace: str | None = None) -> list[tuple[str, str]]:
        """Delete every shared revision no VM pins (all namespaces when `namespace` is None): one read
        of the VMs per namespace. Returns the (namespace, name) deleted; a namespace with one kept
        only because it was pinned too recently (`collect_grace`) is passed to `defer_collect`."""
        candidates: dict[str, list[dict]] = {}
        for cr in store.list("ControllerRevision", namespace,
                             label_selector={shared.LABEL_SHARED_REVISION: "true"}):
            meta = cr.get("metadata") or {}
            candidates.setdefault(meta.get("namespace") or DEFAULT_NAMESPACE, []).append(cr)
        deleted = []
        for ns, crs in sorted(candidates.items()):
            pinned: set[str] = set()
            for vm in store.list("VirtualMachine", ns):
                pinned |= shared.pinned_names(vm)
            deferred = False
            for cr in crs:
                meta = cr.get("metadata") or {}
                if meta.get("name") in pinned:
                    continue
                if self._too_recent(ns, meta["name"]):
                    deferred = True
                    continue
                try:
                    store.delete("ControllerRevision", meta["name"], ns, uid=meta.get("uid"))
                except (NotFound, Conflict):
                    continue
                finally:
                    self.created.pop((ns, meta["name"]), None)
                deleted.append((ns, meta["name"]))
            if deferred and self._defer_collect is not None:
                self._defer_collect(ns)
        return deleted


def _owned_by_a_vm(cr: Mapping) -> bool:
    return any(isinstance(r, Mapping) and r.get("kind") == "VirtualMachine"
               for r in (cr.get("metadata") or {}).get("ownerReferences") or ())


# The state bound by the driver running the current reconcile. The reconcile reaches it through
# `controller.revisions` without the state travelling through every function of `controller.vm`.
_CURRENT: ContextVar[SharedRevisions | None] = ContextVar("shared_revisions", default=None)


def current() -> SharedRevisions:
    """The state the running driver bound; unbound (a one-off call), a fresh one that remembers
    nothing, which is correct on a store with transactions (grace 0) and only slower."""
    state = _CURRENT.get()
    return state if state is not None else SharedRevisions()
