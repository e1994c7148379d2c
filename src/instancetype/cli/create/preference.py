"""`create preference`: a VirtualMachine(Cluster)Preference manifest
(KubeVirt v1.9 pkg/virtctl/create/preference)."""
from __future__ import annotations

from .command import Command, Context, rand_suffix
from .flags import BOOL, STRING, Flag
from .params import flag_err

API_VERSION = "instancetype.kubevirt.io/v1beta1"
# preference validation's IsPreferredTopologySupported (deprecated spellings included; case-sensitive)
CPU_TOPOLOGIES = frozenset(("sockets", "cores", "threads", "spread", "any", "preferSockets", "preferCores",
                            "preferThreads", "preferSpread", "preferAny"))


def make_flags() -> list[Flag]:
    return [
        Flag("namespaced", BOOL, usage="Specify if VirtualMachinePreference should be created. By default "
             "VirtualMachineClusterPreference is created."),
        Flag("name", STRING, usage="Specify the name of the Preference."),
        Flag("volume-storage-class", STRING, usage="Defines the preferred storage class"),
        Flag("machine-type", STRING, usage="Defines the preferred machine type to use."),
        Flag("cpu-topology", STRING, usage="Defines the preferred guest visible CPU topology."),
    ]


def run(ctx: Context) -> dict:
    namespace = ctx.namespace
    namespaced = ctx.value("namespaced") or bool(namespace)
    if ctx.changed("name"):
        name = ctx.value("name")
    else:
        name = ("preference-" if namespaced else "clusterpreference-") + rand_suffix()
    spec: dict = {}
    if ctx.changed("volume-storage-class"):
        sc = ctx.value("volume-storage-class")
        spec["volumes"] = {"preferredStorageClassName": sc} if sc else {}
    if ctx.changed("machine-type"):
        mt = ctx.value("machine-type")
        spec["machine"] = {"preferredMachineType": mt} if mt else {}
    if ctx.changed("cpu-topology"):
        topology = ctx.value("cpu-topology")
        if topology not in CPU_TOPOLOGIES:
            raise flag_err("cpu-topology", "CPU topology must have a value of sockets, cores, threads or spread")
        spec["cpu"] = {"preferredCPUTopology": topology}
    metadata = {"name": name} if name else {}
    if namespaced and namespace:
        metadata["namespace"] = namespace
    kind = "VirtualMachinePreference" if namespaced else "VirtualMachineClusterPreference"
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}


COMMAND = Command(
    "preference", "Create a VirtualMachinePreference or VirtualMachineClusterPreference manifest.",
    make_flags, run,
    example="""  # Create a manifest for a ClusterPreference with a random name:
  {{ProgramName}} create preference

  # Create a manifest for a ClusterPreference with a specified CPU topology:
  {{ProgramName}} create preference --cpu-topology sockets

  # Create a manifest for a Preference with a specified CPU topology:
  {{ProgramName}} create preference --cpu-topology sockets --namespaced

  # Create a manifest for a ClusterPreference and create it with `create -f -`
  {{ProgramName}} create preference --volume-storage-class hostpath-provisioner | {{ProgramName}} create -f -""",
)
