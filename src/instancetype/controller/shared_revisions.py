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
reads lag behind writes, so a revision this process pinned less than the store's
`collect_grace` ago is not collected (the VM about to name it may not show it yet) but swept
again later. A start that still races a collection (another process's pin) finds its revision
gone at the next start and re-creates it from the object when the object still has the same spec
(the name is the spec's hash: see `restore`).

Deletion is conditional on the uid read, so a revision re-created meanwhile is kept.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping

from instancetype.engine import revisions
from instancetype.engine import shared_revisions as shared
from instancetype.errors import Error
from instancetype.jsonutil import clone
from instancetype.store.base import AlreadyExists, Conflict, NotFound, Store

_CAPTURE_ERROR = "error encountered while storing instancetype.kubevirt.io controllerRevisions"


def enabled(store: Store) -> bool:
    """The cluster's opt-in, read from its KubeVirt object (off when there is none)."""
    for kv in store.list("KubeVirt"):
        return shared.enabled(kv)
    return False


# (namespace, kind, name, uid, generation) of an object -> (its spec, its shared revision as built, read
# only). The spec is compared on every use: an entry serves only an object holding the same spec.
_BUILT: dict[tuple, tuple[object, dict]] = {}
_BUILT_MAX = 256


def _build(obj: Mapping, kind: str, namespace: str) -> dict:
    meta = got if isinstance(got := obj.get("metadata"), Mapping) else {}
    key = (namespace, kind, meta.get("name"), meta.get("uid"), meta.get("generation"))
    hit = _BUILT.get(key)
    if hit is not None and hit[0] == obj.get("spec"):
        return hit[1]
    built = shared.build_shared_revision(obj, namespace, kind=kind)
    if len(_BUILT) >= _BUILT_MAX:
        _BUILT.clear()
    _BUILT[key] = (clone(obj.get("spec")), built)
    return built


def pin(store: Store, obj: Mapping, kind: str, namespace: str) -> dict:
    """The shared revision holding `obj` in `namespace`, created when it does not exist yet. An
    old payload found under its name is not reused: the pin goes to its replacement
    (engine upgraded_shared_name), which the upgrade of the VMs pinned to the old one also uses."""
    return _get_or_create(store, _build(obj, kind, namespace), namespace)


def upgrade(store: Store, cr: Mapping, vm: Mapping, namespace: str) -> dict:
    """The shared revision replacing the old-payload shared revision `cr` for `vm` (get or create)."""
    return _get_or_create(store, shared.upgraded_shared_revision(cr, vm, namespace), namespace, hops=0)


def _get_or_create(store: Store, built: dict, namespace: str, hops: int = 1) -> dict:
    name = built["metadata"]["name"]
    for _ in range(3):   # get, create, and once more if a collection deleted it in between
        try:
            existing: dict | None = store.get("ControllerRevision", name, namespace)
        except NotFound:
            existing = _created_recently(store, namespace, name)
        if existing is None and _grace(store):
            # Workers starting VMs on one new spec at once: one creates it, the others wait for
            # that and use it (a cache does not show it yet), rather than each trying a create.
            with _CREATE_LOCK:
                existing = _created_recently(store, namespace, name)
                if existing is None:
                    _pinned_now(namespace, name)
                    try:
                        created = store.create(built)
                    except AlreadyExists:
                        continue
                    _CREATED[(namespace, name)] = (time.monotonic(), created)
                    return created
        if existing is not None:
            if not shared.same_stored_spec(built, existing):
                try:
                    revisions.check_existing(built, existing)
                except Error as e:
                    raise Error(f"{_CAPTURE_ERROR}: {e}", reason="FailedCreate") from None
            if not revisions.needs_upgrade(existing):
                _pinned_now(namespace, name)
                return existing
            if hops <= 0:
                raise Error(f"{_CAPTURE_ERROR}: ControllerRevision {name} holds an old payload", reason="FailedCreate")
            meta = {**built["metadata"], "name": shared.upgraded_shared_name(built, name)}
            return _get_or_create(store, {**built, "metadata": meta}, namespace, hops - 1)
        _pinned_now(namespace, name)
        try:
            return store.create(built)
        except AlreadyExists:
            continue
    raise Error(f"{_CAPTURE_ERROR}: ControllerRevision {name} was deleted while it was being pinned",
                reason="FailedCreate")


# (namespace, revision) -> when this process last pinned it (time.monotonic). A driver without
# transactions (a cluster's controller: each write lands on its own, reads come from a cache)
# gives its stores a `collect_grace`: a revision pinned less than that long ago is not collected,
# since the VM about to name it may not show it yet (the pin and the VM's patch are two writes,
# and the cache lags behind both). The embedded store runs pin and release in one transaction.
_PINNED_AT: dict[tuple[str, str], float] = {}
_PINNED_MAX = 65536


def _pinned_now(namespace: str, name: str) -> None:
    if len(_PINNED_AT) >= _PINNED_MAX:
        _PINNED_AT.clear()
    _PINNED_AT[(namespace, name)] = time.monotonic()


# (namespace, revision) -> (when, the revision) this process created, for a driver whose reads lag
# behind its writes (`collect_grace`): used while the cache may not show it yet, forgotten when
# this process deletes it.
_CREATED: dict[tuple[str, str], tuple[float, dict]] = {}
_CREATE_LOCK = threading.Lock()


def _grace(store: Store) -> float:
    """The store's `collect_grace` (seconds; 0 on a store that runs pin and release in one transaction)."""
    return getattr(store, "collect_grace", 0.0) or 0.0


def _created_recently(store: Store, namespace: str, name: str) -> dict | None:
    grace = _grace(store)
    hit = _CREATED.get((namespace, name))
    if not grace or hit is None:
        return None
    if time.monotonic() - hit[0] >= grace:
        _CREATED.pop((namespace, name), None)
        return None
    return hit[1]


def _too_recent(store: Store, namespace: str, name: str) -> bool:
    grace = _grace(store)
    at = _PINNED_AT.get((namespace, name))
    return bool(grace) and at is not None and time.monotonic() - at < grace


def restore(store: Store, name: str, obj: Mapping, kind: str, namespace: str) -> dict | None:
    """Re-create the missing shared revision `name` from `obj` when `obj` still has the spec the
    name was made from (None when it does not: the pinned spec is gone)."""
    if _build(obj, kind, namespace)["metadata"]["name"] != name:
        return None
    return pin(store, obj, kind, namespace)


# (namespace, revision) -> the name of a VM last seen pinning it. Only a hint, always checked with
# a read of that VM, so a stale or foreign entry costs a read and nothing else: it spares the scan
# of the namespace's VMs on most releases.
_HOLDERS: dict[tuple[str, str], str] = {}
_HOLDERS_MAX = 4096
_LOOKAHEAD = 256   # VMs read past the first holder found, to remember a holder less likely to go next


def _holds(store: Store, namespace: str, vm_name: str, revision: str, ignore_uid: str | None) -> bool:
    try:
        vm = store.get("VirtualMachine", vm_name, namespace)
    except NotFound:
        return False
    return (vm.get("metadata") or {}).get("uid") != ignore_uid and revision in shared.pinned_names(vm)


def _remember(namespace: str, revision: str, vm_name: str) -> None:
    if len(_HOLDERS) >= _HOLDERS_MAX:
        _HOLDERS.clear()
    _HOLDERS[(namespace, revision)] = vm_name


def release(store: Store, namespace: str, names: Iterable[str], *, ignore_uid: str | None = None) -> list[str]:
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
                if not (_HOLDERS.get((namespace, n)) and _holds(store, namespace, _HOLDERS[(namespace, n)], n,
                                                                ignore_uid))}
    if unpinned:
        lookahead = _LOOKAHEAD
        for vm in store.list("VirtualMachine", namespace):
            meta = vm.get("metadata") or {}
            if ignore_uid and meta.get("uid") == ignore_uid:
                continue
            held = shared.pinned_names(vm) & found.keys()
            for name in held:
                _remember(namespace, name, meta.get("name") or "")
            unpinned -= held
            if not unpinned:
                lookahead -= 1
                if lookahead <= 0:
                    break
    deleted = []
    for name in sorted(unpinned):
        _HOLDERS.pop((namespace, name), None)
        if _too_recent(store, namespace, name):
            getattr(store, "defer_collect", lambda ns: None)(namespace)   # swept later (controller.runner)
            continue
        try:
            # The uid precondition: a revision re-created meanwhile is another one, kept.
            store.delete("ControllerRevision", name, namespace, uid=(found[name].get("metadata") or {}).get("uid"))
        except (NotFound, Conflict):
            continue
        finally:
            _CREATED.pop((namespace, name), None)
        deleted.append(name)
    return deleted


def _owned_by_a_vm(cr: Mapping) -> bool:
    return any(isinstance(r, Mapping) and r.get("kind") == "VirtualMachine"
               for r in (cr.get("metadata") or {}).get("ownerReferences") or ())


def on_vm_deleted(store: Store, vm: Mapping) -> list[str]:
    """A VM is gone: release what it held (the VM-deletion event of a cluster driver lands here)."""
    meta = got if isinstance(got := vm.get("metadata"), Mapping) else {}
    return release(store, meta.get("namespace") or "default", shared.referenced_names(vm),
                   ignore_uid=meta.get("uid"))


def sweep(store: Store, namespace: str | None = None, deferred: list | None = None) -> list[tuple[str, str]]:
    """Delete every shared revision no VM pins (all namespaces when `namespace` is None): one read
    of the VMs per namespace. Returns the (namespace, name) deleted; those kept only because they
    were pinned too recently (`collect_grace`) are appended to `deferred`."""
    candidates: dict[str, list[dict]] = {}
    for cr in store.list("ControllerRevision", namespace, label_selector={shared.LABEL_SHARED_REVISION: "true"}):
        meta = cr.get("metadata") or {}
        candidates.setdefault(meta.get("namespace") or "default", []).append(cr)
    deleted = []
    for ns, crs in sorted(candidates.items()):
        pinned: set[str] = set()
        for vm in store.list("VirtualMachine", ns):
            pinned |= shared.pinned_names(vm)
        for cr in crs:
            meta = cr.get("metadata") or {}
            if meta.get("name") in pinned:
                continue
            if _too_recent(store, ns, meta["name"]):
                if deferred is not None:
                    deferred.append((ns, meta["name"]))
                continue
            try:
                store.delete("ControllerRevision", meta["name"], ns, uid=meta.get("uid"))
            except (NotFound, Conflict):
                continue
            finally:
                _CREATED.pop((ns, meta["name"]), None)
            deleted.append((ns, meta["name"]))
    return deleted
