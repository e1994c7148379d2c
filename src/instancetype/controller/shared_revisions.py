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
in the transaction of the write that caused it; a cluster driver feeds its VM-deletion events to
`on_vm_deleted` and can run `sweep` at resync to collect what a missed event left. A start that
races a collection finds its revision gone at the next start and re-creates it from the object
when the object still has the same spec (the name is the spec's hash: see `restore`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from instancetype.engine import revisions, shared_revisions as shared
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
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
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
    """The shared revision holding `obj` in `namespace`, created when it does not exist yet."""
    built = _build(obj, kind, namespace)
    name = built["metadata"]["name"]
    for _ in range(3):   # get, create, and once more if a collection deleted it in between
        try:
            return _reuse(store, built, store.get("ControllerRevision", name, namespace))
        except NotFound:
            pass
        try:
            return store.create(built)
        except AlreadyExists:
            continue
    raise Error(f"{_CAPTURE_ERROR}: ControllerRevision {name} was deleted while it was being pinned",
                reason="FailedCreate")


def _reuse(store: Store, built: dict, existing: dict) -> dict:
    if not shared.same_stored_spec(built, existing):
        try:
            revisions.check_existing(built, existing)
        except Error as e:
            raise Error(f"{_CAPTURE_ERROR}: {e}", reason="FailedCreate") from None
    if revisions.needs_upgrade(existing):
        # An old payload holding the same spec under the shared name: upgraded in place, as a
        # pinned revision is (revisions.upgrade_revision), from the object being captured.
        meta = dict(existing.get("metadata") or {})
        meta["labels"] = {**(meta.get("labels") or {}), **built["metadata"]["labels"]}
        existing = store.update({**existing, "metadata": meta, "data": built["data"]})
    return existing


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
        if shared.is_shared(cr):
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
        try:
            # The uid precondition: a revision re-created meanwhile is another one, kept.
            store.delete("ControllerRevision", name, namespace, uid=(found[name].get("metadata") or {}).get("uid"))
        except (NotFound, Conflict):
            continue
        deleted.append(name)
    return deleted


def on_vm_deleted(store: Store, vm: Mapping) -> list[str]:
    """A VM is gone: release what it held (the VM-deletion event of a cluster driver lands here)."""
    meta = vm.get("metadata") if isinstance(vm.get("metadata"), Mapping) else {}
    return release(store, meta.get("namespace") or "default", shared.referenced_names(vm),
                   ignore_uid=meta.get("uid"))


def sweep(store: Store, namespace: str | None = None) -> list[tuple[str, str]]:
    """Delete every shared revision no VM pins (all namespaces when `namespace` is None): one read
    of the VMs per namespace. Returns the (namespace, name) deleted."""
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
            try:
                store.delete("ControllerRevision", meta["name"], ns, uid=meta.get("uid"))
            except (NotFound, Conflict):
                continue
            deleted.append((ns, meta["name"]))
    return deleted
