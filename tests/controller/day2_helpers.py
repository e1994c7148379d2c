"""Objects and steps shared by the day-2 tests (a VM that keeps running changes), on both stores."""
from __future__ import annotations

from tests import builders

SMALL = builders.instancetype_obj("small", cpu=1, memory="1Gi")
BIG = builders.instancetype_obj("big", cpu=2, memory="2Gi")
CSMALL = builders.instancetype_obj("csmall", cpu=1, memory="128Mi")


def vm(name: str = "vm1", strategy: str = "Always", instancetype: str = "small", **template) -> dict:
    """A VM on a masquerade pod network (migratable, as KubeVirt's hotplug tests make it)."""
    spec = {"domain": {"devices": {"interfaces": [{"name": "default", "masquerade": {}}]}},
            "networks": [{"name": "default", "pod": {}}],
            "volumes": [{"name": "containerdisk", "containerDisk": {"image": "cirros"}}], **template}
    return builders.vm(name, spec, namespace=None, runStrategy=strategy,
                       instancetype={"kind": "VirtualMachineInstancetype", "name": instancetype})


def kubevirt(cluster, **spec) -> None:
    """The KubeVirt object's spec (`configuration`, `workloadUpdateStrategy`) on either store."""
    cluster.apply({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                   "metadata": {"name": "kubevirt", "namespace": "kubevirt"}, "spec": spec})


def live_migrate(cluster, **configuration) -> None:
    kubevirt(cluster, configuration=configuration,
             workloadUpdateStrategy={"workloadUpdateMethods": ["LiveMigrate"]})


def edit(cluster, name: str, change) -> dict:
    """Read the VM, change it (`change(vm)`), write it back; the VM as stored after the write."""
    obj = cluster.get("VirtualMachine", name)
    change(obj)
    cluster.update(obj)
    return cluster.get("VirtualMachine", name)


def switch_instancetype(cluster, name: str, new: str) -> dict:
    """The seeds' switch: the matcher's name replaced and its revisionName removed."""
    def change(obj):
        obj["spec"]["instancetype"] = {"kind": "VirtualMachineInstancetype", "name": new}
    return edit(cluster, name, change)


def conditions(obj: dict) -> dict:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or ()}


def restart_required(cluster, name: str = "vm1") -> str | None:
    c = conditions(cluster.get("VirtualMachine", name)).get("RestartRequired")
    return c["message"] if c and c["status"] == "True" else None


def template(obj: dict) -> dict:
    return obj["spec"]["template"]["spec"]
