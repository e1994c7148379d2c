"""The simulated nodes as `Node` objects (core v1), as KWOK's nodes are: created with their
capacity when the embedded store is opened or the controller starts on a cluster and no node
exists, kept Ready (a Lease in `kube-node-lease` renewed, the node lifecycle controller's
heartbeat), and otherwise ordinary objects: `apply` changes a node's capacity, labels or taints,
and declares more nodes; `delete` removes one.

A simulated node is labelled `type: kwok` (KWOK's own label) and annotated
`kwok.x-k8s.io/node: fake`; the scheduler (engine/scheduler.py) places VMIs on any node,
simulated or declared by hand.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from instancetype.jsonutil import clone
from instancetype.store.base import AlreadyExists, NotFound, Store, now

log = logging.getLogger("instancetype.controller")

DEFAULT_NODE_NAME = "simulated-node"
NODE_LEASE_NAMESPACE = "kube-node-lease"
SIMULATED_LABEL = ("type", "kwok")
SIMULATED_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
LEASE_DURATION = 40             # seconds: the kubelet's default nodeLeaseDurationSeconds
RENEW_EVERY = 10.0              # the kubelet renews at a quarter of it

# What the default node offers (written in the README): a large host with KubeVirt's device
# plugins (kvm, tun, vhost-net), both hugepage sizes and no GPU.
DEFAULT_CAPACITY = {
    "cpu": "64",
    "memory": "256Gi",
    "hugepages-2Mi": "8Gi",
    "hugepages-1Gi": "8Gi",
    "pods": "1000",
    "ephemeral-storage": "1Ti",
    "devices.kubevirt.io/kvm": "1k",
    "devices.kubevirt.io/tun": "1k",
    "devices.kubevirt.io/vhost-net": "1k",
}


def node_object(name: str = DEFAULT_NODE_NAME, capacity: dict | None = None, labels: dict | None = None) -> dict:
    """A simulated node: the labels virt-handler's node labeller and the kubelet set (schedulable,
    architecture, machine type q35), capacity = allocatable."""
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                       "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
                       "kubevirt.io/schedulable": "true", "machine-type.node.kubevirt.io/q35": "true",
                       SIMULATED_LABEL[0]: SIMULATED_LABEL[1], **(labels or {})},
            "annotations": {SIMULATED_ANNOTATION[0]: SIMULATED_ANNOTATION[1],
                            "node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {},
        "status": node_status(capacity or DEFAULT_CAPACITY, now()),
    }


def node_status(capacity: dict, stamp: str) -> dict:
    return {
        "capacity": dict(capacity), "allocatable": dict(capacity),
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
             "lastHeartbeatTime": stamp, "lastTransitionTime": stamp},
        ],
        "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux", "kubeletVersion": "simulated",
                     "kubeProxyVersion": "", "containerRuntimeVersion": "simulated://0",
                     "kernelVersion": "", "osImage": "simulated node (no guest runs)",
                     "machineID": "", "systemUUID": "", "bootID": ""},
        "phase": "Running",
    }


def ensure_default_node(store: Store) -> dict | None:
    """The default simulated node, created when the store has no node at all; None otherwise."""
    if store.count("Node") > 0:
        return None
    node = node_object()
    status = node.pop("status")
    try:
        created = store.create(node)
    except AlreadyExists:
        return None
    if created.get("status") != status:
        # An API server drops the status on create: it is the status subresource's.
        created["status"] = status
        created = store.update(created, subresource="status")
    return created


# What kube-apiserver's TaintNodesByCondition admission puts on a new node, and the node lifecycle
# controller on one that stops reporting; it removes them (doNoScheduleTaintingPass) once the
# node's Ready condition is True.
LIFECYCLE_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def keep_ready(store: Store) -> int:
    """For each simulated node: Ready True reported (the kubelet's part; KWOK's), then the
    lifecycle taints a Ready node no longer carries removed (the node lifecycle controller's
    part, for a cluster that runs none: the test clusters). Returns the writes made."""
    writes = 0
    for node in list(store.list("Node")):
        if not simulated(node):
            continue
        status = node.get("status") or {}
        ready = next((c for c in status.get("conditions") or () if isinstance(c, dict) and c.get("type") == "Ready"),
                     None)
        if ready is None or ready.get("status") != "True":
            node = clone(node)
            stamp = now()
            kept = [c for c in status.get("conditions") or () if isinstance(c, dict) and c.get("type") != "Ready"]
            node["status"] = {**status, "conditions": node_status({}, stamp)["conditions"] + kept}
            node = store.update(node, subresource="status")
            writes += 1
        taints = (node.get("spec") or {}).get("taints") or []
        kept_taints = [t for t in taints if not (isinstance(t, dict) and t.get("key") in LIFECYCLE_TAINTS
                                                 and t.get("effect") == "NoSchedule")]
        if len(kept_taints) != len(taints):
            node = clone(node)
            node["spec"]["taints"] = kept_taints
            store.update(node)
            writes += 1
    return writes


def simulated(node: dict) -> bool:
    labels = (node.get("metadata") or {}).get("labels") or {}
    return labels.get(SIMULATED_LABEL[0]) == SIMULATED_LABEL[1]


def heartbeat(store: Store, stop: threading.Event, every: float = RENEW_EVERY,
              may_write: Callable[[], bool] = lambda: True) -> None:
    """Renew each simulated node's Lease (`kube-node-lease/<node>`) until `stop` (while this
    replica leads): the node lifecycle controller then keeps the node's Ready condition and adds
    no `unreachable` taint."""
    while not stop.is_set():
        try:
            for node in list(store.list("Node")):
                if simulated(node) and may_write():
                    renew_lease(store, node)
        except Exception as e:  # noqa: BLE001 -- a missed beat is retried at the next one
            log.info("node heartbeat: %s", e)
        stop.wait(every)


def renew_lease(store: Store, node: dict) -> None:
    meta = node.get("metadata") or {}
    name = meta.get("name") or ""
    stamp = now().replace("Z", ".000000Z")
    try:
        lease = store.get("Lease", name, NODE_LEASE_NAMESPACE)
    except NotFound:
        owner = {"apiVersion": "v1", "kind": "Node", "name": name, "uid": meta.get("uid")}
        try:
            store.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                          "metadata": {"name": name, "namespace": NODE_LEASE_NAMESPACE, "ownerReferences": [owner]},
                          "spec": {"holderIdentity": name, "leaseDurationSeconds": LEASE_DURATION,
                                   "renewTime": stamp}})
        except AlreadyExists:
            pass
        return
    lease = clone(lease)
    lease.setdefault("spec", {})["renewTime"] = stamp
    store.update(lease)
