"""The simulated node: the embedded store models KubeVirt's control plane, not a hypervisor.

As kwok simulates nodes, a VMI that the controller creates is scheduled at once on one
simulated node and reported `Running` and `Ready`. Its name and the VMI's status say plainly
that it is simulated and that no guest runs.
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
