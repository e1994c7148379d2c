"""The KubeVirt objects the tests build: VirtualMachines, instancetypes and preferences.

One builder a kind, so a test passes only what it is about:

    vm("web", {"domain": {}}, instancetype={"name": "u1.small"}, runStrategy="Always")
    vm(domain={"cpu": {"sockets": 2}}, volumes=[...], dataVolumeTemplates=[...])
    vm_object("vm1", {"anything": 1})            # the envelope around a spec given as is
    csmall_vm("vm1", "Halted")                   # the everyday VM: instancetype csmall, preference cirros
    instancetype_obj("small", cpu=2, memory="1Gi")
    preference_obj("cirros", {"devices": {"preferredDiskBus": "virtio"}})

Nothing given is copied: a test may keep a part (a volume, a dataVolumeTemplate) and change
it after the object is built.
"""
from __future__ import annotations

from typing import Any

VM_API = "kubevirt.io/v1"
INSTANCETYPE_GROUP = "instancetype.kubevirt.io"
CIRROS_IMAGE = "registry:5000/kubevirt/cirros-container-disk-demo:devel"


def vm_object(name: str = "vm", spec: Any = None, *, namespace: str | None = "ns", metadata: dict | None = None,
              status: dict | None = None, typed: bool = True) -> dict:
    """A VirtualMachine around `spec` as given. namespace=None leaves the namespace out (the
    store or the CLI defaults it); `metadata` adds fields (uid, labels, ...); typed=False leaves
    apiVersion and kind out, as a bare shape for the engine's decoders."""
    meta: dict = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta.update(metadata or {})
    out: dict = {"apiVersion": VM_API, "kind": "VirtualMachine"} if typed else {}
    out["metadata"] = meta
    out["spec"] = {} if spec is None else spec
    if status is not None:
        out["status"] = status
    return out


def vm(name: str = "vm", template: dict | bool | None = None, *, namespace: str | None = "ns",
       instancetype: Any = None, preference: Any = None, domain: Any = None, volumes: Any = None,
       template_metadata: dict | None = None, metadata: dict | None = None, status: dict | None = None,
       typed: bool = True, **spec: Any) -> dict:
    """A VirtualMachine. `template` is `spec.template.spec` (`{"domain": {}}` when neither it
    nor `domain` is given; False: no `spec.template` at all); `domain` and `volumes` set those
    template fields; `instancetype` / `preference` are the matchers as given; any other keyword
    is a `spec` field (runStrategy=..., dataVolumeTemplates=...). `template_metadata` is
    `spec.template.metadata`."""
    body: dict = {}
    if instancetype is not None:
        body["instancetype"] = instancetype
    if preference is not None:
        body["preference"] = preference
    body.update(spec)
    if template is not False:
        if template is None:
            template = {"domain": {} if domain is None else domain}
        elif domain is not None:
            template = {"domain": domain, **template}
        if volumes is not None:
            template = {**template, "volumes": volumes}
        body["template"] = {"spec": template} if template_metadata is None else {
            "metadata": template_metadata, "spec": template}
    return vm_object(name, body, namespace=namespace, metadata=metadata, status=status, typed=typed)


def _namespaced_matcher(kind: str, given: str | dict | None) -> dict | None:
    """A matcher by kind and name from a name; a dict is the matcher as given; None: none."""
    return {"kind": kind, "name": given} if isinstance(given, str) else given


def csmall_vm(name: str = "vm1", strategy: str | None = "Always", *, instancetype: str | dict | None = "csmall",
              preference: str | dict | None = "cirros", namespace: str | None = None, image: str = "cirros",
              **spec: Any) -> dict:
    """The tests' everyday VM: one container disk (`image`), the namespaced instancetype and
    preference by kind and name (a dict: the matcher as given; None: no matcher), `strategy` as
    spec.runStrategy (None: none), no namespace unless given (the store's `default`)."""
    if strategy is not None:
        spec = {"runStrategy": strategy, **spec}
    return vm(name, namespace=namespace, instancetype=_namespaced_matcher("VirtualMachineInstancetype", instancetype),
              preference=_namespaced_matcher("VirtualMachinePreference", preference), domain={"devices": {}},
              volumes=[{"name": "containerdisk", "containerDisk": {"image": image}}], **spec)


def cirros_vm(name: str, *, instancetype: str | None = None, preference: str | None = None,
              domain: dict | None = None, cloud_init: str | None = None, running: bool | None = False,
              matcher: str = "instancetype", **spec: Any) -> dict:
    """The seeds' cirros VM: a container disk (and a cloud-init disk), namespaced matchers by
    name, no namespace (the CLI's `default`). matcher="flavor" is the pre-v0.56 spelling."""
    volumes: list[dict] = [{"containerDisk": {"image": CIRROS_IMAGE}, "name": "containerdisk"}]
    if cloud_init is not None:
        volumes.append({"cloudInitNoCloud": {"userData": cloud_init}, "name": "cloudinitdisk"})
    matchers: dict = {}
    if instancetype:
        kind = "VirtualMachineFlavor" if matcher == "flavor" else "VirtualMachineInstancetype"
        matchers[matcher] = {"kind": kind, "name": instancetype}
    if preference:
        matchers["preference"] = {"kind": "VirtualMachinePreference", "name": preference}
    if running is not None:
        matchers["running"] = running
    return vm(name, {"domain": domain or {"devices": {}}, "terminationGracePeriodSeconds": 0, "volumes": volumes},
              namespace=None, **matchers, **spec)


def api_object(kind: str, name: str = "x", spec: Any = None, *, namespace: str | None = None,
               version: str = "v1beta1", group: str = INSTANCETYPE_GROUP, metadata: dict | None = None,
               **top: Any) -> dict:
    """An instancetype.kubevirt.io object of any kind; `top` adds top-level fields (status, ...)."""
    meta: dict = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta.update(metadata or {})
    return {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": meta,
            "spec": {} if spec is None else spec, **top}


def instancetype_obj(name: str = "x", spec: Any = None, *, cpu: int = 1, memory: str = "128Mi",
                     kind: str = "VirtualMachineInstancetype", version: str = "v1beta1",
                     namespace: str | None = None, metadata: dict | None = None, **top: Any) -> dict:
    """An instancetype (any kind, any version; VirtualMachineFlavor is flavor.kubevirt.io's).
    Without `spec`: `cpu.guest` and `memory.guest` from cpu and memory."""
    if spec is None:
        spec = {"cpu": {"guest": cpu}, "memory": {"guest": memory}}
    group = "flavor.kubevirt.io" if kind == "VirtualMachineFlavor" else INSTANCETYPE_GROUP
    return api_object(kind, name, spec, namespace=namespace, version=version, group=group, metadata=metadata, **top)


def preference_obj(name: str = "x", spec: Any = None, *, kind: str = "VirtualMachinePreference",
                   version: str = "v1beta1", group: str = INSTANCETYPE_GROUP, namespace: str | None = None,
                   metadata: dict | None = None, **top: Any) -> dict:
    """A preference (any kind, any version)."""
    return api_object(kind, name, spec, namespace=namespace, version=version, group=group, metadata=metadata, **top)
