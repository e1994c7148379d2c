"""The VM controller on a real API server, driven with the real kubectl: seed 003's versioning
(seed 001's VMI: tests/kube/test_virtctl.py, with both client sets), `kubectl wait --for=condition=Ready`, deletion through the garbage collector."""
from __future__ import annotations

import json

from tests.builders import cirros_vm, vm

from .controller_env import get_json, until

CSMALL = {"apiVersion": "instancetype.kubevirt.io/v1alpha1", "kind": "VirtualMachineInstancetype",
          "metadata": {"name": "csmall"}, "spec": {"cpu": {"guest": 1}, "memory": {"guest": "128Mi"}}}
# KubeVirt's examples/vm-cirros-csmall.yaml, as seed 003 applies it.
VM_CIRROS_CSMALL = cirros_vm("vm-cirros-csmall", instancetype="csmall",
                             domain={"devices": {"disks": [{"disk": {"bus": "virtio"}, "name": "containerdisk"}]}})

# Seed 001's fedora example.
CMEDIUM = {"apiVersion": "instancetype.kubevirt.io/v1alpha1", "kind": "VirtualMachineInstancetype",
           "metadata": {"name": "cmedium"}, "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}}
FEDORA_PREF = {"apiVersion": "instancetype.kubevirt.io/v1alpha1", "kind": "VirtualMachinePreference",
               "metadata": {"name": "fedora"},
               "spec": {"devices": {"preferredDiskBus": "virtio", "preferredInterfaceModel": "virtio", "preferredRng": {}},
                        "features": {"preferredAcpi": {}, "preferredSmm": {}},
                        "firmware": {"preferredUseEfi": True, "preferredUseSecureBoot": True}}}
FEDORA_VM = vm("fedora", namespace=None, instancetype={"name": "cmedium", "kind": "virtualMachineInstancetype"},
               preference={"name": "fedora", "kind": "virtualMachinePreference"}, runStrategy="Always",
               domain={"devices": {}}, volumes=[
                   {"containerDisk": {"image": "quay.io/containerdisks/fedora:latest"}, "name": "containerdisk"},
                   {"cloudInitNoCloud": {"userData": "#cloud-config\nusers:\n  - name: admin\n"}, "name": "cloudinit"}])


def _apply(kube, namespace, *objs):
    return kube.kubectl("apply", "-n", namespace, "-f", "-",
                        input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objs)})).stdout


def _vm(kube, namespace, name):
    return get_json(kube, "-n", namespace, f"vm/{name}")


def _vmi_or_none(kube, namespace, name):
    r = kube.kubectl("get", "-n", namespace, f"vmi/{name}", "-o", "json", check=False)
    return json.loads(r.stdout) if r.returncode == 0 else None


def test_seed_003_versioning(kube, namespace, controllers):
    controllers.start()
    out = _apply(kube, namespace, CSMALL, VM_CIRROS_CSMALL)
    assert "virtualmachineinstancetype.instancetype.kubevirt.io/csmall created" in out
    assert "virtualmachine.kubevirt.io/vm-cirros-csmall created" in out
    assert _vm(kube, namespace, "vm-cirros-csmall")["spec"]["instancetype"] == {
        "kind": "VirtualMachineInstancetype", "name": "csmall"}       # not started: nothing pinned

    # virtctl start (a VM using `running`): spec.running true
    kube.kubectl("patch", "-n", namespace, "vm/vm-cirros-csmall", "--type=merge", "-p", '{"spec":{"running":true}}')
    matcher = until(lambda: (_vm(kube, namespace, "vm-cirros-csmall")["spec"]["instancetype"]
                             if "revisionName" in _vm(kube, namespace, "vm-cirros-csmall")["spec"]["instancetype"]
                             else None), what="revisionName")
    it_uid = get_json(kube, "-n", namespace, "virtualmachineinstancetype/csmall")["metadata"]["uid"]
    vm = _vm(kube, namespace, "vm-cirros-csmall")
    name = f"vm-cirros-csmall-csmall-{it_uid}-1"
    assert matcher == {"kind": "VirtualMachineInstancetype", "name": "csmall", "revisionName": name}

    cr = json.loads(kube.kubectl("get", "-n", namespace, f"controllerrevision/{name}", "-o", "json").stdout)
    assert cr["apiVersion"] == "apps/v1" and cr["kind"] == "ControllerRevision"
    assert cr["metadata"]["ownerReferences"] == [{"apiVersion": "kubevirt.io/v1", "blockOwnerDeletion": True,
                                                  "controller": True, "kind": "VirtualMachine",
                                                  "name": "vm-cirros-csmall", "uid": vm["metadata"]["uid"]}]
    assert cr["data"]["apiVersion"] == "instancetype.kubevirt.io/v1beta1"
    assert cr["data"]["kind"] == "VirtualMachineInstancetype"
    assert cr["data"]["spec"]["memory"]["guest"] == "128Mi"
    ref = until(lambda: (_vm(kube, namespace, "vm-cirros-csmall").get("status") or {}).get("instancetypeRef"),
                what="status.instancetypeRef")
    assert ref == {"kind": "VirtualMachineInstancetype", "name": "csmall", "controllerRevisionRef": {"name": name}}

    vmi = until(lambda: _vmi_or_none(kube, namespace, "vm-cirros-csmall"), what="the VMI")
    assert vmi["spec"]["domain"]["memory"]["guest"] == "128Mi"
    assert vmi["metadata"]["ownerReferences"][0]["uid"] == vm["metadata"]["uid"]

    # Editing the instancetype changes neither the running VM nor the restarted one.
    kube.kubectl("patch", "-n", namespace, "virtualmachineinstancetype/csmall", "--type=merge",
                 "-p", '{"spec":{"memory":{"guest":"256Mi"}}}')
    kube.kubectl("patch", "-n", namespace, "vm/vm-cirros-csmall", "--type=merge", "-p", '{"spec":{"running":false}}')
    until(lambda: _vmi_or_none(kube, namespace, "vm-cirros-csmall") is None, what="the VMI to go")
    kube.kubectl("patch", "-n", namespace, "vm/vm-cirros-csmall", "--type=merge", "-p", '{"spec":{"running":true}}')
    vmi = until(lambda: _vmi_or_none(kube, namespace, "vm-cirros-csmall"), what="the VMI again")
    assert vmi["spec"]["domain"]["memory"]["guest"] == "128Mi"
    assert _vm(kube, namespace, "vm-cirros-csmall")["spec"]["instancetype"]["revisionName"] == name
    revs = get_json(kube, "-n", namespace, "controllerrevisions")["items"]
    assert [r["metadata"]["name"] for r in revs] == [name]

    # Deleting the VM removes the revision (Kubernetes' garbage collector, no client cascade).
    kube.kubectl("delete", "-n", namespace, "vm/vm-cirros-csmall")

    def gone():
        r = kube.kubectl("get", "-n", namespace, f"controllerrevision/{name}", check=False)
        return r.returncode != 0 and r.stderr

    err = until(gone, what="the revision to be collected")
    assert err.strip() == f'Error from server (NotFound): controllerrevisions.apps "{name}" not found'
    until(lambda: _vmi_or_none(kube, namespace, "vm-cirros-csmall") is None, what="the VMI to be collected")


def test_kubectl_wait_ready_and_the_simulated_node(kube, namespace, controllers):
    controllers.start()
    vm = json.loads(json.dumps(FEDORA_VM))
    vm["metadata"]["name"] = "example"
    _apply(kube, namespace, CMEDIUM, FEDORA_PREF, vm)
    r = kube.kubectl("wait", "-n", namespace, "vms/example", "--for=condition=Ready", "--timeout=90s")
    assert r.stdout.strip() == "virtualmachine.kubevirt.io/example condition met"
    vmi = get_json(kube, "-n", namespace, "vmi/example")
    assert vmi["status"]["phase"] == "Running" and vmi["status"]["nodeName"] == "simulated-node"
    ready = [c for c in vmi["status"]["conditions"] if c["type"] == "Ready"][0]
    assert ready["status"] == "True" and "no guest runs" in ready["message"]
    status = _vm(kube, namespace, "example")["status"]
    assert status["printableStatus"] == "Running" and status["ready"] is True


MANAGED = "app.kubernetes.io/managed-by=virt-operator"
# qualified: the flavor.kubevirt.io kinds share these names
CIT = "virtualmachineclusterinstancetypes.instancetype.kubevirt.io"
CPREF = "virtualmachineclusterpreferences.instancetype.kubevirt.io"


def test_the_controller_keeps_the_catalogue_as_virt_operator(kube, controllers):
    from .controller_env import ensure_namespace

    ensure_namespace(kube, "kubevirt")
    had_kubevirt = kube.kubectl("get", "-n", "kubevirt", "kubevirt/kubevirt", check=False).returncode == 0
    if not had_kubevirt:
        _apply(kube, "kubevirt", {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                                  "metadata": {"name": "kubevirt"}, "spec": {}})
    controllers.start(catalog=True)
    try:
        until(lambda: kube.kubectl("get", f"{CIT}/u1.medium", check=False).returncode == 0,
              what="the catalogue")
        original = get_json(kube, f"{CIT}/u1.medium")["spec"]
        # drift is restored
        kube.kubectl("patch", f"{CIT}/u1.medium", "--type=merge",
                     "-p", '{"spec":{"cpu":{"guest":7}}}')
        until(lambda: get_json(kube, f"{CIT}/u1.medium")["spec"] == original,
              what="u1.medium restored")
        # a deleted managed object comes back; a managed object not in the catalogue is pruned
        kube.kubectl("delete", f"{CPREF}/fedora")
        extra = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
                 "metadata": {"name": "zz.extra", "labels": {"app.kubernetes.io/component": "kubevirt",
                                                             "app.kubernetes.io/managed-by": "virt-operator"}},
                 "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}}
        kube.kubectl("create", "-f", "-", input=json.dumps(extra))
        until(lambda: kube.kubectl("get", f"{CPREF}/fedora", check=False).returncode == 0
              and kube.kubectl("get", f"{CIT}/zz.extra", check=False).returncode != 0,
              what="fedora restored and zz.extra pruned")
        # disabled through the KubeVirt object: every managed object goes
        kube.kubectl("patch", "-n", "kubevirt", "kubevirt/kubevirt", "--type=merge",
                     "-p", '{"spec":{"configuration":{"commonInstancetypesDeployment":{"enabled":false}}}}')
        until(lambda: not kube.kubectl("get", f"{CIT},{CPREF}",
                                       "-l", MANAGED, "-o", "name").stdout.strip(), what="the catalogue removed")
    finally:
        kube.kubectl("patch", "-n", "kubevirt", "kubevirt/kubevirt", "--type=json",
                     "-p", '[{"op":"remove","path":"/spec/configuration/commonInstancetypesDeployment"}]', check=False)
        if not had_kubevirt:
            kube.kubectl("delete", "-n", "kubevirt", "kubevirt/kubevirt", "--wait=false", check=False)
