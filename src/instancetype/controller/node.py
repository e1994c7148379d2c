"""The simulated node: this system models KubeVirt's control plane (on the embedded store and on an
API server alike), not a hypervisor.

As kwok simulates nodes, a VMI that the controller creates is placed as kube-scheduler would
place its virt-launcher pod (`place`: engine/launcher_pod.py and engine/scheduler.py over the
`Node` objects, controller/nodes.py, and what the VMIs already on them request,
controller/node_usage.py) and reported `Running` and `Ready` there (or `Running` and `Paused`
when it was started paused, or paused since: `set_paused`). Its status says plainly that it is
simulated and that no guest runs. A VMI no node fits stays `Scheduling` with the pod's
`PodScheduled` False `Unschedulable` condition that virt-controller mirrors onto the VMI, until
capacity appears (`pending`).

A VMI being deleted (on a store that keeps finalizers, as an API server does) has no guest to
shut down: the node lets it go at once, removing the finalizers KubeVirt's own components
remove once the guest is gone (virt-controller's `virtualMachineControllerFinalize`, the VMI
controller's `foregroundDeleteVirtualMachine`).
"""
from __future__ import annotations

from instancetype.engine import scheduler
from instancetype.store.base import NotFound, Store

from . import node_usage
from .migratable import Claims
from .migratable import condition as live_migratable
from .nodes import DEFAULT_NODE_NAME as NODE_NAME

REASON = "SimulatedNode"
MESSAGE = "scheduled on the simulated node: the control plane is modelled, no guest runs"


def place(store: Store, vmi: dict, config: dict | None) -> tuple[str | None, str]:
    """kube-scheduler's choice for the VMI's virt-launcher pod: (node name, "") or (None, the
    scheduler's message). The placement is assumed at once (node_usage.assume)."""
    usage = node_usage.current()
    usage.sync(store, config)
    wanted = node_usage.pod_of(vmi, config)
    with usage.lock:
        chosen, message = scheduler.schedule(wanted, usage.node_facts(store), usage.usage())
        if chosen is not None:
            usage.assume(vmi, chosen, wanted.requests)
    return chosen, message


def unschedulable(vmi: dict, message: str, now: str) -> dict:
    """The VMI whose pod no node fits (mutates and returns `vmi`): phase Scheduling (the pod
    exists), Ready False (syncReadyConditionFromPod: the guest is not running) and the pod's
    PodScheduled condition (AddPodCondition)."""
    status = vmi.setdefault("status", {})
    status.pop("nodeName", None)
    status["phase"] = "Scheduling"
    status["conditions"] = [
        {"type": "Ready", "status": "False", "reason": "GuestNotRunning", "message": "Guest VM is not reported as running",
         "lastProbeTime": now, "lastTransitionTime": now},
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message,
         "lastProbeTime": None, "lastTransitionTime": now}]
    status["phaseTransitionTimestamps"] = [{"phase": p, "phaseTransitionTimestamp": now}
                                           for p in ("Pending", "Scheduling")]
    return vmi


def pending(vmi: dict) -> bool:
    """Created and waiting for a node (`unschedulable`)."""
    status = vmi.get("status") or {}
    return not status.get("nodeName") and status.get("phase") == "Scheduling" and not terminating(vmi)


def claim_access_modes(store: Store, namespace: str) -> Claims:
    """A claim's access modes as the VMI controller's volume status holds them (None: not found)."""
    def modes(name: str) -> list[str] | None:
        try:
            claim = store.get("PersistentVolumeClaim", name, namespace)
        except NotFound:
            return None
        return list((claim.get("spec") or {}).get("accessModes") or ())
    return modes


def schedule(vmi: dict, now: str, node_name: str = NODE_NAME, *, claims: Claims = lambda name: None,
             config: dict | None = None) -> dict:
    """The VMI as the simulated node `node_name` reports it once it is running (mutates and
    returns `vmi`); one that virt-launcher cannot turn into a domain (engine/launcher.py) stays
    Scheduled with virt-handler's Synchronized=False condition, as on a real node. A running one
    carries virt-handler's LiveMigratable condition (controller/migratable.py; `claims` gives a
    claim's access modes: `claim_access_modes`; `config` is the cluster's configuration)."""
    from instancetype.engine.launcher import SYNC_FAILED_REASON, domain_error

    status = vmi.setdefault("status", {})
    status["nodeName"] = node_name
    failed = domain_error(vmi)
    annotations = (vmi.get("metadata") or {}).get("annotations") or {}
    if annotations.get("kubevirt.io/create-migration-target") == "true":
        # A receiver VMI (WaitAsReceiver): its target pod waits for an incoming migration.
        status["phase"] = "WaitingForSync"
        status["conditions"] = []
        status["phaseTransitionTimestamps"] = [{"phase": p, "phaseTransitionTimestamp": now}
                                               for p in ("Pending", "WaitingForSync")]
        return vmi
    if failed is None and (vmi.get("spec") or {}).get("startStrategy") == "Paused":
        status["phase"] = "Running"
        status["conditions"] = paused_conditions(now)
    elif failed is None:
        status["phase"] = "Running"
        status["conditions"] = running_conditions(now)
    else:
        status["phase"] = "Scheduled"
        status["conditions"] = [
            {"type": "Ready", "status": "False", "reason": "GuestNotRunning",
             "message": "Guest VM is not reported as running", "lastProbeTime": None, "lastTransitionTime": now},
            {"type": "Synchronized", "status": "False", "reason": SYNC_FAILED_REASON, "message": failed,
             "lastProbeTime": None, "lastTransitionTime": now}]
    if failed is None:
        status["volumeStatus"] = permanent_volume_status(vmi)
        status["conditions"].append(live_migratable(vmi, claims, config))
    phases = ("Pending", "Scheduling", "Scheduled") + (("Running",) if failed is None else ())
    status["phaseTransitionTimestamps"] = [{"phase": phase, "phaseTransitionTimestamp": now} for phase in phases]
    labels = vmi.setdefault("metadata", {}).setdefault("labels", {})
    labels["kubevirt.io/nodeName"] = node_name
    return vmi


# A VMI started paused (`spec.startStrategy: Paused`): virt-launcher starts the domain with
# VIR_DOMAIN_START_PAUSED, which libvirt reports paused by the user; virt-handler's
# calculatePausedCondition then adds `Paused` (PausedByUser), its phase stays Running. The
# virt-launcher pod's readiness gate `kubevirt.io/virtual-machine-unpaused` is False, so the
# kubelet reports the pod not Ready (GeneratePodReadyCondition) and virt-controller copies that
# onto the VMI's Ready condition (syncReadyConditionFromPod).
PAUSED_REASON, PAUSED_MESSAGE = "PausedByUser", "VMI was paused by user"
UNPAUSED_GATE = "kubevirt.io/virtual-machine-unpaused"


def paused_conditions(now: str) -> list[dict]:
    return [
        {"type": "Ready", "status": "False", "reason": "ReadinessGatesNotReady",
         "message": f'the status of pod readiness gate "{UNPAUSED_GATE}" is not "True", but False',
         "lastProbeTime": None, "lastTransitionTime": now},
        {"type": "Paused", "status": "True", "reason": PAUSED_REASON, "message": PAUSED_MESSAGE,
         "lastProbeTime": now, "lastTransitionTime": now}]


def running_conditions(now: str) -> list[dict]:
    return [{"type": "Ready", "status": "True", "reason": REASON, "message": MESSAGE,
             "lastProbeTime": None, "lastTransitionTime": now}]


def set_paused(vmi: dict, paused: bool, now: str) -> dict:
    """The VMI (a copy) once the node paused or resumed its guest (virt-handler's PauseHandler /
    UnpauseHandler, then calculatePausedCondition and the pod's readiness gate): paused, the
    conditions `paused_conditions` lists; resumed, `Paused` gone and Ready again."""
    status = dict(vmi.get("status") or {})
    kept = [c for c in status.get("conditions") or () if isinstance(c, dict) and c.get("type") not in ("Ready", "Paused")]
    status["conditions"] = (paused_conditions(now) if paused else running_conditions(now)) + kept
    return {**vmi, "status": status}


# Finalizers KubeVirt's components remove from a VMI once its guest has stopped.
KUBEVIRT_FINALIZERS = ("kubevirt.io/virtualMachineControllerFinalize", "kubevirt.io/foregroundDeleteVirtualMachine")


def terminating(vmi: dict) -> bool:
    return bool((vmi.get("metadata") or {}).get("deletionTimestamp"))


def released(vmi: dict) -> dict | None:
    """The VMI without KubeVirt's finalizers (a copy), or None when it carries none of them."""
    meta = vmi.get("metadata") or {}
    finalizers = meta.get("finalizers") or []
    kept = [f for f in finalizers if f not in KUBEVIRT_FINALIZERS]
    if len(kept) == len(finalizers):
        return None
    return {**vmi, "metadata": {**meta, "finalizers": kept}}


# --- volumes -------------------------------------------------------------------------------------
# virt-handler reports each disk's target (the device name virt-launcher gave it, converter's
# makeDeviceName: a bus prefix and a letter); virt-controller adds a hot-plugged volume's
# attachment pod and its claim. The simulated node attaches a hot-plugged volume at once: where
# KubeVirt goes Pending/Bound -> AttachedToNode -> MountedToPod -> Ready over several reconciles
# (an attachment pod started, the volume mounted into virt-launcher, then attached to the domain),
# the status shows Ready at once, with an attachment pod's name and uid (no pod object exists).
# A volume that is not ready to attach (no claim, or a DataVolume CDI has not filled) stays as
# virt-controller leaves it: Pending or Bound, from its claim's phase.
HOTPLUG_READY_REASON, DEFAULT_FS_OVERHEAD = "VolumeReady", "0.055"   # storagetypes.DefaultFSOverhead (no CDI CR)


def _prefix(disk: dict) -> str:
    """getPrefixFromBus: virtio disks are vdX, every other bus (sata, scsi, usb) sdX."""
    for kind in ("disk", "lun", "cdrom"):
        target = disk.get(kind)
        if isinstance(target, dict):
            bus = target.get("bus") or ("virtio" if kind == "disk" else "sata" if kind == "cdrom" else "scsi")
            return "vd" if bus == "virtio" else "sd"
    return "vd"


def _device_name(prefix: str, index: int) -> str:
    """FormatDeviceName: prefix + a, b, ... z, aa, ab, ..."""
    letters = ""
    index += 1
    while index > 0:
        index, rem = divmod(index - 1, 26)
        letters = chr(ord("a") + rem) + letters
    return prefix + letters


def _next_target(prefix: str, used: set[str]) -> str:
    i = 0
    while _device_name(prefix, i) in used:
        i += 1
    used.add(_device_name(prefix, i))
    return _device_name(prefix, i)


def permanent_volume_status(vmi: dict) -> list[dict]:
    """The volumes the VMI started with, each with its disk's target (sorted by name, as
    virt-controller's updateVolumeStatus sorts them)."""
    spec = vmi.get("spec") or {}
    disks = {d.get("name"): d for d in ((spec.get("domain") or {}).get("devices") or {}).get("disks") or ()
             if isinstance(d, dict)}
    used: set[str] = set()
    out = []
    for volume in spec.get("volumes") or ():
        if not isinstance(volume, dict):
            continue
        disk = disks.get(volume.get("name"))
        target = _next_target(_prefix(disk), used) if disk is not None else ""
        out.append({"name": volume.get("name") or "", "target": target})
    return sorted(out, key=lambda v: v["name"])


def _claim_info(claim: dict) -> dict:
    """PersistentVolumeClaimInfo as processPVCInfo fills it."""
    spec, status = claim.get("spec") or {}, claim.get("status") or {}
    info: dict = {"claimName": (claim.get("metadata") or {}).get("name")}
    for key, value in (("accessModes", spec.get("accessModes")), ("volumeMode", spec.get("volumeMode")),
                       ("capacity", status.get("capacity")),
                       ("requests", (spec.get("resources") or {}).get("requests"))):
        if value:
            info[key] = value
    info["filesystemOverhead"] = "0" if spec.get("volumeMode") == "Block" else DEFAULT_FS_OVERHEAD
    return info


def _claim_name(volume: dict) -> str:
    for kind, key in (("persistentVolumeClaim", "claimName"), ("dataVolume", "name")):
        if isinstance(volume.get(kind), dict):
            return volume[kind].get(key) or ""
    return ""


def _ready_to_attach(claim: dict, lookup) -> bool:
    """VolumeReadyToAttachToNode (IsSucceededOrPendingPopulation): a claim a DataVolume controls
    is ready once the DataVolume Succeeded (or waits for its population); any other claim is."""
    owner = next((r for r in (claim.get("metadata") or {}).get("ownerReferences") or ()
                  if isinstance(r, dict) and r.get("controller") and r.get("kind") == "DataVolume"), None)
    if owner is None:
        return True
    dv = lookup("DataVolume", owner.get("name") or "")
    return dv is not None and (dv.get("status") or {}).get("phase") in ("Succeeded", "PendingPopulation")


def attaching(vmi: dict) -> bool:
    """A hot-plugged volume not attached yet (its claim missing, or a DataVolume not filled): the
    VMI waits for a claim or DataVolume to be written (KubeVirt's VMI controller watches both)."""
    return any(isinstance(v, dict) and v.get("hotplugVolume") is not None and v.get("phase") != "Ready"
               for v in (vmi.get("status") or {}).get("volumeStatus") or ())


_CLAIM_PHASES = {"Pending": ("Pending", "ClaimPending"), "Bound": ("Bound", "Bound")}


def volume_status(vmi: dict, lookup) -> dict:
    """The VMI's status (a copy) once its node and virt-controller saw its volumes: a volume
    without a status is hot-plugged (the ones it started with have theirs); one gone from the
    spec is detached at once and its status goes. `lookup(kind, name)` reads the VMI's
    namespace (None: absent)."""
    import uuid

    status = dict(vmi.get("status") or {})
    old = {v.get("name"): v for v in status.get("volumeStatus") or () if isinstance(v, dict)}
    spec = vmi.get("spec") or {}
    disks = {d.get("name"): d for d in ((spec.get("domain") or {}).get("devices") or {}).get("disks") or ()
             if isinstance(d, dict)}
    used: set[str] = {v["target"] for v in old.values() if isinstance(v.get("target"), str) and v["target"]}
    out = []
    for volume in spec.get("volumes") or ():
        if not isinstance(volume, dict):
            continue
        name: str = volume.get("name") or ""
        current = old.get(name)
        if current is not None and (current.get("hotplugVolume") is None or current.get("phase") == "Ready"):
            out.append(current)
            continue
        claim_name = _claim_name(volume)
        claim = lookup("PersistentVolumeClaim", claim_name) if claim_name else None
        entry: dict = {"name": name, "target": "", "hotplugVolume": {}}
        if claim is None:
            entry.update(phase="Pending", reason="FailedPvcNotFound", message=f"PVC {claim_name} not found")
        elif not _ready_to_attach(claim, lookup):
            # getVolumePhaseMessageReason: a claim neither Pending nor Bound reads as Lost
            phase, text = _CLAIM_PHASES.get(str((claim.get("status") or {}).get("phase")), ("Pending", "Lost"))
            entry.update(phase=phase, reason="PVCNotReady", message=f"PVC is in phase {text}")
        else:
            pod = "hp-volume-" + uuid.uuid4().hex[:5]
            disk = disks.get(name) or {}
            entry.update(target=_next_target(_prefix(disk), used), phase="Ready", reason=HOTPLUG_READY_REASON,
                         message=f"Successfully attach hotplugged volume {name} to VM",
                         hotplugVolume={"attachPodName": pod, "attachPodUID": str(uuid.uuid4())})
        if claim is not None:
            entry["persistentVolumeClaimInfo"] = _claim_info(claim)
        out.append(entry)
    status["volumeStatus"] = sorted(out, key=lambda v: v["name"])
    return status
