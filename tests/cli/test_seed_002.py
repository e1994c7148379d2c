"""Seed 002 (VirtualMachineFlavor update #1): flavor API objects, start, wait, default devices."""
from __future__ import annotations

import json

from .test_apply import doc, run, run_process

EXAMPLE = doc("""
    ---
    apiVersion: flavor.kubevirt.io/v1alpha1
    kind: VirtualMachineFlavor
    metadata:
      name: small
    spec:
      cpu:
        guest: 2
      memory:
        guest: 128Mi
    ---
    apiVersion: flavor.kubevirt.io/v1alpha1
    kind: VirtualMachinePreference
    metadata:
      name: virtio
    spec:
      devices:
        preferredDiskBus: virtio
        preferredInterfaceModel: virtio
    ---
    apiVersion: kubevirt.io/v1
    kind: VirtualMachine
    metadata:
      name: example
    spec:
      flavor:
        kind: VirtualMachineFlavor
        name: small
      preference:
        kind: VirtualMachinePreference
        name: virtio
      running: false
      template:
        spec:
          domain:
            devices: {}
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


def test_start_wait_and_default_devices(tmp_path):
    state = tmp_path / "state.db"
    r = run(state, "apply", "-f", "-", stdin=EXAMPLE)
    assert r.code == 0, r.err
    assert r.out == ("virtualmachineinstancetype.instancetype.kubevirt.io/small created\n"
                     "virtualmachinepreference.instancetype.kubevirt.io/virtio created\n"
                     "virtualmachine.kubevirt.io/example created\n")
    assert run(state, "get", "vmis").err == "No resources found in default namespace.\n"
    r = run_process(state, "start", "example")
    assert (r.code, r.out) == (0, "VM example was scheduled to start\n")
    r = run_process(state, "wait", "vms/example", "--for=condition=Ready")
    assert (r.code, r.out) == (0, "virtualmachine.kubevirt.io/example condition met\n")
    vmi = json.loads(run(state, "get", "vmis/example", "-o", "json").out)
    devices = vmi["spec"]["domain"]["devices"]
    assert devices["disks"] == [{"disk": {"bus": "virtio"}, "name": "containerdisk"},
                                {"disk": {"bus": "virtio"}, "name": "cloudinitdisk"}]
    assert devices["interfaces"] == [{"bridge": {}, "model": "virtio", "name": "default"}]
    assert vmi["spec"]["domain"]["cpu"]["sockets"] == 2


def test_wait_times_out_and_reports(tmp_path):
    state = tmp_path / "state.db"
    run(state, "apply", "-f", "-", stdin=EXAMPLE)
    r = run(state, "wait", "vm/example", "--for=condition=Ready", "--timeout=0.2s")
    assert (r.code, r.err) == (1, "error: timed out waiting for the condition on virtualmachines/example\n")
    r = run(state, "wait", "vm/nope", "--for=condition=Ready", "--timeout=1s")
    assert (r.code, r.err) == (1, 'Error from server (NotFound): virtualmachines.kubevirt.io "nope" not found\n')
    r = run(state, "wait", "vm", "example", "--for=condition=Ready=false", "--timeout=1s")
    assert (r.code, r.out) == (0, "virtualmachine.kubevirt.io/example condition met\n")
