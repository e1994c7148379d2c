"""Seed 001 (Simplifying VirtualMachine UX): the user guide's fedora example, v1alpha1 objects."""
from __future__ import annotations

from ._helpers import doc, get_json, run, run_process

FEDORA = doc("""
    ---
    apiVersion: instancetype.kubevirt.io/v1alpha1
    kind: VirtualMachineInstancetype
    metadata:
      name: cmedium
    spec:
      cpu:
        guest: 1
      memory:
        guest: 1Gi
    ---
    apiVersion: instancetype.kubevirt.io/v1alpha1
    kind: VirtualMachinePreference
    metadata:
      name: fedora
    spec:
      devices:
        preferredDiskBus: virtio
        preferredInterfaceModel: virtio
        preferredRng: {}
      features:
        preferredAcpi: {}
        preferredSmm: {}
      firmware:
        preferredUseEfi: true
        preferredUseSecureBoot: true
    ---
    apiVersion: kubevirt.io/v1
    kind: VirtualMachine
    metadata:
      creationTimestamp: null
      name: fedora
    spec:
      instancetype:
        name: cmedium
        kind: virtualMachineInstancetype
      preference:
        name: fedora
        kind: virtualMachinePreference
      runStrategy: Always
      template:
        metadata:
          creationTimestamp: null
        spec:
          domain:
            devices: {}
          volumes:
          - containerDisk:
              image: quay.io/containerdisks/fedora:latest
            name: containerdisk
          - cloudInitNoCloud:
              userData: |-
                #cloud-config
                users:
                  - name: admin
                    sudo: ALL=(ALL) NOPASSWD:ALL
                    ssh_authorized_keys:
                      - ssh-rsa AAAA...
            name: cloudinit
    """)


def test_fedora_example_vmi(tmp_path):
    state = tmp_path / "state.db"
    r = run_process(state, "apply", "-f", "-", stdin=FEDORA)
    assert r.code == 0, r.err
    assert r.out == ("virtualmachineinstancetype.instancetype.kubevirt.io/cmedium created\n"
                     "virtualmachinepreference.instancetype.kubevirt.io/fedora created\n"
                     "virtualmachine.kubevirt.io/fedora created\n")
    assert "v1alpha1 VirtualMachineInstancetypes is now deprecated" in r.err
    vm = get_json(state, "vms/fedora")
    assert vm["spec"]["template"]["spec"]["domain"]["devices"] == {}
    vmi = get_json(state, "vmis/fedora")["spec"]
    domain = vmi["domain"]
    assert {k: domain["cpu"][k] for k in ("cores", "sockets", "threads")} == {"cores": 1, "sockets": 1, "threads": 1}
    assert domain["devices"]["disks"] == [{"disk": {"bus": "virtio"}, "name": "containerdisk"},
                                          {"disk": {"bus": "virtio"}, "name": "cloudinit"}]
    assert domain["devices"]["interfaces"] == [{"bridge": {}, "model": "virtio", "name": "default"}]
    assert domain["devices"]["rng"] == {}
    assert domain["features"] == {"acpi": {"enabled": True}, "smm": {"enabled": True}}
    assert domain["firmware"]["bootloader"] == {"efi": {"secureBoot": True}}
    assert domain["memory"]["guest"] == "1Gi"  # v1.9 also sets maxGuest (memory hotplug)
    assert vmi["networks"] == [{"name": "default", "pod": {}}]
    assert vmi["volumes"][0]["containerDisk"] == {"image": "quay.io/containerdisks/fedora:latest",
                                                  "imagePullPolicy": "Always"}
    table = run(state, "get", "vmi", "fedora").out.splitlines()
    assert table[0].split() == ["NAME", "AGE", "PHASE", "IP", "NODENAME", "READY"]
    assert table[1].split()[2:] == ["Running", "simulated-node", "True"]
