"""v1.9's setPrintableStatus on hand-built VMs, VMIs, DataVolumes and claims: each predicate, and
the precedence between those that hold together (pkg/virt-controller/watch/vm/vm_test.go's
"printableStatus" table is the model)."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from instancetype.controller.vmsync.printable import printable_status
from instancetype.store.base import NotFound

NS = "ns"


class Objects:
    """The reads the predicates make: DataVolumes and claims by (kind, name)."""

    def __init__(self, *objects: dict):
        self.objects = {(o["kind"], o["metadata"]["name"]): o for o in objects}

    def get(self, kind, name, namespace=None):
        assert namespace == NS
        try:
            return self.objects[(kind, name)]
        except KeyError:
            raise NotFound(f"{kind} {name} not found", kind=kind, name=name) from None


def vm(strategy="Always", volumes=(), deleting=False, status=None):
    meta = {"name": "vm", "namespace": NS}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"kind": "VirtualMachine", "metadata": meta,
            "spec": {"runStrategy": strategy, "template": {"spec": {"volumes": list(volumes)}}},
            "status": status or {}}


def vmi(phase="Running", *conditions, deleting=False, migration=None):
    meta = {"name": "vm", "namespace": NS, "uid": "vmi-uid"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status = {"phase": phase, "conditions": list(conditions)}
    if migration is not None:
        status["migrationState"] = migration
    return {"kind": "VirtualMachineInstance", "metadata": meta, "status": status}


def cond(kind, status, reason=""):
    return {"type": kind, "status": status, "reason": reason}


def dv(name, phase, *conditions):
    return {"kind": "DataVolume", "metadata": {"name": name, "namespace": NS},
            "status": {"phase": phase, "conditions": list(conditions)}}


def pvc(name, phase):
    return {"kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": NS}, "status": {"phase": phase}}


DV_VOLUME = {"name": "disk", "dataVolume": {"name": "disk-dv"}}
PVC_VOLUME = {"name": "data", "persistentVolumeClaim": {"claimName": "data-pvc"}}


def stamp(seconds: int) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(("the_vm", "the_vmi", "objects", "expected"), [
    # Running, Paused, Starting, Stopped: what the simulated node produces today
    (vm(), vmi("Running", cond("Ready", "True")), (), "Running"),
    (vm(), vmi("Running", cond("Paused", "True", "PausedByUser")), (), "Paused"),
    (vm(), vmi("Running", cond("Paused", "False")), (), "Running"),
    (vm(), vmi("Scheduled", cond("Synchronized", "False", "Synchronizing")), (), "Starting"),
    (vm(), vmi("Pending"), (), "Starting"),
    (vm(), vmi(""), (), "Starting"),
    (vm(), vmi("Scheduling"), (), "Starting"),
    (vm("Halted"), None, (), "Stopped"),
    (vm("Always"), None, (), "Stopped"),          # none expected: a failed create shows Stopped
    (vm("Manual"), vmi("Succeeded"), (), "Stopped"),
    (vm("Once"), vmi("Failed"), (), "Stopped"),
    # WaitAsReceiver: a receiver VMI waits; without one, Stopped comes first in v1.9's list
    (vm("WaitAsReceiver"), vmi("WaitingForSync"), (), "WaitingForReceiver"),
    (vm("WaitAsReceiver"), None, (), "Stopped"),
    # deletion: Terminating (the VM) before Stopping (its VMI) before anything else
    (vm(deleting=True), vmi("Running", cond("Paused", "True")), (), "Terminating"),
    (vm(deleting=True), None, (), "Terminating"),
    (vm(), vmi("Running", deleting=True), (), "Stopping"),
    (vm(), vmi("Succeeded", deleting=True), (), "Stopped"),
    # migration: started and not ended
    (vm(), vmi("Running", migration={"startTimestamp": stamp(-60)}), (), "Migrating"),
    (vm(), vmi("Running", migration={"startTimestamp": stamp(-60), "endTimestamp": stamp(-1)}), (), "Running"),
    (vm(), vmi("Running", migration={"startTimestamp": stamp(3600)}), (), "Running"),
    # the VMI's Synchronized and PodScheduled conditions
    (vm(), vmi("Scheduling", cond("Synchronized", "False", "FailedPvcNotFound")), (), "ErrorPvcNotFound"),
    (vm(), vmi("Scheduling", cond("PodScheduled", "False", "Unschedulable")), (), "ErrorUnschedulable"),
    (vm(), vmi("Scheduling", cond("PodScheduled", "True", "Unschedulable")), (), "Starting"),
    (vm(), vmi("Scheduled", cond("Synchronized", "False", "ErrImagePull")), (), "ErrImagePull"),
    (vm(), vmi("Scheduled", cond("Synchronized", "False", "ImagePullBackOff")), (), "ImagePullBackOff"),
    # DataVolumes: provisioning, failed, an importer stopped on an error; WFFC unbound is not provisioning
    (vm(volumes=[DV_VOLUME]), None, (dv("disk-dv", "ImportInProgress"),), "Provisioning"),
    (vm("Halted", volumes=[DV_VOLUME]), None, (dv("disk-dv", "CloneScheduled"),), "Provisioning"),
    (vm(volumes=[DV_VOLUME]), None, (dv("disk-dv", "WaitForFirstConsumer"),), "Stopped"),
    (vm(volumes=[DV_VOLUME]), None, (dv("disk-dv", "WaitForFirstConsumer", cond("Bound", "True")),), "Provisioning"),
    (vm(volumes=[DV_VOLUME]), None, (dv("disk-dv", "Succeeded"),), "Stopped"),
    (vm(volumes=[DV_VOLUME]), None, (dv("disk-dv", "PendingPopulation"),), "Stopped"),
    (vm(volumes=[DV_VOLUME]), None, (dv("disk-dv", "Failed"),), "DataVolumeError"),
    (vm(volumes=[DV_VOLUME]), None, (dv("disk-dv", "ImportInProgress", cond("Running", "False", "Error")),),
     "DataVolumeError"),
    (vm(volumes=[DV_VOLUME]), None, (dv("disk-dv", "ImportInProgress", cond("Running", "False", "ImagePullFailed")),),
     "DataVolumeError"),
    (vm(volumes=[DV_VOLUME]), None, (dv("disk-dv", "ImportInProgress", cond("Running", "False", "Completed")),),
     "Provisioning"),
    (vm(volumes=[DV_VOLUME]), None, (), "Stopped"),                       # not there: skipped
    (vm(volumes=[DV_VOLUME]), vmi("Running"), (dv("disk-dv", "Failed"),), "Running"),
    # claims not bound: only while the VM is set to start
    (vm(volumes=[PVC_VOLUME]), None, (pvc("data-pvc", "Pending"),), "WaitingForVolumeBinding"),
    (vm("Halted", volumes=[PVC_VOLUME]), None, (pvc("data-pvc", "Pending"),), "Stopped"),
    (vm(volumes=[PVC_VOLUME]), None, (pvc("data-pvc", "Bound"),), "Stopped"),
    (vm(volumes=[DV_VOLUME]), None, (dv("disk-dv", "WaitForFirstConsumer"), pvc("disk-dv", "Pending")),
     "WaitingForVolumeBinding"),
    # CrashLoopBackOff: start failures under a restarting run strategy, no live VMI
    (vm(status={"startFailure": {"consecutiveFailCount": 2}}), None, (), "CrashLoopBackOff"),
    (vm(status={"startFailure": {"consecutiveFailCount": 2}}), vmi("Failed"), (), "CrashLoopBackOff"),
    (vm("Manual", status={"startFailure": {"consecutiveFailCount": 2}}), None, (), "Stopped"),
    (vm(status={"startFailure": {"consecutiveFailCount": 0}}), None, (), "Stopped"),
])
def test_printable_status(the_vm, the_vmi, objects, expected):
    assert printable_status(the_vm, the_vmi, Objects(*objects)) == expected


def test_expectations():
    """isVMIStartExpected / isVMIStopExpected: a VMI created or deleted that the read does not show."""
    assert printable_status(vm(), None, Objects(), start_expected=True) == "Starting"
    assert printable_status(vm(), vmi("Running"), Objects(), stop_expected=True) == "Stopping"
    assert printable_status(vm(), vmi("Failed"), Objects(), stop_expected=True) == "Stopped"


def test_manual_run_strategy_waits_for_binding_only_when_asked_to_start():
    start = {"stateChangeRequests": [{"action": "Start"}]}
    assert printable_status(vm("Manual", [PVC_VOLUME], status=start), None,
                            Objects(pvc("data-pvc", "Pending"))) == "WaitingForVolumeBinding"
    assert printable_status(vm("Manual", [PVC_VOLUME]), None, Objects(pvc("data-pvc", "Pending"))) == "Stopped"


def test_a_vm_matching_nothing_is_unknown():
    """A live VMI in a phase no predicate names (v1.9's fallback)."""
    assert printable_status(vm(), vmi("Unknown"), Objects()) == "Unknown"
