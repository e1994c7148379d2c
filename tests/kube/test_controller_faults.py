"""The VM controller under what real clusters do to it: kill -9 mid-start, two replicas with the
leader killed, a restarted kube-apiserver, VMs deleted while they start. After each, the same
invariants: every VM Running with exactly one VMI and its two revisions, no orphan, no duplicate."""
from __future__ import annotations

import json

from tests.builders import csmall_vm

from .controller_env import get_json, until

IT = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
      "metadata": {"name": "small"}, "spec": {"cpu": {"guest": 1}, "memory": {"guest": "128Mi"}}}
PREF = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
        "metadata": {"name": "virtio"}, "spec": {"devices": {"preferredDiskBus": "virtio"}}}


def _vm(name: str) -> dict:
    return csmall_vm(name, instancetype="small", preference="virtio", image="quay.io/containerdisks/fedora:latest")


def _create(kube, namespace, objs):
    kube.kubectl("create", "-n", namespace, "-f", "-", timeout=300,
                 input=json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))


def _names(kube, namespace, resource):
    out = kube.kubectl("get", "-n", namespace, resource, "-o", "name", check=False).stdout
    return [line.split("/", 1)[1] for line in out.split()]


def _state(kube, namespace):
    return (get_json(kube, "-n", namespace, "vms")["items"], get_json(kube, "-n", namespace, "vmis")["items"],
            get_json(kube, "-n", namespace, "controllerrevisions")["items"])


def _running(kube, namespace) -> int:
    """How many VMs report Running (a cheap read: one field of each VM)."""
    out = kube.kubectl("get", "-n", namespace, "vms", "-o", "jsonpath={.items[*].status.printableStatus}",
                       check=False, timeout=60).stdout
    return out.split().count("Running")


def _converged(kube, namespace, n):
    """None until every one of `n` VMs runs; then the invariants are asserted."""
    if _running(kube, namespace) < n:
        return None
    vms, vmis, revs = _state(kube, namespace)
    if len(vms) != n or len(vmis) != n or any((v.get("status") or {}).get("printableStatus") != "Running"
                                              for v in vms):
        return None
    by_uid = {v["metadata"]["uid"]: v for v in vms}
    for vmi in vmis:
        owner = vmi["metadata"]["ownerReferences"][0]
        assert owner["uid"] in by_uid and owner["name"] == vmi["metadata"]["name"], vmi["metadata"]
    owned: dict[str, list[str]] = {}
    for r in revs:
        refs = r["metadata"]["ownerReferences"]
        assert len(refs) == 1 and refs[0]["controller"] and refs[0]["blockOwnerDeletion"], r["metadata"]
        assert refs[0]["uid"] in by_uid, f"orphan revision {r['metadata']['name']}"
        owned.setdefault(refs[0]["uid"], []).append(r["metadata"]["name"])
    for uid, vm in by_uid.items():
        want = sorted([vm["spec"]["instancetype"]["revisionName"], vm["spec"]["preference"]["revisionName"]])
        assert sorted(owned.get(uid, [])) == want, vm["metadata"]["name"]
        assert not any(c.get("type") == "Failure" for c in vm["status"].get("conditions") or ()), vm["status"]
    assert len(revs) == 2 * n
    return True


def test_kill_9_during_a_start_of_500_vms_then_a_new_controller_converges(kube, namespace, controllers):
    n = 500
    _create(kube, namespace, [IT, PREF] + [_vm(f"vm-{i:03d}") for i in range(n)])
    first = controllers.start(workers=1)
    until(lambda: len(_names(kube, namespace, "vmis")) >= 5, what="the first VMIs", every=0.05)
    controllers.kill(first)
    assert len(_names(kube, namespace, "vmis")) < n          # killed mid-run
    controllers.start(workers=16)
    until(lambda: _converged(kube, namespace, n), timeout=600, what=f"{n} VMs running", every=2)


def test_two_replicas_with_leader_election_and_the_leader_killed(kube, namespace, controllers):
    n = 60
    lease = ["--leader-elect", "--leader-elect-lease-duration", "4s",
             "--leader-elect-resource-name", "vm-controller", "--leader-elect-resource-namespace", namespace]
    a = controllers.start(*lease, workers=1)
    until(lambda: controllers.leading(a), what="the first replica to lead")
    b = controllers.start(*lease, workers=2)
    _create(kube, namespace, [IT, PREF] + [_vm(f"vm-{i:03d}") for i in range(n)])
    until(lambda: len(_names(kube, namespace, "vmis")) >= 5, what="the first VMIs", every=0.05)
    assert not controllers.leading(b)                         # the standby does not act
    controllers.kill(a)
    until(lambda: controllers.leading(b), timeout=60, what="the standby to take over")
    until(lambda: _converged(kube, namespace, n), timeout=240, what=f"{n} VMs running")
    spec = get_json(kube, "-n", namespace, "lease/vm-controller")["spec"]
    assert spec["leaseTransitions"] == 1 and spec["holderIdentity"]
    # SIGTERM: the leader stops cleanly and releases the lease for the next one.
    assert controllers.stop(b) == 0
    spec = get_json(kube, "-n", namespace, "lease/vm-controller")["spec"]
    assert spec.get("holderIdentity", "") == "" and spec["leaseDurationSeconds"] == 1


def test_kube_apiserver_restarted_while_the_controller_runs(kube, namespace, controllers):
    controllers.start()
    _create(kube, namespace, [IT, PREF] + [_vm(f"before-{i}") for i in range(10)])
    until(lambda: _converged(kube, namespace, 10), what="10 VMs running")
    kube.restart_apiserver()
    _create(kube, namespace, [_vm(f"after-{i}") for i in range(10)])
    until(lambda: _converged(kube, namespace, 20), timeout=180, what="20 VMs running after the restart")


def test_vms_deleted_while_they_start_leave_nothing_behind(kube, namespace, controllers):
    n = 40
    _create(kube, namespace, [IT, PREF] + [_vm(f"vm-{i:03d}") for i in range(n)])
    controllers.start(workers=1)
    until(lambda: len(_names(kube, namespace, "vmis")) >= 3, what="the first VMIs", every=0.05)
    kube.kubectl("delete", "-n", namespace, "vms", "--all", "--wait=false")
    until(lambda: not _names(kube, namespace, "vms"), what="the VMs to go")
    until(lambda: not _names(kube, namespace, "vmis") and not _names(kube, namespace, "controllerrevisions"),
          timeout=180, what="no VMI and no revision left")
