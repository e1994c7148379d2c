"""VirtualMachinePreferenceSpec (instancetype.kubevirt.io/v1beta1), its object wrapper and the
accepted preferred CPU topology and spread values."""
from __future__ import annotations

from typing import Annotated, ClassVar

from msgspec import field

from instancetype.api.v1beta1._base import (
    _S,
    Bool,
    Int64,
    PreferredCPUTopologyStr,
    Quantity,
    SpreadAcrossStr,
    String,
    StringMap,
    UInt32,
    _go,
)
from instancetype.api.v1beta1.core import (
    EFI,
    BlockSize,
    ClockOffset,
    CPUFeature,
    FeatureAPIC,
    FeatureHyperv,
    FeatureKVM,
    FeatureState,
    InterfaceMasquerade,
    LaunchSecurity,
    ObjectMeta,
    Rng,
    Timer,
    TPMDevice,
    VGPUOptions,
)

# What the package re-exports (`from instancetype.api.v1beta1._x import *` in its __init__).
__all__ = [
    "DEFAULT_SPREAD_ACROSS",
    "DEFAULT_SPREAD_RATIO",
    "DEPRECATED_TOPOLOGIES",
    "SPREAD_ACROSS",
    "TOPOLOGIES",
    "ClockPreferences",
    "CPUPreferenceRequirement",
    "CPUPreferences",
    "DevicePreferences",
    "FeaturePreferences",
    "FirmwarePreferences",
    "MachinePreferences",
    "MemoryPreferenceRequirement",
    "PreferenceRequirements",
    "SpreadOptions",
    "VirtualMachinePreference",
    "VirtualMachinePreferenceSpec",
    "VolumePreferences",
]


# Accepted values (pkg/instancetype/preference/validation.IsPreferredTopologySupported).
TOPOLOGIES = ("sockets", "cores", "threads", "spread", "any")
DEPRECATED_TOPOLOGIES = {"preferSockets": "sockets", "preferCores": "cores", "preferThreads": "threads",
                         "preferSpread": "spread", "preferAny": "any"}
SPREAD_ACROSS = ("SocketsCoresThreads", "SocketsCores", "CoresThreads")
DEFAULT_SPREAD_ACROSS = "SocketsCores"
DEFAULT_SPREAD_RATIO = 2


# --- VirtualMachinePreferenceSpec ----------------------------------------------------------------
class ClockPreferences(_S):
    go_type: ClassVar[str] = "v1beta1.ClockPreferences"
    preferred_clock_offset: ClockOffset | None = field(default=None, name="preferredClockOffset")
    preferred_timer: Timer | None = field(default=None, name="preferredTimer")


class SpreadOptions(_S):
    go_type: ClassVar[str] = "v1beta1.SpreadOptions"
    across: SpreadAcrossStr | None = None
    ratio: UInt32 | None = None


class CPUPreferences(_S):
    go_type: ClassVar[str] = "v1beta1.CPUPreferences"
    preferred_cpu_topology: PreferredCPUTopologyStr | None = field(default=None, name="preferredCPUTopology")
    spread_options: SpreadOptions | None = field(default=None, name="spreadOptions")
    preferred_cpu_features: Annotated[list[CPUFeature], _go("[]v1.CPUFeature")] | None = field(
        default=None, name="preferredCPUFeatures")


class DevicePreferences(_S):
    go_type: ClassVar[str] = "v1beta1.DevicePreferences"
    preferred_autoattach_graphics_device: Bool | None = field(default=None, name="preferredAutoattachGraphicsDevice")
    preferred_autoattach_mem_balloon: Bool | None = field(default=None, name="preferredAutoattachMemBalloon")
    preferred_autoattach_pod_interface: Bool | None = field(default=None, name="preferredAutoattachPodInterface")
    preferred_autoattach_serial_console: Bool | None = field(default=None, name="preferredAutoattachSerialConsole")
    preferred_autoattach_input_device: Bool | None = field(default=None, name="preferredAutoattachInputDevice")
    preferred_disable_hotplug: Bool | None = field(default=None, name="preferredDisableHotplug")
    preferred_virtual_gpu_options: VGPUOptions | None = field(default=None, name="preferredVirtualGPUOptions")
    preferred_sound_model: String = field(default="", name="preferredSoundModel")
    preferred_use_virtio_transitional: Bool | None = field(default=None, name="preferredUseVirtioTransitional")
    preferred_input_bus: Annotated[str, _go("v1.InputBus")] = field(default="", name="preferredInputBus")
    preferred_input_type: Annotated[str, _go("v1.InputType")] = field(default="", name="preferredInputType")
    preferred_disk_bus: Annotated[str, _go("v1.DiskBus")] = field(default="", name="preferredDiskBus")
    preferred_lun_bus: Annotated[str, _go("v1.DiskBus")] = field(default="", name="preferredLunBus")
    preferred_cdrom_bus: Annotated[str, _go("v1.DiskBus")] = field(default="", name="preferredCdromBus")
    preferred_disk_dedicated_io_thread: Bool | None = field(default=None, name="preferredDiskDedicatedIoThread")
    preferred_disk_cache: Annotated[str, _go("v1.DriverCache")] = field(default="", name="preferredDiskCache")
    preferred_disk_io: Annotated[str, _go("v1.DriverIO")] = field(default="", name="preferredDiskIO")
    preferred_disk_block_size: BlockSize | None = field(default=None, name="preferredDiskBlockSize")
    preferred_interface_model: String = field(default="", name="preferredInterfaceModel")
    preferred_rng: Rng | None = field(default=None, name="preferredRng")
    preferred_block_multi_queue: Bool | None = field(default=None, name="preferredBlockMultiQueue")
    preferred_network_interface_multi_queue: Bool | None = field(
        default=None, name="preferredNetworkInterfaceMultiQueue")
    preferred_tpm: TPMDevice | None = field(default=None, name="preferredTPM")
    preferred_interface_masquerade: InterfaceMasquerade | None = field(
        default=None, name="preferredInterfaceMasquerade")
    preferred_panic_device_model: Annotated[str, _go("v1.PanicDeviceModel")] | None = field(
        default=None, name="preferredPanicDeviceModel")
    preferred_video_type: String | None = field(default=None, name="preferredVideoType")


class FeaturePreferences(_S):
    go_type: ClassVar[str] = "v1beta1.FeaturePreferences"
    preferred_acpi: FeatureState | None = field(default=None, name="preferredAcpi")
    preferred_apic: FeatureAPIC | None = field(default=None, name="preferredApic")
    preferred_hyperv: FeatureHyperv | None = field(default=None, name="preferredHyperv")
    preferred_kvm: FeatureKVM | None = field(default=None, name="preferredKvm")
    preferred_pvspinlock: FeatureState | None = field(default=None, name="preferredPvspinlock")
    preferred_smm: FeatureState | None = field(default=None, name="preferredSmm")


class FirmwarePreferences(_S):
    go_type: ClassVar[str] = "v1beta1.FirmwarePreferences"
    preferred_use_bios: Bool | None = field(default=None, name="preferredUseBios")
    preferred_use_bios_serial: Bool | None = field(default=None, name="preferredUseBiosSerial")
    # Go: DeprecatedPreferredUseEfi / DeprecatedPreferredUseSecureBoot (skipped when preferredEfi is set)
    preferred_use_efi: Bool | None = field(default=None, name="preferredUseEfi")
    preferred_use_secure_boot: Bool | None = field(default=None, name="preferredUseSecureBoot")
    preferred_efi: EFI | None = field(default=None, name="preferredEfi")


class MachinePreferences(_S):
    go_type: ClassVar[str] = "v1beta1.MachinePreferences"
    preferred_machine_type: String = field(default="", name="preferredMachineType")


class VolumePreferences(_S):
    go_type: ClassVar[str] = "v1beta1.VolumePreferences"
    preferred_storage_class_name: String = field(default="", name="preferredStorageClassName")


class CPUPreferenceRequirement(_S):
    go_type: ClassVar[str] = "v1beta1.CPUPreferenceRequirement"
    guest: UInt32 = field(default_factory=int)


class MemoryPreferenceRequirement(_S):
    go_type: ClassVar[str] = "v1beta1.MemoryPreferenceRequirement"
    guest: Quantity = field(default_factory=lambda: "0")


class PreferenceRequirements(_S):
    go_type: ClassVar[str] = "v1beta1.PreferenceRequirements"
    cpu: CPUPreferenceRequirement | None = None
    memory: MemoryPreferenceRequirement | None = None
    architecture: String | None = None


class VirtualMachinePreferenceSpec(_S):
    go_type: ClassVar[str] = "v1beta1.VirtualMachinePreferenceSpec"
    clock: ClockPreferences | None = None
    cpu: CPUPreferences | None = None
    devices: DevicePreferences | None = None
    features: FeaturePreferences | None = None
    firmware: FirmwarePreferences | None = None
    machine: MachinePreferences | None = None
    volumes: VolumePreferences | None = None
    preferred_subdomain: String | None = field(default=None, name="preferredSubdomain")
    preferred_termination_grace_period_seconds: Int64 | None = field(
        default=None, name="preferredTerminationGracePeriodSeconds")
    requirements: PreferenceRequirements | None = None
    annotations: StringMap | None = None
    prefer_spread_socket_to_core_ratio: UInt32 = field(default=0, name="preferSpreadSocketToCoreRatio")
    preferred_architecture: String | None = field(default=None, name="preferredArchitecture")
    preferred_launch_security: LaunchSecurity | None = field(default=None, name="preferredLaunchSecurity")


# --- object wrapper (metav1.TypeMeta inline + ObjectMeta) ----------------------------------------
class VirtualMachinePreference(_S):
    """Also the Go type KubeVirt decodes VirtualMachineClusterPreference admissions into."""
    go_type: ClassVar[str] = "v1beta1.VirtualMachinePreference"
    kind: String = ""
    api_version: String = field(default="", name="apiVersion")
    metadata: ObjectMeta | None = None
    spec: VirtualMachinePreferenceSpec = field(default_factory=VirtualMachinePreferenceSpec)
