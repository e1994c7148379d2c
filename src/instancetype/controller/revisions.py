"""Pinning the exact instancetype and preference a VM runs with (the seeds' behaviour).

At a VM's first start each matcher without a `revisionName` gets a ControllerRevision
`<vm>-<object>-<uid>-<generation>` holding the complete v1beta1 object, owned by the VM; its
name goes into `spec.<side>.revisionName` (the seeds) and `status.<side>Ref` (KubeVirt v1.9).
A revision of that name with other content is an error, never replaced.

A VM pinned to a revision with an older payload (v1alpha1's base64 SpecRevision, v1alpha1/v1alpha2
objects, or no object-version label) is upgraded when it starts, as KubeVirt's
pkg/instancetype/upgrade does it: a revision's data is immutable on an API server, so a brand-new
revision holding the decoded object is created (engine revisions.upgraded_revision; for a shared
revision, the shared revision of the decoded object), the VM is re-pointed to it (its matchers'
`revisionName` patched on the resourceVersion read, which is the JSON patch's `test`, as KubeVirt
< v1.5 patched them; then its status refs, with the status), and the old revision is deleted
(a shared one released: deleted once no VM pins it); a failed deletion is only logged.

With the cluster's opt-in (shared_revisions.enabled) a new pin is instead a shared revision named
by its content, which VMs release rather than own (controller/shared_revisions.py); pins of
either form keep working whatever the switch says.
"""
from __future__ import annotations

import logging
from typing import Any

from instancetype.api import kinds
from instancetype.api.kinds import DEFAULT_NAMESPACE
from instancetype.engine import revisions
from instancetype.engine.shared_revisions import is_shared_name
from instancetype.errors import Error
from instancetype.store.base import AlreadyExists, NotFound, Store
from instancetype.store.source import get_type

from . import shared_revisions

log = logging.getLogger("instancetype.controller")
SIDES = (
    ("instancetype", "instancetypeRef", kinds.INSTANCETYPE_MATCHER_KINDS, "InstancetypeMatcher",
     "FailedFindInstancetype"),
    ("preference", "preferenceRef", kinds.PREFERENCE_MATCHER_KINDS, "PreferenceMatcher", "FailedFindPreference"),
)


class SyncError(Error):
    """A reconcile step failed; `.reason` is KubeVirt's condition reason."""

    reason: str = "FailedCreate"


def _ref(m: dict, revision: str) -> dict:
    ref = {"name": m["name"]}
    if m.get("kind"):
        ref["kind"] = m["kind"]
    ref["controllerRevisionRef"] = {"name": revision}
    return ref


def sync_status_refs(vm: dict, store: Store | None = None) -> bool:
    """Make `status.<side>Ref` follow the spec, which is the one that counts: a `revisionName` in
    the matcher is mirrored (as KubeVirt's Store does, without reading the revision); clearing or
    changing it, or removing the matcher, drops the reference. Returns whether status changed.
    Given the `store` (where `vm` is stored as it is now), a shared revision the VM let go of is
    released."""
    spec = vm.get("spec") or {}
    status = vm.get("status")
    if not isinstance(status, dict):
        status = vm["status"] = {}
    changed = False
    dropped: list[Any] = []      # names as stored (release skips what is not a shared name)
    for side, ref_key, *_ in SIDES:
        m = spec.get(side)
        ref = status.get(ref_key)
        old = ((ref or {}).get("controllerRevisionRef") or {}).get("name") if isinstance(ref, dict) else None
        if isinstance(m, dict) and m.get("name") and m.get("revisionName"):
            want = _ref(m, m["revisionName"])
            if ref != want:
                status[ref_key] = want
                changed = True
                if old != m["revisionName"]:
                    dropped.append(old)
        elif ref:
            del status[ref_key]
            changed = True
            dropped.append(old)
    if store is not None and any(is_shared_name(n) for n in dropped):
        shared_revisions.current().release(store, (vm.get("metadata") or {}).get("namespace") or DEFAULT_NAMESPACE, dropped)
    return changed


def release_pins(store: Store, namespace: str, names) -> None:
    """The VM no longer uses these revisions: its own are deleted, shared ones released."""
    for name in names:
        if not name:
            continue
        if is_shared_name(name):
            shared_revisions.current().release(store, namespace, [name])
            continue
        try:
            store.delete("ControllerRevision", name, namespace)
        except NotFound:
            pass


def capture(store: Store, vm: dict, shared: bool | None = None, pinned: dict | None = None,
            replaced: list | None = None) -> bool:
    """Pin both sides of `vm` (mutated: spec revisionName, status refs). Returns whether the spec
    changed. New pins are shared revisions when `shared` (None: as the cluster's KubeVirt says).
    `pinned`, when given, receives the revisions by name (what the VMI is built from); `replaced`
    receives the names of old-payload revisions the VM was re-pointed from (upgraded): the caller
    drops them (`drop_replaced`) once the VM's new `revisionName`s are stored."""
    spec_changed = False
    ns = (vm.get("metadata") or {}).get("namespace") or DEFAULT_NAMESPACE
    for side, ref_key, table, matcher_type, reason in SIDES:
        m = (vm.get("spec") or {}).get(side)
        if not isinstance(m, dict) or not m.get("name"):
            continue
        if m.get("revisionName"):
            cr = _pinned(store, m["revisionName"], ns, vm, reason, m, table)
            if cr["metadata"]["name"] != m["revisionName"]:      # upgraded: re-pointed
                if replaced is not None:
                    replaced.append(m["revisionName"])
                m["revisionName"] = cr["metadata"]["name"]
                spec_changed = True
        else:
            if shared is None:
                shared = shared_revisions.enabled(store)
            cr = _capture_one(store, vm, m, table, matcher_type, reason, shared)
            m["revisionName"] = cr["metadata"]["name"]
            spec_changed = True
        vm.setdefault("status", {})[ref_key] = _ref(m, cr["metadata"]["name"])
        if pinned is not None:
            pinned[cr["metadata"]["name"]] = cr
    return spec_changed


def _pinned(store: Store, name: str, ns: str, vm: dict, reason: str, m: dict, table: dict) -> dict:
    try:
        cr = store.get("ControllerRevision", name, ns)
    except NotFound as e:
        restored = _restore_shared(store, name, ns, m, table)
        if restored is None:
            raise SyncError(str(e), reason=reason) from None
        cr = restored
    if revisions.needs_upgrade(cr):
        try:
            cr = _upgrade(store, cr, vm, ns)
        except Error as e:
            raise SyncError(f"error encountered while upgrading instancetype.kubevirt.io controllerRevisions: {e}",
                            reason="FailedCreate") from None
    return cr


def _upgrade(store: Store, cr: dict, vm: dict, ns: str) -> dict:
    """The brand-new revision replacing the old-payload `cr` (created, or reused when a retry
    finds it created with the same content: the upgrade is idempotent)."""
    if is_shared_name((cr.get("metadata") or {}).get("name")):
        return shared_revisions.current().upgrade(store, cr, vm, ns)
    built = revisions.upgraded_revision(cr, vm)
    try:
        return store.create(built)
    except AlreadyExists:
        return revisions.check_existing(built, store.get("ControllerRevision", built["metadata"]["name"], ns))


def drop_replaced(store: Store, vm: dict, names) -> None:
    """After an upgrade re-pointed `vm`: its old revisions are deleted (shared ones released, `vm`
    not counted as a holder whatever a lagging cache shows); a failure is only logged, as
    KubeVirt's upgrade does."""
    meta = vm.get("metadata") or {}
    namespace = meta.get("namespace") or DEFAULT_NAMESPACE
    for name in names:
        try:
            if is_shared_name(name):
                shared_revisions.current().release(store, namespace, [name], ignore_uid=meta.get("uid"))
            else:
                release_pins(store, namespace, [name])
        except Error as e:
            log.info("ignoring failure to delete ControllerRevision %s/%s during stashed object upgrade: %s",
                     namespace, name, e)


def _restore_shared(store: Store, name: str, ns: str, m: dict, table: dict) -> dict | None:
    """A missing shared revision (collected while this VM was being pinned to it, on a store
    without transactions) is re-created when the object still holds the spec its name hashes."""
    kind = table.get(str(m.get("kind") or "").lower())
    if kind is None or not is_shared_name(name):
        return None
    try:
        return shared_revisions.current().restore(store, name, get_type(store, kind, m["name"], ns), kind, ns)
    except Error:
        return None


def _capture_one(store: Store, vm: dict, m: dict, table: dict, matcher_type: str, reason: str,
                 shared: bool = False) -> dict:
    kind = table.get(str(m.get("kind") or "").lower())
    if kind is None:
        raise SyncError(f"got unexpected kind in {matcher_type}: {m.get('kind')}", reason=reason)
    ns = (vm.get("metadata") or {}).get("namespace") or DEFAULT_NAMESPACE
    try:
        obj = get_type(store, kind, m["name"], ns)
    except NotFound as e:
        raise SyncError(str(e), reason=reason) from None
    if shared:
        try:
            return shared_revisions.current().pin(store, obj, kind, ns)
        except Error as e:
            raise SyncError(str(e), reason="FailedCreate") from None
    built = revisions.build_revision(vm, obj, kind=kind, handed_over=True)    # obj: a fresh read, dropped
    try:
        return store.create_handed_over(built)       # built here: its data is not changed by the store
    except AlreadyExists:
        existing = store.get("ControllerRevision", built["metadata"]["name"], ns)
        try:
            return revisions.check_existing(built, existing)
        except Error as e:
            raise SyncError(f"error encountered while storing instancetype.kubevirt.io controllerRevisions: {e}",
                            reason="FailedCreate") from None
