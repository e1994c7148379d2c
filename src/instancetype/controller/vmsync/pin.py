"""The instancetype step (KubeVirt's pkg/instancetype/controller/vm `Sync`): the matchers'
ControllerRevisions and the status refs that mirror them, or, under `referencePolicy`
expand/expandAll, the VM rewritten expanded.

The seeds' rule holds where they speak: a VM is pinned at its first start (`revisionName`
written into the matchers); controller/revisions.py stores the revisions.
"""
from __future__ import annotations

from instancetype.errors import Error
from instancetype.jsonutil import clone
from instancetype.store.base import Store
from instancetype.store.source import StoreObjects

from .. import revisions
from .state import VMSync, name_of, reference_policy


def sync(s: VMSync) -> dict | None:
    """Status refs follow the spec; under an expand policy the VM is expanded in place."""
    revisions.sync_status_refs(s.vm, s.store)
    policy = reference_policy(s.config)
    if policy in ("expand", "expandAll") and _has_matchers(s.vm):
        if policy == "expandAll" or not _has_pinned_refs(s.vm):
            return _expand_in_place(s)
    return None


def _has_matchers(vm: dict) -> bool:
    spec = vm.get("spec") or {}
    return bool(spec.get("instancetype") or spec.get("preference"))


def _has_pinned_refs(vm: dict) -> bool:
    status = vm.get("status") or {}
    return any((status.get(k) or {}).get("controllerRevisionRef") for k in ("instancetypeRef", "preferenceRef"))


def _expand_in_place(s: VMSync) -> dict:
    """handleExpand: the VM itself is rewritten expanded; no revisions kept."""
    import instancetype

    from . import status

    vm = s.vm
    old_refs = [((vm.get("status") or {}).get(k) or {}).get("controllerRevisionRef", {}).get("name")
                for k in ("instancetypeRef", "preferenceRef")]
    try:
        expanded = instancetype.expand(vm, objects=StoreObjects(s.store), config=s.config)
    except Error as e:
        s.failure = ("UnsupportedSyncError", f"unsupported error: error encountered while expanding into VirtualMachine: {e}")
        return status.write(s)
    expanded.pop("status", None)
    stored = s.store.update({**expanded, "status": vm.get("status") or {}})
    without_refs = clone(stored)
    for k in ("instancetypeRef", "preferenceRef"):
        (without_refs.get("status") or {}).pop(k, None)
    _, ns = name_of(vm)
    revisions.release_pins(s.store, ns, old_refs)
    policy = {**(s.config or {}), "instancetype": {"referencePolicy": "reference"}}
    return s.restart_from(stored, s.settings.with_config(policy), vm=without_refs)


def repin(s: VMSync) -> dict | None:
    """A running VM whose matcher lost its `revisionName` (a new instancetype or preference, the
    seeds' JSON patch) is pinned again at once, as v1.9's `Store` pins on every sync: the new
    revision stored and `status.<side>Ref` following in this reconcile. A stopped VM is pinned at
    its next start (the seeds)."""
    if s.vmi is None or reference_policy(s.config) != "reference":
        return None
    spec = s.vm.get("spec") or {}
    if any(isinstance(spec.get(side), dict) and spec[side].get("name") and not spec[side].get("revisionName")
           for side, *_ in revisions.SIDES):
        # The VM patched with its new `revisionName`s and its status refs set: the next steps
        # go on from it in this reconcile (v1.9 ends the reconcile here and goes on at the event
        # of its own write; a second pass here would read the VMI from a cache that may not show
        # this pass's writes yet).
        capture(s)
    return None


def capture(s: VMSync) -> dict[str, dict] | None:
    """Pin both sides (storeControllerRevisions) before a start: the new `revisionName`s are
    patched onto the VM (`s.stored`, `s.vm` follow). Returns the revisions by name (what the VMI
    is built from), or None with `s.failure` set."""
    pinned: dict[str, dict] = {}
    replaced: list[str] = []
    try:
        if reference_policy(s.config) == "reference" and revisions.capture(
                s.store, s.vm, s.settings.shared_revisions, pinned=pinned, replaced=replaced):
            status = s.vm.get("status") or {}
            s.stored = _patch_revision_names(s.store, s.vm, s.stored)
            s.vm = clone(s.stored)
            s.vm["status"] = status
    except revisions.SyncError as e:
        s.failure = (e.reason, str(e))
        return None
    if replaced:
        revisions.drop_replaced(s.store, s.vm, replaced)
    return pinned


def _patch_revision_names(store: Store, vm: dict, stored: dict) -> dict:
    """The matchers' new `revisionName`s, as KubeVirt's `storeControllerRevisions` patches them:
    only those fields, on the resourceVersion read (a VM changed meanwhile is a Conflict)."""
    name, ns = name_of(vm)
    spec = vm.get("spec") or {}
    patch: dict = {"metadata": {"resourceVersion": (stored.get("metadata") or {}).get("resourceVersion")}}
    for side, *_ in revisions.SIDES:
        m = spec.get(side)
        was = ((stored.get("spec") or {}).get(side) or {})
        if isinstance(m, dict) and m.get("revisionName") and m.get("revisionName") != was.get("revisionName"):
            patch.setdefault("spec", {})[side] = {"revisionName": m["revisionName"]}
    return store.patch("VirtualMachine", name, patch, ns)
