"""A clean VirtualMachine that v1.9 admits, and the whole VM admission of an edited copy.

Each rule test takes the clean VM, makes one targeted edit (as the conformance generator does)
and checks KubeVirt's cause: message, field, type, and the stage that decided."""
from __future__ import annotations

import copy

import instancetype as it

CLEAN_VM = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
    "metadata": {"name": "vm1", "namespace": "ns"},
    "spec": {
        "runStrategy": "Always",
        "template": {
            "metadata": {"labels": {"kubevirt.io/domain": "vm1"}},
            "spec": {
                "domain": {
                    "memory": {"guest": "2Gi"},
                    "devices": {
                        "disks": [{"name": "rootdisk", "disk": {"bus": "virtio"}},
                                  {"name": "cloudinitdisk", "disk": {"bus": "virtio"}}],
                        "interfaces": [{"name": "default", "masquerade": {}}],
                    },
                },
                "networks": [{"name": "default", "pod": {}}],
                "volumes": [
                    {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}},
                    {"name": "cloudinitdisk", "cloudInitNoCloud": {"userData": "#cloud-config\n"}},
                ],
            },
        },
    },
}


def clean_vm() -> dict:
    return copy.deepcopy(CLEAN_VM)


def tspec(vm: dict) -> dict:
    return vm["spec"]["template"]["spec"]


def admit(vm: dict, **kw) -> dict:
    """The answer as the conformance adapter gives it (without the stored VM)."""
    out = it.admit_vm(vm, **kw).to_dict()
    out.pop("vm", None)
    return out


def causes(vm: dict, **kw) -> list[tuple]:
    """(reason, message, field) of every cause."""
    return [(c["reason"], c["message"], c["field"]) for c in admit(vm, **kw)["causes"]]
