"""A VMI waiting for a node (its virt-launcher pod unschedulable: controller/node.py) is placed
once one fits it: kube-scheduler retries an unschedulable pod when a node is added or changed or
another pod goes (its queueing hints), and the VMI follows its pod. The drivers reconcile the
VMs of waiting VMIs on those events (`Cluster._retry_pending`, `VMController`'s PENDING key)."""
from __future__ import annotations

from instancetype.jsonutil import clone
from instancetype.store.base import now

from .. import node, node_usage
from ..hotplug import put_status
from .state import VMSync


def retry(s: VMSync) -> None:
    if s.vmi is None or not node.pending(s.vmi):
        return
    chosen, message = node.place(s.store, s.vmi, s.config)
    vmi = clone(s.vmi)
    if chosen is None:
        scheduled = next((c for c in (vmi.get("status") or {}).get("conditions") or ()
                          if isinstance(c, dict) and c.get("type") == "PodScheduled"), None)
        if scheduled is not None and scheduled.get("message") == message:
            return      # still the same answer: nothing to write
        stamps = (vmi.get("status") or {}).get("phaseTransitionTimestamps")
        vmi = node.unschedulable(vmi, message, now())
        if stamps:
            vmi["status"]["phaseTransitionTimestamps"] = stamps
    else:
        ns = (vmi.get("metadata") or {}).get("namespace") or "default"
        vmi = node.schedule(vmi, now(), chosen, claims=node.claim_access_modes(s.store, ns), config=s.config)
    try:
        s.vmi = put_status(s.store, vmi)
    except BaseException:
        if chosen is not None:
            node_usage.current().observe("MODIFIED", s.vmi, s.config)   # the assumed placement undone
        raise
