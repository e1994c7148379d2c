"""Pinning the exact instancetype and preference a VM runs with (the seeds' behaviour).

At a VM's first start each matcher without a `revisionName` gets a ControllerRevision
`<vm>-<object>-<uid>-<generation>` holding the complete v1beta1 object, owned by the VM; its
name goes into `spec.<side>.revisionName` (the seeds) and `status.<side>Ref` (KubeVirt v1.9).
A revision of that name with other content is an error, never replaced. A revision with an
older payload (v1alpha1's base64 SpecRevision, v1alpha1/v1alpha2 objects) is upgraded in place
under the same name, with the labels added.
"""
from __future__ import annotations

from instancetype.api import kinds
from instancetype.engine import revisions
from instancetype.errors import Error
from instancetype.store.base import AlreadyExists, NotFound, Store

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


def sync_status_refs(vm: dict) -> bool:
    """Make `status.<side>Ref` follow the spec, which is the one that counts: a `revisionName` in
    the matcher is mirrored (as KubeVirt's Store does, without reading the revision); clearing or
    changing it, or removing the matcher, drops the reference. Returns whether status changed."""
    spec = vm.get("spec") or {}
    status = vm.get("status")
    if not isinstance(status, dict):
        status = vm["status"] = {}
    changed = False
    for side, ref_key, *_ in SIDES:
        m = spec.get(side)
        ref = status.get(ref_key)
        if isinstance(m, dict) and m.get("name") and m.get("revisionName"):
            want = _ref(m, m["revisionName"])
            if ref != want:
                status[ref_key] = want
                changed = True
        elif ref:
            del status[ref_key]
            changed = True
    return changed


def capture(store: Store, vm: dict, pinned: dict | None = None) -> bool:
    """Pin both sides of `vm` (mutated: spec revisionName, status refs). Returns whether the spec
    changed. `pinned`, when given, receives the revisions by name (what the VMI is built from)."""
    spec_changed = False
    ns = (vm.get("metadata") or {}).get("namespace") or "default"
    for side, ref_key, table, matcher_type, reason in SIDES:
        m = (vm.get("spec") or {}).get(side)
        if not isinstance(m, dict) or not m.get("name"):
            continue
        if m.get("revisionName"):
            cr = _pinned(store, m["revisionName"], ns, vm, reason)
        else:
            cr = _capture_one(store, vm, m, table, matcher_type, reason)
            m["revisionName"] = cr["metadata"]["name"]
            spec_changed = True
        vm.setdefault("status", {})[ref_key] = _ref(m, cr["metadata"]["name"])
        if pinned is not None:
            pinned[cr["metadata"]["name"]] = cr
    return spec_changed


def _pinned(store: Store, name: str, ns: str, vm: dict, reason: str) -> dict:
    try:
        cr = store.get("ControllerRevision", name, ns)
    except NotFound as e:
        raise SyncError(str(e), reason=reason) from None
    if revisions.needs_upgrade(cr):
        try:
            cr = store.update(revisions.upgrade_revision(cr, vm))
        except Error as e:
            raise SyncError(f"error encountered while upgrading instancetype.kubevirt.io controllerRevisions: {e}",
                            reason="FailedCreate") from None
    return cr


def _capture_one(store: Store, vm: dict, m: dict, table: dict, matcher_type: str, reason: str) -> dict:
    kind = table.get(str(m.get("kind") or "").lower())
    if kind is None:
        raise SyncError(f"got unexpected kind in {matcher_type}: {m.get('kind')}", reason=reason)
    ns = (vm.get("metadata") or {}).get("namespace") or "default"
    try:
        obj = store.get(kind, m["name"], ns)
    except NotFound as e:
        raise SyncError(str(e), reason=reason) from None
    built = revisions.build_revision(vm, obj, kind=kind)
    try:
        return store.create(built)
    except AlreadyExists:
        existing = store.get("ControllerRevision", built["metadata"]["name"], ns)
        try:
            return revisions.check_existing(built, existing)
        except Error as e:
            raise SyncError(f"error encountered while storing instancetype.kubevirt.io controllerRevisions: {e}",
                            reason="FailedCreate") from None
