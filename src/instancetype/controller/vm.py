"""The VM controller, written against the store: KubeVirt's VM sync (pkg/virt-controller/watch/vm).

`reconcile(store, vm, settings)` is level-triggered and idempotent: running it twice changes
nothing. It is a short list of steps, each a module of `controller/vmsync/` (as KubeVirt splits
its synchronizers out of vm.go), run on one `VMSync`. It has two drivers:

* the embedded store (`cluster.Cluster`): every write that can change what a VM should be runs
  `reconcile` on that VM inside the same transaction, so a stored VM and the work it triggers
  (its revisions, its VMI) land together or not at all;
* a Kubernetes API server (`controller.kube`): informers feed a work queue of VM keys and
  workers run `reconcile` against the cluster's store, retrying a Conflict from a fresh read.

virtctl's start/stop/restart (virt-api's part, then this reconcile): `controller/virtctl.py`, given
this reconcile here (`start`, `stop`, `restart`: the `VMVerbs` virt-api is built with).
"""
from __future__ import annotations

from instancetype.jsonutil import clone
from instancetype.store.base import NotFound, Store
from instancetype.store.kubevirt import Settings

from . import node, virtctl
from .virtctl import check_not_running, check_restart_grace
from .vmsync import (
    datavolumes,
    deletion,
    generation,
    live_update,
    pci_topology,
    pin,
    placement,
    restart_required,
    run_strategy,
    status,
    vmis,
    volumes,
)
from .vmsync.run_strategy import RUN_STRATEGIES
from .vmsync.state import VM_RESOURCE, VMSync, failed
from .vmsync.vmis import release as release_vmi

__all__ = ["RUN_STRATEGIES", "VM_RESOURCE", "check_not_running", "check_restart_grace", "failed", "reconcile",
           "release_vmi", "restart", "start", "stop", "waiting_for_objects"]

# The steps in KubeVirt's order: each changes the VMSync, or finishes the reconcile by returning
# the stored VM (a step that wrote the VM's spec starts over from it).
STEPS = (
    deletion.sync,        # the VM's finalizer; a VM being deleted: its VMI stopped, the finalizer off
    pin.sync,             # status refs follow the matchers; referencePolicy expand
    vmis.observe,         # the VMI as found: another owner's, one on its way out
    placement.retry,      # a VMI waiting for a node placed once one fits (kube-scheduler's retry)
    generation.bump,      # conditionallyBumpGenerationAnnotationOnVmi
    pin.repin,            # instancetype Sync: a running VM's new matcher pinned at once
    datavolumes.sync,     # handleDataVolumes: dataVolumeTemplates created; no start until ready
    run_strategy.sync,    # syncRunStrategy: start, stop, state change requests
    restart_required.sync,  # syncRestartRequired
    volumes.sync,         # handleVolumeRequests, handleDeclarativeVolumeHotplug
    pci_topology.sync,    # syncPCITopologyAnnotationsToVM
    live_update.sync,     # handleCPUChangeRequest, handleMemoryHotplugRequest
)


def reconcile(store: Store, vm: dict, settings: Settings | None = None) -> dict:
    """Bring the VMI and status of `vm` (as stored) in line with its spec; returns the stored VM.

    Level-triggered and idempotent: it looks only at what is stored, so the embedded store runs it
    inline after a write and the cluster's controller (`controller.kube`) from a work queue, and
    running it again changes nothing. Every write is conditional on the resourceVersion read
    (`vm` as given is what the writes are checked against): a VM changed meanwhile is a
    `Conflict`, to be retried from a fresh read, never overwritten. `settings`: the cluster's
    (`store.kubevirt.Settings`), read by the driver for this write (None: all defaults, the
    shared-revisions opt-in read where a pin needs it).
    """
    return _reconcile(store, clone(vm), settings if settings is not None else Settings(), vm)


def _reconcile(store: Store, vm: dict, settings: Settings, stored: dict) -> dict:
    """`vm` is ours to change; `stored` is the VM as last read or written (resourceVersion, status)."""
    s = VMSync(store, vm, stored, settings, _reconcile)
    for step in STEPS:
        done = step(s)
        if done is not None:
            return done
    return status.write(s)


def waiting_for_objects(store: Store, namespace: str | None) -> list[dict]:
    """The VMs of `namespace` (None: all) that a lookup object written there may move on: one that
    failed for want of an object (an instancetype, a DataSource, ...), and one whose VMI waits to
    attach a hot-plugged claim or DataVolume. Both stores' triggers ask this one question."""
    out = [vm for vm in store.list("VirtualMachine", namespace) if failed(vm)]
    seen = {((vm.get("metadata") or {}).get("namespace"), (vm.get("metadata") or {}).get("name")) for vm in out}
    for vmi in store.list("VirtualMachineInstance", namespace):
        meta = vmi.get("metadata") or {}
        key = (meta.get("namespace"), meta.get("name"))
        if key in seen or not node.attaching(vmi):
            continue
        owner = next((r for r in meta.get("ownerReferences") or ()
                      if isinstance(r, dict) and r.get("kind") == "VirtualMachine" and r.get("controller")), None)
        if owner is None:
            continue
        try:
            vm = store.get("VirtualMachine", owner.get("name") or "", key[0])
        except NotFound:
            continue
        if (vm.get("metadata") or {}).get("uid") == owner.get("uid"):
            out.append(vm)
    return out


def start(store: Store, vm: dict, settings: Settings | None = None, **options) -> dict:
    """virtctl start (controller/virtctl.py) with this controller's reconcile."""
    return virtctl.start(store, vm, settings if settings is not None else Settings(), reconcile=reconcile, **options)


def stop(store: Store, vm: dict, settings: Settings | None = None, **options) -> dict:
    """virtctl stop (controller/virtctl.py) with this controller's reconcile."""
    return virtctl.stop(store, vm, settings if settings is not None else Settings(), reconcile=reconcile, **options)


def restart(store: Store, vm: dict, settings: Settings | None = None, **options) -> dict:
    """virtctl restart (controller/virtctl.py) with this controller's reconcile."""
    return virtctl.restart(store, vm, settings if settings is not None else Settings(), reconcile=reconcile, **options)
