"""What carries a live update out once the VM controller patched the running VMI: KubeVirt's VMI
controller (the HotVCPUChange / HotMemoryChange conditions, pkg/virt-controller/watch/vmi), its
workload updater (a migration of the VMI, when the KubeVirt object's
`spec.workloadUpdateStrategy.workloadUpdateMethods` holds `LiveMigrate`,
pkg/virt-controller/watch/workload-updater) and virt-handler on the target node, which the
simulated node stands for: the VirtualMachineInstanceMigration is created and succeeds at once
(controller/migrations.py), the VMI's `status.migrationState` (naming that migration),
`currentCPUTopology` and `memory` (guestRequested, guestCurrent; the guestAtBoot stays) report
the new size, and the conditions go. Only a VMI whose LiveMigratable condition is True
(controller/migratable.py) is migrated; without `LiveMigrate`, or for a VMI that cannot
migrate, the conditions stay True, as on KubeVirt, until the VMI is restarted.
"""
from __future__ import annotations

from instancetype.store.base import Store, now

from . import migrations, node
from .migratable import migratable

VCPU_CHANGE, MEMORY_CHANGE = "HotVCPUChange", "HotMemoryChange"   # VirtualMachineInstance{VCPU,Memory}Change
LIVE_MIGRATE = "LiveMigrate"


def migrating(vmi: dict) -> bool:
    """migrations.IsMigrating: a migration started and not yet completed or failed."""
    state = (vmi.get("status") or {}).get("migrationState") or {}
    return bool(state.get("startTimestamp")) and not state.get("completed") and not state.get("failed")


def touched(vmi: dict) -> bool:
    """The VMI may no longer run the spec it started from: a live update patched it (its
    hotplug conditions, or the migration that carried one out)."""
    status = vmi.get("status") or {}
    return bool(status.get("migrationState")) or any(
        isinstance(c, dict) and c.get("type") in (VCPU_CHANGE, MEMORY_CHANGE) for c in status.get("conditions") or ())


def _u32(v) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _vcpus(cpu: dict) -> int:
    return (_u32(cpu.get("sockets")) or 1) * (_u32(cpu.get("cores")) or 1) * (_u32(cpu.get("threads")) or 1)


def _needs_cpu(vmi: dict) -> bool:
    """requireCPUHotplug: the spec's vCPUs differ from the current topology's."""
    cpu = ((vmi.get("spec") or {}).get("domain") or {}).get("cpu")
    current = (vmi.get("status") or {}).get("currentCPUTopology")
    return isinstance(cpu, dict) and isinstance(current, dict) and _vcpus(cpu) != _vcpus(current)


def _needs_memory(vmi: dict) -> bool:
    """requireMemoryHotplug: a hotpluggable guest memory differing from the one requested."""
    from instancetype.api.quantity import Quantity

    memory = ((vmi.get("spec") or {}).get("domain") or {}).get("memory") or {}
    status = (vmi.get("status") or {}).get("memory") or {}
    if memory.get("guest") is None or memory.get("maxGuest") is None or not status.get("guestRequested"):
        return False
    return Quantity.parse(memory["guest"]).value() != Quantity.parse(status["guestRequested"]).value()


def _live_migrate(store: Store) -> bool:
    for kv in store.list("KubeVirt"):
        methods = ((kv.get("spec") or {}).get("workloadUpdateStrategy") or {}).get("workloadUpdateMethods") or ()
        return LIVE_MIGRATE in methods
    return False


def progress(store: Store, vmi: dict, config: dict | None) -> dict:
    """The VMI after its controller, the workload updater and the node acted on it (written
    through the status subresource when anything changed); returns the VMI as stored."""
    if node.terminating(vmi):
        return vmi
    status = dict(vmi.get("status") or {})
    conditions = [c for c in status.get("conditions") or () if isinstance(c, dict)]
    kinds = [k for k, needed in ((VCPU_CHANGE, _needs_cpu(vmi)), (MEMORY_CHANGE, _needs_memory(vmi))) if needed]
    for kind in kinds:      # syncHotplugCondition: added once, no reason
        if not any(c.get("type") == kind for c in conditions):
            conditions.append({"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": None})
    migration = None
    if kinds and _live_migrate(store) and migratable(vmi) and not migrating(vmi):
        migration = migrations.create_for_workload_update(store, vmi)
        _migrate(status, vmi, migration)
        conditions = [c for c in conditions if c.get("type") not in (VCPU_CHANGE, MEMORY_CHANGE)]
    status["conditions"] = conditions
    if status == (vmi.get("status") or {}):
        return vmi
    written = put_status(store, {**vmi, "status": status})
    if migration is not None:
        migrations.complete(store, migration, status["migrationState"], status["migrationState"]["endTimestamp"])
    return written


def put_status(store: Store, vmi: dict) -> dict:
    """The VMI's status written as its kind is served: KubeVirt's VMI CRD has no status
    subresource (the main resource carries it); a store that serves one keeps the stored status on
    a main-resource write, and then gets it through the subresource."""
    written = store.update(vmi)
    if written.get("status") != vmi.get("status"):
        written = store.update({**written, "status": vmi.get("status")}, subresource="status")
    return written


def _migrate(status: dict, vmi: dict, migration: dict) -> None:
    """The workload updater's migration, carried out by the simulated node: the target runs the
    VMI's spec (its CPU topology, its guest memory)."""
    spec_domain = (vmi.get("spec") or {}).get("domain") or {}
    cpu = spec_domain.get("cpu") or {}
    status["currentCPUTopology"] = {k: cpu[k] for k in ("sockets", "cores", "threads") if k in cpu}
    guest = (spec_domain.get("memory") or {}).get("guest")
    if guest is not None and isinstance(status.get("memory"), dict):
        status["memory"] = {**status["memory"], "guestRequested": guest, "guestCurrent": guest}
    # The target pod lands on the VMI's node again (capacity for the new size is not checked).
    on = status.get("nodeName") or node.NODE_NAME
    status["migrationState"] = migrations.migration_state(migration, on, now())
