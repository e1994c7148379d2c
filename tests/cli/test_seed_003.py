"""Seed 003 (user guide): preference overridden by the user, versioning with ControllerRevisions."""
from __future__ import annotations

import base64
import json

from .test_apply import doc, run, run_process

OVERRIDE = doc("""
    ---
    apiVersion: instancetype.kubevirt.io/v1alpha1
    kind: VirtualMachinePreference
    metadata:
      name: example-preference-disk-virtio
    spec:
      devices:
        preferredDiskBus: virtio
    ---
    apiVersion: kubevirt.io/v1
    kind: VirtualMachine
    metadata:
      name: example-preference-user-override
    spec:
      preference:
        kind: VirtualMachinePreference
        name: example-preference-disk-virtio
      running: false
      template:
        spec:
          domain:
            memory:
              guest: 128Mi
            devices:
              disks:
              - disk:
                  bus: sata
                name: containerdisk
              - disk: {}
                name: cloudinitdisk
            resources: {}
          terminationGracePeriodSeconds: 0
          volumes:
          - containerDisk:
              image: registry:5000/kubevirt/cirros-container-disk-demo:devel
            name: containerdisk
          - cloudInitNoCloud:
              userData: |
                #!/bin/sh

                echo 'printed from cloud-init userdata'
            name: cloudinitdisk
    """)

CSMALL = doc("""
    apiVersion: instancetype.kubevirt.io/v1alpha1
    kind: VirtualMachineInstancetype
    metadata:
      name: csmall
    spec:
      cpu:
        guest: 1
      memory:
        guest: 128Mi
    """)

VM_CIRROS_CSMALL = doc("""
    apiVersion: kubevirt.io/v1
    kind: VirtualMachine
    metadata:
      name: vm-cirros-csmall
    spec:
      instancetype:
        kind: VirtualMachineInstancetype
        name: csmall
      running: false
      template:
        spec:
          domain:
            devices: {}
          terminationGracePeriodSeconds: 0
          volumes:
          - containerDisk:
              image: registry:5000/kubevirt/cirros-container-disk-demo:devel
            name: containerdisk
    """)


def test_user_override_of_preferred_disk_bus(tmp_path):
    state = tmp_path / "state.db"
    r = run(state, "apply", "-f", "-", stdin=OVERRIDE)
    # The seed's `configured` comes from a VM that already existed; on a new cluster kubectl says created.
    assert r.out == ("virtualmachinepreference.instancetype.kubevirt.io/example-preference-disk-virtio created\n"
                     "virtualmachine.kubevirt.io/example-preference-user-override created\n"), r.err
    r = run_process(state, "start", "example-preference-user-override")
    assert (r.code, r.out) == (0, "VM example-preference-user-override was scheduled to start\n")
    vm = json.loads(run(state, "get", "vms/example-preference-user-override", "-o", "json").out)
    assert vm["spec"]["template"]["spec"]["domain"]["devices"]["disks"] == [
        {"disk": {"bus": "sata"}, "name": "containerdisk"}, {"disk": {}, "name": "cloudinitdisk"}]
    vmi = json.loads(run(state, "get", "vmis/example-preference-user-override", "-o", "json").out)
    assert vmi["spec"]["domain"]["devices"]["disks"] == [
        {"disk": {"bus": "sata"}, "name": "containerdisk"}, {"disk": {"bus": "virtio"}, "name": "cloudinitdisk"}]


def test_versioning_with_controller_revisions(tmp_path):
    state = tmp_path / "state.db"
    (tmp_path / "csmall.yaml").write_text(CSMALL)
    (tmp_path / "vm-cirros-csmall.yaml").write_text(VM_CIRROS_CSMALL)
    r = run_process(state, "apply", "-f", str(tmp_path / "csmall.yaml"), "-f", str(tmp_path / "vm-cirros-csmall.yaml"))
    assert r.out == ("virtualmachineinstancetype.instancetype.kubevirt.io/csmall created\n"
                     "virtualmachine.kubevirt.io/vm-cirros-csmall created\n"), r.err
    vm = json.loads(run(state, "get", "vm/vm-cirros-csmall", "-o", "json").out)
    assert vm["spec"]["instancetype"] == {"kind": "VirtualMachineInstancetype", "name": "csmall"}
    assert run(state, "start", "vm-cirros-csmall").out == "VM vm-cirros-csmall was scheduled to start\n"
    vm = json.loads(run(state, "get", "vm/vm-cirros-csmall", "-o", "json").out)
    uid = json.loads(run(state, "get", "virtualmachineinstancetype", "csmall", "-o", "json").out)["metadata"]["uid"]
    name = f"vm-cirros-csmall-csmall-{uid}-1"
    assert vm["spec"]["instancetype"] == {"kind": "VirtualMachineInstancetype", "name": "csmall", "revisionName": name}
    cr = json.loads(run(state, "get", f"controllerrevision/{name}", "-o", "json").out)
    assert cr["apiVersion"] == "apps/v1" and cr["kind"] == "ControllerRevision"
    assert cr["metadata"]["ownerReferences"] == [{
        "apiVersion": "kubevirt.io/v1", "blockOwnerDeletion": True, "controller": True, "kind": "VirtualMachine",
        "name": "vm-cirros-csmall", "uid": vm["metadata"]["uid"]}]
    assert cr["data"]["spec"] == {"cpu": {"guest": 1}, "memory": {"guest": "128Mi"}} or \
        json.loads(base64.b64decode(cr["data"]["spec"])) == {"cpu": {"guest": 1}, "memory": {"guest": "128Mi"}}
    assert cr.get("revision", 0) == 0
    table = run(state, "get", "controllerrevision").out.splitlines()
    assert table[0].split() == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert table[1].split()[:3] == [name, "virtualmachine.kubevirt.io/vm-cirros-csmall", "0"]
    r = run_process(state, "delete", "vm/vm-cirros-csmall")
    assert (r.code, r.out) == (0, 'virtualmachine.kubevirt.io "vm-cirros-csmall" deleted\n')
    r = run(state, "get", f"controllerrevision/{name}")
    assert (r.code, r.err) == (1, f'Error from server (NotFound): controllerrevisions.apps "{name}" not found\n')


def test_fedora_example_from_the_guide(tmp_path):
    from .test_seed_001 import FEDORA

    state = tmp_path / "state.db"
    r = run(state, "apply", "-f", "-", stdin=FEDORA)
    assert r.code == 0 and r.out.count(" created\n") == 3
    assert run(state, "get", "vm", "fedora").out.split()[-2:] == ["Running", "True"]
