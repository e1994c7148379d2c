"""`create instancetype`: a VirtualMachine(Cluster)Instancetype manifest
(KubeVirt v1.9 pkg/virtctl/create/instancetype)."""
from __future__ import annotations

from instancetype.errors import CLIError

from . import params
from .command import Command, Context, rand_suffix
from .flags import BOOL, STRING, STRING_ARRAY, UINT32, Flag
from .params import STR, flag_err

API_VERSION = "instancetype.kubevirt.io/v1beta1"
_DEVICE = (("name", STR), ("devicename", STR))


def make_flags() -> list[Flag]:
    return [
        Flag("name", STRING, usage="Specify the name of the Instancetype."),
        Flag("cpu", UINT32, usage="Specify the count of CPUs of the Instancetype."),
        Flag("memory", STRING, usage="Specify the amount of memory of the Instancetype."),
        Flag("iothreadspolicy", STRING, usage='Specify IOThreadsPolicy to be used. Only valid values are "auto" '
             'and "shared".'),
        Flag("namespaced", BOOL, usage="Specify if VirtualMachineInstancetype should be created. By default "
             "VirtualMachineClusterInstancetype is created."),
        Flag("gpu", STRING_ARRAY, [], usage="Specify the list of vGPUs to passthrough. Can be provided multiple "
             "times."),
        Flag("hostdevice", STRING_ARRAY, [], usage="Specify list of HostDevices to passthrough. Can be provided "
             "multiple times."),
    ]


def _devices(ctx: Context, flag: str) -> list[dict]:
    out = []
    for raw in ctx.value(flag):
        p = params.parse(flag, raw, _DEVICE)
        if not p.get("name"):
            raise flag_err(flag, "name must be specified")
        if not p.get("devicename"):
            raise flag_err(flag, "deviceName must be specified")
        out.append({"name": p["name"], "deviceName": p["devicename"]})
    return out


def run(ctx: Context) -> dict:
    from instancetype.api.quantity import Quantity

    namespace = ctx.namespace
    namespaced = ctx.value("namespaced") or bool(namespace)  # an explicit namespace wins over --namespaced
    if ctx.changed("name"):
        name = ctx.value("name")
    else:
        name = ("instancetype-" if namespaced else "clusterinstancetype-") + rand_suffix()
    # validateFlags: the memory first (its error has no flag prefix), then the CPU count
    try:
        memory = str(Quantity.parse(ctx.value("memory")))
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if ctx.value("cpu") <= 0:
        raise CLIError("cpu value must be greater than zero")
    spec: dict = {"cpu": {"guest": ctx.value("cpu")}, "memory": {"guest": memory}}
    # KubeVirt applies these three from a Go map (random order when two of them are wrong)
    if ctx.changed("gpu"):
        spec["gpus"] = _devices(ctx, "gpu")
    if ctx.changed("hostdevice"):
        spec["hostDevices"] = _devices(ctx, "hostdevice")
    if ctx.changed("iothreadspolicy"):
        policy = ctx.value("iothreadspolicy")
        if policy not in ("auto", "shared"):
            raise flag_err("iothreadspolicy", "IOThread must be of value auto or shared")
        spec["ioThreadsPolicy"] = policy
    metadata = {"name": name} if name else {}
    if namespaced and namespace:
        metadata["namespace"] = namespace
    kind = "VirtualMachineInstancetype" if namespaced else "VirtualMachineClusterInstancetype"
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}


COMMAND = Command(
    "instancetype", "Create VirtualMachineInstancetype or VirtualMachineClusterInstancetype manifest.",
    make_flags, run, required=("cpu", "memory"),
    example="""  # Create a manifest for a ClusterInstancetype with a random name:
  {{ProgramName}} create instancetype --cpu 2 --memory 256Mi

  # Create a manifest for a ClusterInstancetype with a specified name:
  {{ProgramName}} create instancetype --name my-instancetype --cpu 2 --memory 256Mi

  # Create a manifest for a ClusterInstancetype with a specified gpu:
  {{ProgramName}} create instancetype --cpu 2 --memory 256Mi --gpu name:gpu1,devicename:nvidia

  # Create a manifest for a Instancetype with a specified name and cpu:
  {{ProgramName}} create instancetype --namespaced --name my-instancetype --cpu 2 --memory 256Mi

  # Create a manifest for a ClusterInstancetype and create it with `create -f -`
  {{ProgramName}} create instancetype --cpu 2 --memory 256Mi | {{ProgramName}} create -f -""",
)
