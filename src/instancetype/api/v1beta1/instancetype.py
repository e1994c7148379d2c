"""VirtualMachineInstancetypeSpec (instancetype.kubevirt.io/v1beta1) and its object wrapper."""
from __future__ import annotations

from typing import Annotated, ClassVar

from msgspec import field

from instancetype.api.v1beta1._base import _ATOMIC, _S, Bool, Quantity, String, StringMap, UInt32, _go
from instancetype.api.v1beta1.core import (
    GPU,
    NUMA,
    DiskIOThreads,
    HostDevice,
    Hugepages,
    LaunchSecurity,
    ObjectMeta,
    Realtime,
)

# What the package re-exports (`from instancetype.api.v1beta1._x import *` in its __init__).
__all__ = [
    "CPUInstancetype",
    "MemoryInstancetype",
    "VirtualMachineInstancetype",
    "VirtualMachineInstancetypeSpec",
]



# --- VirtualMachineInstancetypeSpec --------------------------------------------------------------
class CPUInstancetype(_S):
    go_type: ClassVar[str] = "v1beta1.CPUInstancetype"
    guest: UInt32 = field(default_factory=int)
    model: String | None = None
    dedicated_cpu_placement: Bool | None = field(default=None, name="dedicatedCPUPlacement")
    numa: NUMA | None = None
    isolate_emulator_thread: Bool | None = field(default=None, name="isolateEmulatorThread")
    realtime: Realtime | None = None
    max_sockets: UInt32 | None = field(default=None, name="maxSockets")


class MemoryInstancetype(_S):
    go_type: ClassVar[str] = "v1beta1.MemoryInstancetype"
    guest: Quantity = field(default_factory=lambda: "0")
    hugepages: Hugepages | None = None
    # +kubebuilder:validation:Minimum=0 / Maximum=100: enforced by the CRD schema, not by the webhook
    overcommit_percent: Annotated[int, _go("int", {"minimum": 0, "maximum": 100})] = field(default=0, name="overcommitPercent")
    max_guest: Quantity | None = field(default=None, name="maxGuest")


class VirtualMachineInstancetypeSpec(_S):
    go_type: ClassVar[str] = "v1beta1.VirtualMachineInstancetypeSpec"
    node_selector: StringMap | None = field(default=None, name="nodeSelector")
    scheduler_name: String = field(default="", name="schedulerName")
    cpu: CPUInstancetype = field(default_factory=CPUInstancetype)
    memory: MemoryInstancetype = field(default_factory=MemoryInstancetype)
    gpus: Annotated[list[GPU], _go("[]v1.GPU", _ATOMIC)] | None = None
    host_devices: Annotated[list[HostDevice], _go("[]v1.HostDevice", _ATOMIC)] | None = field(default=None, name="hostDevices")
    io_threads_policy: Annotated[str, _go("v1.IOThreadsPolicy")] | None = field(default=None, name="ioThreadsPolicy")
    io_threads: DiskIOThreads | None = field(default=None, name="ioThreads")
    launch_security: LaunchSecurity | None = field(default=None, name="launchSecurity")
    annotations: StringMap | None = None


# --- object wrapper (metav1.TypeMeta inline + ObjectMeta) ----------------------------------------
class VirtualMachineInstancetype(_S):
    """Also the Go type KubeVirt decodes VirtualMachineClusterInstancetype admissions into."""
    go_type: ClassVar[str] = "v1beta1.VirtualMachineInstancetype"
    kind: String = ""
    api_version: String = field(default="", name="apiVersion")
    metadata: ObjectMeta | None = None
    spec: VirtualMachineInstancetypeSpec = field(default_factory=VirtualMachineInstancetypeSpec)
