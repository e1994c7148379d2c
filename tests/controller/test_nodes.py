"""The simulated nodes on both stores (`any_cluster`): `Node` objects with capacity, the VMI's
virt-launcher pod placed as kube-scheduler places it, an unschedulable VMI waiting with the pod's
`PodScheduled` condition and its VM `ErrorUnschedulable`, placed once capacity appears.
KubeVirt's functional tests are the model (tests/vm_test.go, "should report an error status":
[test_id:6867] unsatisfiable resource requirements, [test_id:6868] unsatisfiable scheduling
constraints), with the issue's cases (an instancetype of 99999999999999999999Ei, an instancetype's
nodeSelector no node has)."""
from __future__ import annotations

import uuid

import pytest

from instancetype.controller.nodes import DEFAULT_NODE_NAME, node_object
from tests import builders

PREF = builders.preference_obj("cirros", {"devices": {"preferredDiskBus": "virtio"}})
TAIL = "no new claims to deallocate, preemption: 0/{n} nodes are available: {preemption}."


def _message(n: int, filters: str, preemption: str) -> str:
    return f"0/{n} nodes are available: {filters}. " + TAIL.format(n=n, preemption=preemption)


def _pod_scheduled(obj: dict) -> dict | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c["type"] == "PodScheduled"), None)


def _assert_unschedulable(cluster, name: str, message: str) -> None:
    vmi, vm = cluster.get("VirtualMachineInstance", name), cluster.get("VirtualMachine", name)
    assert vmi["status"]["phase"] == "Scheduling" and "nodeName" not in vmi["status"]
    for obj in (vmi, vm):
        cond = _pod_scheduled(obj)
        assert cond is not None, obj["status"]
        assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", message)
    assert vm["status"]["printableStatus"] == "ErrorUnschedulable"


def _assert_running_on(cluster, name: str, node: str) -> None:
    vmi, vm = cluster.get("VirtualMachineInstance", name), cluster.get("VirtualMachine", name)
    assert (vmi["status"]["phase"], vmi["status"]["nodeName"]) == ("Running", node)
    assert vmi["metadata"]["labels"]["kubevirt.io/nodeName"] == node
    assert _pod_scheduled(vmi) is None and _pod_scheduled(vm) is None
    assert vm["status"]["printableStatus"] == "Running"


@pytest.fixture
def cluster(any_cluster):
    any_cluster.apply(PREF)
    return any_cluster


def test_the_default_node(cluster):
    node = cluster.get("Node", DEFAULT_NODE_NAME)
    assert node["status"]["allocatable"]["memory"] == "256Gi"
    assert node["metadata"]["labels"]["kubevirt.io/schedulable"] == "true"
    assert next(c for c in node["status"]["conditions"] if c["type"] == "Ready")["status"] == "True"


def test_a_vm_too_big_for_the_node(cluster):
    # The instancetype: its guest is capped at the most a quantity holds (Go's
    # ParseQuantity), which no node has.
    cluster.apply(builders.instancetype_obj("huge", cpu=1, memory="99999999999999999999Ei"))
    cluster.apply(builders.csmall_vm("huge", "Always", instancetype="huge"))
    vmi = cluster.get("VirtualMachineInstance", "huge")
    assert vmi["spec"]["domain"]["memory"]["guest"] == "9223372036854775807"
    not_helpful = "1 Preemption is not helpful for scheduling"
    _assert_unschedulable(cluster, "huge", _message(1, "1 Insufficient memory", not_helpful))

    # [test_id:6867]: requests no node can hold, on the VM's own template.
    vm = builders.vm("requests", {"domain": {"resources": {"requests": {"memory": "1Ei", "cpu": "1M"}},
                                             "devices": {}}}, namespace=None, runStrategy="Always")
    cluster.apply(vm)
    _assert_unschedulable(cluster, "requests",
                          _message(1, "1 Insufficient cpu, 1 Insufficient memory", not_helpful))


def test_a_node_selector_no_node_matches_then_a_node_that_does(cluster):
    pool = f"ssd-{uuid.uuid4().hex[:8]}"
    spec = {"cpu": {"guest": 1}, "memory": {"guest": "128Mi"}, "nodeSelector": {"disktype": pool}}
    cluster.apply(builders.instancetype_obj("selective", spec))
    cluster.apply(builders.csmall_vm("vm1", "Always", instancetype="selective"))
    vmi = cluster.get("VirtualMachineInstance", "vm1")
    assert vmi["spec"]["nodeSelector"] == {"disktype": pool}
    _assert_unschedulable(cluster, "vm1", _message(1, "1 node(s) didn't match Pod's node affinity/selector",
                                                   "1 Preemption is not helpful for scheduling"))
    # A node labelled to match: the waiting VMI is placed on it and runs.
    cluster.apply(node_object(f"node-{pool}", labels={"disktype": pool}))
    _assert_running_on(cluster, "vm1", f"node-{pool}")


def test_two_nodes(cluster):
    pool = f"pool-{uuid.uuid4().hex[:8]}"
    capacity = {"cpu": "4", "memory": "2Gi", "pods": "110", "devices.kubevirt.io/kvm": "1k",
                "devices.kubevirt.io/tun": "1k", "devices.kubevirt.io/vhost-net": "1k"}
    for n in ("a", "b"):
        cluster.apply(node_object(f"{pool}-{n}", capacity, labels={"pool": pool}))
    # 1Gi of guest and 268Mi of overhead (GetMemoryOverhead for one vCPU): one VM per node.
    spec = {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}, "nodeSelector": {"pool": pool}}
    cluster.apply(builders.instancetype_obj("pooled", spec))
    for name in ("vm1", "vm2", "vm3"):
        cluster.apply(builders.csmall_vm(name, "Always", instancetype="pooled"))
    placed = {cluster.get("VirtualMachineInstance", name)["status"].get("nodeName") for name in ("vm1", "vm2")}
    assert placed == {f"{pool}-a", f"{pool}-b"}
    _assert_unschedulable(cluster, "vm3", _message(
        3, "1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient memory",
        "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod"))
    # Stopping vm1 frees its node: vm3 is placed there.
    freed = cluster.get("VirtualMachineInstance", "vm1")["status"]["nodeName"]
    cluster.stop("vm1")
    _assert_running_on(cluster, "vm3", freed)


def test_get_and_describe_nodes(cluster):
    from tests.cli._helpers import run_settled

    cluster.apply(builders.instancetype_obj("csmall", cpu=1, memory="128Mi"))
    cluster.apply(builders.csmall_vm("vm1", "Always"))
    got = run_settled(cluster, "get", "nodes")
    assert got.code == 0, got.err
    header, *rows = got.out.splitlines()
    assert header.split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    row = next(r.split() for r in rows if r.startswith(DEFAULT_NODE_NAME + " "))
    assert row[1:3] == ["Ready", "<none>"] and row[4] == "simulated"
    described = run_settled(cluster, "describe", "no", DEFAULT_NODE_NAME)
    assert described.code == 0, described.err
    text = described.out
    for line in ("Name:               simulated-node", "Taints:             <none>",
                 "Unschedulable:      false", "  memory:                         256Gi"):
        assert line in text.splitlines(), text
    # the VMI's pod, with what it requests: 1 vCPU at cpuAllocationRatio 10, 128Mi + 268Mi of overhead
    pod = next(r.split() for r in text.splitlines() if "virt-launcher-vm1" in r.split())
    assert pod[2:10] == ["100m", "(0%)", "0", "(0%)", "396Mi", "(0%)", "0", "(0%)"]


QUANTITY_REFUSED = ("quantities must match the regular expression "
                    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def test_a_node_and_a_claim_are_decoded_as_the_api_server_decodes_them(cluster):
    """Quantities in canonical form, allocatable defaulted from capacity (SetDefaults_NodeStatus),
    and what is not a quantity refused before anything reads it (the scheduler read `lots` as 0)."""
    from tests.cli._helpers import run_settled

    name = f"decoded-{uuid.uuid4().hex[:8]}"
    node = f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nstatus:\n  capacity: {{cpu: 4, memory: 1.5}}\n"
    assert run_settled(cluster, "create", "-f", "-", stdin=node).code == 0
    status = cluster.get("Node", name)["status"]
    assert (status["capacity"]["cpu"], status["capacity"]["memory"]) == ("4", "1500m")
    assert (status["allocatable"]["cpu"], status["allocatable"]["memory"]) == ("4", "1500m")

    bad_node = f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}-bad}}\nstatus:\n  capacity: {{cpu: lots}}\n"
    bad_claim = ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: claim1}\nspec:\n"
                 "  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1x}}\n")
    for doc, kind in ((bad_node, "Node"), (bad_claim, "PersistentVolumeClaim")):
        got = run_settled(cluster, "create", "-f", "-", stdin=doc)
        assert got.code == 1
        assert got.err.strip() == (f'Error from server (BadRequest): error when creating "STDIN": {kind} in version '
                                   f'"v1" cannot be handled as a {kind}: {QUANTITY_REFUSED}')
    assert not [n for n in cluster.list("Node") if n["metadata"]["name"] == f"{name}-bad"]


def test_freed_capacity_places_one_waiting_vmi_and_leaves_the_others_as_they_were(cluster):
    # kube-scheduler's retry of unschedulable pods when a pod goes: one of the identical waiting
    # VMIs takes the freed slot; the others get the answer they have, so nothing is written to
    # them (the drivers ask NodeUsage.refused_again before a whole reconcile of each).
    pool = f"one-{uuid.uuid4().hex[:8]}"
    capacity = {"cpu": "4", "memory": "2Gi", "pods": "110", "devices.kubevirt.io/kvm": "1k",
                "devices.kubevirt.io/tun": "1k", "devices.kubevirt.io/vhost-net": "1k"}
    cluster.apply(node_object(pool, capacity, labels={"pool": pool}))
    spec = {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}, "nodeSelector": {"pool": pool}}
    cluster.apply(builders.instancetype_obj("single", spec))
    names = ("vm1", "vm2", "vm3", "vm4")
    for name in names:
        cluster.apply(builders.csmall_vm(name, "Always", instancetype="single"))
    _assert_running_on(cluster, "vm1", pool)
    # (on an API server the nodes other tests left count too: the message is read, then compared)
    full = _pod_scheduled(cluster.get("VirtualMachineInstance", "vm2"))["message"]
    assert "1 Insufficient memory" in full and "1 No preemption victims found for incoming pod" in full
    for name in names[1:]:
        _assert_unschedulable(cluster, name, full)
    versions = {n: cluster.get("VirtualMachineInstance", n)["metadata"]["resourceVersion"] for n in names[1:]}
    cluster.stop("vm1")
    placed = [n for n in names[1:] if cluster.get("VirtualMachineInstance", n)["status"].get("nodeName")]
    assert len(placed) == 1, placed
    _assert_running_on(cluster, placed[0], pool)
    for name in names[1:]:
        if name != placed[0]:
            _assert_unschedulable(cluster, name, full)
            assert cluster.get("VirtualMachineInstance", name)["metadata"]["resourceVersion"] == versions[name]
