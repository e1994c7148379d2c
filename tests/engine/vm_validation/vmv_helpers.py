"""A clean VirtualMachine that v1.9 admits, and the whole VM admission of an edited copy.

Each rule test takes the clean VM, makes one targeted edit (as the conformance generator does)
and checks KubeVirt's cause: message, field, type, and the stage that decided."""
from __future__ import annotations

from tests.builders import vm

import instancetype as it


def clean_vm() -> dict:
    """A fresh copy of the clean VM (each test edits its own)."""
    return vm("vm1", {"networks": [{"name": "default", "pod": {}}]}, runStrategy="Always",
              template_metadata={"labels": {"kubevirt.io/domain": "vm1"}},
              domain={"memory": {"guest": "2Gi"},
                      "devices": {"disks": [{"name": "rootdisk", "disk": {"bus": "virtio"}},
                                            {"name": "cloudinitdisk", "disk": {"bus": "virtio"}}],
                                  "interfaces": [{"name": "default", "masquerade": {}}]}},
              volumes=[{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}},
                       {"name": "cloudinitdisk", "cloudInitNoCloud": {"userData": "#cloud-config\n"}}])


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
