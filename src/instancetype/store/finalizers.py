"""What an API server does with `metadata.finalizers` and `metadata.deletionTimestamp` (the
generic registry's `Store.Delete` / `BeforeDelete` / `Update`, and the garbage collector's own
finalizers), as pure functions for the embedded store.

* A delete of an object that has finalizers only marks it: `deletionTimestamp` now,
  `deletionGracePeriodSeconds` 0 (none of the stored kinds has a graceful-delete strategy, so a
  request's grace period does not change this), and the object stays, with its finalizers, until
  writes have removed them all; the write that removes the last one removes the object.
* Once marked, an object keeps its deletionTimestamp and grace period (no write changes them),
  and no finalizer can be added to it.
* `propagationPolicy`: Orphan and Foreground are carried out by the garbage collector through the
  `orphan` and `foregroundDeletion` finalizers. The embedded store's collector runs in the
  deleting transaction: dependents are orphaned at once (no `orphan` finalizer is left to see),
  and deleted at once in the foreground; `foregroundDeletion` stays on the owner only while a
  dependent is still there (itself held by a finalizer), and goes with the last of them.
"""
from __future__ import annotations

from collections.abc import Mapping

from instancetype.api.gotext import quote

ORPHAN = "orphan"                           # metav1.FinalizerOrphanDependents
FOREGROUND = "foregroundDeletion"           # metav1.FinalizerDeleteDependents
PROPAGATIONS = ("Background", "Foreground", "Orphan")
DELETION_FIELDS = ("deletionTimestamp", "deletionGracePeriodSeconds")


def finalizers_of(obj: Mapping) -> list[str]:
    got = (obj.get("metadata") or {}).get("finalizers")
    return [f for f in got if isinstance(f, str)] if isinstance(got, list) else []


def marked(obj: Mapping) -> bool:
    """IsMarkedForDeletion: the object has a deletionTimestamp."""
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def mark(obj: dict, finalizers: list[str], stamp: str) -> dict:
    """The object (a copy) as a delete leaves it while `finalizers` hold it: marked now with a grace
    period of 0 (updateForGracefulDeletionAndFinalizers), or kept as marked before."""
    meta = dict(obj.get("metadata") or {})
    meta["finalizers"] = list(finalizers)
    if not meta.get("deletionTimestamp"):
        meta["deletionTimestamp"] = stamp
        meta["deletionGracePeriodSeconds"] = 0
    return {**obj, "metadata": meta}


def new_finalizers_error(stored: Mapping, written: Mapping) -> str | None:
    """ValidateObjectMetaUpdate's rule for an object being deleted: no new finalizers; the
    message names them as Go prints a []string."""
    if not marked(stored):
        return None
    before = set(finalizers_of(stored))
    added = [f for f in finalizers_of(written) if f not in before]
    if not added:
        return None
    listed = ", ".join(quote(f) for f in added)
    return f"no new finalizers can be added if the object is being deleted, found new finalizers []string{{{listed}}}"


def keep_deletion_fields(stored: Mapping, meta: dict) -> None:
    """BeforeUpdate: deletionTimestamp and deletionGracePeriodSeconds are the server's, kept as
    stored (set only by a delete, never by a write; cleared on create)."""
    smeta = stored.get("metadata") or {}
    for key in DELETION_FIELDS:
        if key in smeta:
            meta[key] = smeta[key]
        else:
            meta.pop(key, None)


def releasable(obj: Mapping) -> bool:
    """The write leaves a marked object without finalizers: it goes (ShouldDeleteDuringUpdate)."""
    return marked(obj) and not finalizers_of(obj)
