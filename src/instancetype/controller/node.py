"""The simulated node: the embedded store models KubeVirt's control plane, not a hypervisor.

As kwok simulates nodes, a VMI that the controller creates is scheduled at once on one
simulated node and reported `Running` and `Ready`. Its name and the VMI's status say plainly
that it is simulated and that no guest runs.

A VMI being deleted (on a store that keeps finalizers, as an API server does) has no guest to
shut down: the node lets it go at once, removing the finalizers KubeVirt's own components
remove once the guest is gone (virt-controller's `virtualMachineControllerFinalize`, the VMI
controller's `foregroundDeleteVirtualMachine`).
"""
from __future__ import annotations

NODE_NAME = "simulated-node"
REASON = "SimulatedNode"
MESSAGE = ("scheduled on the simulated node of the embedded store: the control plane is modelled, "
           "no guest runs")


def schedule(vmi: dict, now: str) -> dict:
    """The VMI as the simulated node reports it once it is running (mutates and returns `vmi`)."""
    status = vmi.setdefault("status", {})
    status["phase"] = "Running"
    status["nodeName"] = NODE_NAME
    status["conditions"] = [{"type": "Ready", "status": "True", "reason": REASON, "message": MESSAGE,
                             "lastProbeTime": None, "lastTransitionTime": now}]
    status["phaseTransitionTimestamps"] = [
        {"phase": phase, "phaseTransitionTimestamp": now} for phase in ("Pending", "Scheduling", "Scheduled",
                                                                         "Running")]
    labels = vmi.setdefault("metadata", {}).setdefault("labels", {})
    labels["kubevirt.io/nodeName"] = NODE_NAME
    return vmi


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
