"""dataVolumeTemplates on both stores (`any_cluster`): KubeVirt v1.9's `handleDataVolumes` and the
simulated CDI (controller/cdi.py). Modelled on KubeVirt's tests/storage/datavolume.go: a VM
made by `virtctl create vm --volume-import type:ds,src:NS/NAME` (the real virtctl on the
cluster, ours on the embedded store) whose DataVolume clones a DataSource's claim; the VM starts
only once its DataVolume is ready; a broken source (a DataSource that does not exist, a
DataSource whose claim does not exist) and its repair; the DataVolumes deleted with the VM."""
from __future__ import annotations

import yaml

from instancetype.store.base import NotFound
from tests.waits import eventually

FAILED_CREATE = 'Error encountered while creating DataVolumes: unable to create DataVolume manifest: ' \
                'datasources.cdi.kubevirt.io "fedora" not found'


def _ns(cluster) -> str:
    return cluster.namespace if cluster.store_name == "kube" else "default"


def _vm_from_datasource(cluster, name: str = "vm1", *, infer: bool = True) -> dict:
    """`create vm --volume-import type:ds,src:<ns>/fedora,name:root`: the real virtctl on the
    cluster, ours on the embedded store; the same VM. Without `infer`, no inference from the
    volume (virtctl's default, even with its Ignore policy, refuses a VM whose DataSource or its
    claim does not exist at admission: a NotFound is no ignorable inference error)."""
    args = ["create", "vm", f"--name={name}", f"--volume-import=type:ds,src:{_ns(cluster)}/fedora,name:root"]
    if not infer:
        args += ["--infer-instancetype=false", "--infer-preference=false"]
    if cluster.store_name == "kube":
        text = cluster.stack.kube.virtctl(*args).stdout
    else:
        from tests.cli._helpers import run_main

        r = run_main(args)
        assert r.code == 0, r.err
        text = r.out
    vm = yaml.safe_load(text)
    for template in vm["spec"]["dataVolumeTemplates"]:
        if template["metadata"].get("creationTimestamp", "") is None:   # virtctl v1.7 prints it
            del template["metadata"]["creationTimestamp"]
    assert vm["spec"]["dataVolumeTemplates"] == [{"metadata": {"name": "root"}, "spec": {
        "sourceRef": {"kind": "DataSource", "name": "fedora", "namespace": _ns(cluster)},
        "storage": {"resources": {}}}}]
    return vm


def _datasource(pvc: str = "fedora-pvc", labels: dict | None = None) -> dict:
    return {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataSource",
            "metadata": {"name": "fedora", **({"labels": labels} if labels else {})},
            "spec": {"source": {"pvc": {"name": pvc}}}}


def _import(name: str = "fedora-pvc") -> dict:
    """What CDI's own test makes the missing source with: an import DataVolume."""
    return {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": {"name": name},
            "spec": {"source": {"registry": {"url": "docker://quay.io/containerdisks/fedora:41"}},
                     "storage": {"resources": {"requests": {"storage": "5Gi"}}}}}


def _conditions(obj: dict) -> dict:
    return {c["type"]: (c["status"], c.get("reason", ""), c.get("message", ""))
            for c in (obj.get("status") or {}).get("conditions") or ()}


def _get(cluster, kind: str, name: str) -> dict | None:
    try:
        return cluster.get(kind, name)
    except NotFound:
        return None


def test_a_vm_from_a_datasource_runs_once_its_datavolume_is_ready(any_cluster):
    cluster = any_cluster
    cluster.apply(_datasource())        # its claim does not exist yet
    cluster.apply(_vm_from_datasource(cluster, infer=False))
    vm = cluster.get("VirtualMachine", "vm1")
    dv = cluster.get("DataVolume", "root")

    # The DataVolume as v1.9 creates it: the DataSource resolved, owned by the VM.
    assert dv["spec"]["source"] == {"pvc": {"name": "fedora-pvc", "namespace": _ns(cluster)}}
    assert "sourceRef" not in dv["spec"]
    assert dv["metadata"]["labels"] == {"kubevirt.io/created-by": vm["metadata"]["uid"]}
    assert dv["metadata"]["annotations"]["cdi.kubevirt.io/allowClaimAdoption"] == "true"
    assert [(r["kind"], r["name"], r["uid"], r["controller"]) for r in dv["metadata"]["ownerReferences"]] == [
        ("VirtualMachine", "vm1", vm["metadata"]["uid"], True)]

    # CDI's clone without its source: Pending, CloneWithoutSource; the VM waits, no VMI.
    missing = "The source pvc fedora-pvc doesn't exist"
    assert dv["status"]["phase"] == "Pending"
    assert _conditions(dv) == {"Bound": ("False", "CloneWithoutSource", missing),
                               "Ready": ("False", "CloneWithoutSource", missing), "Running": ("False", "", "")}
    assert _get(cluster, "VirtualMachineInstance", "vm1") is None
    assert _get(cluster, "PersistentVolumeClaim", "root") is None
    vm = cluster.get("VirtualMachine", "vm1")
    assert "Failure" not in _conditions(vm)
    # v1.9's HasDataVolumeProvisioning: a DataVolume neither Succeeded nor WaitForFirstConsumer
    # (the DataVolume is Pending, not Failed, and its Running condition has no Error reason:
    # not DataVolumeError)
    assert vm["status"]["printableStatus"] == "Provisioning"

    # The source appears (imported by CDI): the clone completes and the VM starts.
    cluster.apply(_import())
    dv = cluster.get("DataVolume", "root")
    assert dv["status"]["phase"] == "Succeeded", (dv["status"], cluster.get("DataVolume", "fedora-pvc").get("status"))
    assert (dv["status"]["phase"], dv["status"]["progress"], dv["status"]["claimName"]) == ("Succeeded", "100.0%", "root")
    assert _conditions(dv) == {"Bound": ("True", "Bound", "PVC root Bound"), "Ready": ("True", "", ""),
                               "Running": ("False", "Completed", "Clone Complete")}
    pvc = cluster.get("PersistentVolumeClaim", "root")
    assert pvc["status"]["phase"] == "Bound"
    assert [(r["kind"], r["name"], r["uid"]) for r in pvc["metadata"]["ownerReferences"]] == [
        ("DataVolume", "root", dv["metadata"]["uid"])]
    vmi = cluster.get("VirtualMachineInstance", "vm1")
    assert vmi["status"]["phase"] == "Running"
    assert {"name": "root", "dataVolume": {"name": "root"}} in vmi["spec"]["volumes"]
    assert cluster.get("VirtualMachine", "vm1")["status"]["printableStatus"] == "Running"


def test_a_datasource_that_does_not_exist_creates_nothing_and_says_failed_create(any_cluster):
    cluster = any_cluster
    cluster.apply(_import())
    cluster.apply(_vm_from_datasource(cluster, infer=False))
    vm = cluster.get("VirtualMachine", "vm1")
    assert _conditions(vm)["Failure"] == ("True", "FailedCreate", FAILED_CREATE)
    assert _get(cluster, "DataVolume", "root") is None
    assert _get(cluster, "VirtualMachineInstance", "vm1") is None
    assert vm["status"]["printableStatus"] == "Stopped"     # no DataVolume to be provisioning, no VMI

    # The DataSource appears (its claim is there): the DataVolume is created and filled, the VM runs.
    cluster.apply(_datasource())
    vm = cluster.get("VirtualMachine", "vm1")
    assert "Failure" not in _conditions(vm)
    assert cluster.get("DataVolume", "root")["status"]["phase"] == "Succeeded"
    assert cluster.get("VirtualMachineInstance", "vm1")["status"]["phase"] == "Running"
    assert vm["status"]["printableStatus"] == "Running"


def test_the_datavolumes_go_with_their_vm(any_cluster):
    """With virtctl's inference from the volume (the DataSource's default-instancetype and
    -preference labels, read at admission), then deletion."""
    cluster = any_cluster
    cluster.apply(_import())
    cluster.apply(_datasource(labels={"instancetype.kubevirt.io/default-instancetype": "u1.small",
                                      "instancetype.kubevirt.io/default-preference": "fedora"}))
    cluster.apply(_vm_from_datasource(cluster))
    vm = cluster.get("VirtualMachine", "vm1")
    assert vm["spec"]["instancetype"]["name"] == "u1.small" and vm["spec"]["preference"]["name"] == "fedora"
    assert vm["status"]["printableStatus"] == "Running"
    assert cluster.get("VirtualMachineInstance", "vm1")["spec"]["domain"]["cpu"]["sockets"] == 1

    def left() -> list[str]:
        return [k for k in ("DataVolume", "PersistentVolumeClaim") if _get(cluster, k, "root") is not None]

    cluster.delete("VirtualMachine", "vm1")
    # On a cluster, Kubernetes' garbage collector: the VM owns the DataVolume, which owns its claim.
    eventually(lambda: not left(), 60, interval=0.1, what="the VM's DataVolume and its claim to be deleted")
    # the source, owned by no VM, stays
    assert cluster.get("DataVolume", "fedora-pvc")["status"]["phase"] == "Succeeded"
    assert cluster.get("PersistentVolumeClaim", "fedora-pvc")["status"]["phase"] == "Bound"
