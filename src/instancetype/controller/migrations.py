"""The VirtualMachineInstanceMigration that carries out a live update: created as KubeVirt's
workload updater creates it (pkg/virt-controller/watch/workload-updater), then carried out by
its migration controller (pkg/virt-controller/watch/migration) and virt-handler on the target
node, which the simulated node stands for: the migration succeeds at once.

* created: generateName `kubevirt-workload-update-`, the annotation
  `kubevirt.io/workloadUpdateMigration: ""`, `spec.vmiName`, `spec.priority: user-triggered` (a
  hotplug is in progress), and what KubeVirt's migration mutating webhook adds on create
  (migration-create-mutator.go): the `kubevirt.io/vmi-name` label and the
  `kubevirt.io/migrationJobFinalize` finalizer;
* completed: `status.phase` Succeeded, one `phaseTransitionTimestamps` entry per phase it went
  through, the VMI's final `status.migrationState` (whose `migrationUid` is the migration's uid)
  copied in, the finalizer removed (`updateStatus` of a final migration);
* kept: no owner, so a VMI's deletion leaves them; the migration controller keeps the five most
  recent finished migrations of a VMI and deletes older ones (garbageCollectFinalizedMigrations).
"""
from __future__ import annotations

import logging

from instancetype.store.base import NotFound, Store

log = logging.getLogger("instancetype.controller")

KIND = "VirtualMachineInstanceMigration"
GENERATE_NAME = "kubevirt-workload-update-"
WORKLOAD_UPDATE_ANNOTATION = "kubevirt.io/workloadUpdateMigration"
VMI_NAME_LABEL = "kubevirt.io/vmi-name"                    # MigrationSelectorLabel
FINALIZER = "kubevirt.io/migrationJobFinalize"             # VirtualMachineInstanceMigrationFinalizer
PRIORITY_USER_TRIGGERED = "user-triggered"
PHASES = ("Pending", "Scheduling", "Scheduled", "PreparingTarget", "TargetReady", "Running", "Succeeded")
KEEP_FINALIZED = 5                                         # defaultFinalizedMigrationGarbageCollectionBuffer


def create_for_workload_update(store: Store, vmi: dict) -> dict:
    """The workload updater's migration of `vmi`, as stored after the migration mutator."""
    meta = vmi.get("metadata") or {}
    name, ns = meta.get("name") or "", meta.get("namespace") or "default"
    return store.create({
        "apiVersion": "kubevirt.io/v1", "kind": KIND,
        "metadata": {"generateName": GENERATE_NAME, "namespace": ns,
                     "annotations": {WORKLOAD_UPDATE_ANNOTATION: ""}, "labels": {VMI_NAME_LABEL: name},
                     "finalizers": [FINALIZER]},
        "spec": {"vmiName": name, "priority": PRIORITY_USER_TRIGGERED}})


def migration_state(migration: dict, node_name: str, stamp: str) -> dict:
    """The VMI's `status.migrationState` once the simulated node's migration (from `node_name`
    to itself) completed."""
    return {"migrationUid": (migration.get("metadata") or {}).get("uid"), "sourceNode": node_name,
            "targetNode": node_name, "startTimestamp": stamp, "endTimestamp": stamp,
            "completed": True, "mode": "PreCopy"}


def complete(store: Store, migration: dict, state: dict, stamp: str) -> dict:
    """The migration Succeeded with the VMI's migration state, its finalizer removed; the VMI's
    older finished migrations collected. Returns the migration as stored."""
    status = {"phase": "Succeeded", "migrationState": state,
              "phaseTransitionTimestamps": [{"phase": p, "phaseTransitionTimestamp": stamp} for p in PHASES]}
    written = store.update({**migration, "status": status}, subresource="status")
    meta = written.get("metadata") or {}
    written = store.update({**written, "metadata": {
        **meta, "finalizers": [f for f in meta.get("finalizers") or () if f != FINALIZER]}})
    _collect(store, meta.get("namespace") or "default", (migration.get("spec") or {}).get("vmiName") or "")
    return written


def _final(migration: dict) -> bool:
    return (migration.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _age(migration: dict) -> tuple[str, int]:
    """vmimCollection's order (creation time), the store's order within one second."""
    meta = migration.get("metadata") or {}
    rv = str(meta.get("resourceVersion") or "")
    return meta.get("creationTimestamp") or "", int(rv) if rv.isdigit() else 0


def _collect(store: Store, namespace: str, vmi_name: str) -> None:
    """garbageCollectFinalizedMigrations: the finished migrations of the VMI beyond the newest five
    deleted, oldest first."""
    finished = [m for m in store.list(KIND, namespace, label_selector=f"{VMI_NAME_LABEL}={vmi_name}")
                if _final(m) and not (m.get("metadata") or {}).get("deletionTimestamp")]
    finished.sort(key=_age)
    for old in finished[:max(0, len(finished) - KEEP_FINALIZED)]:
        try:
            store.delete(KIND, old["metadata"]["name"], namespace)
        except NotFound:
            pass
