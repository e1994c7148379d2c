"""instancetype.kubevirt.io/v1beta1: typed specs with KubeVirt's exact wire names.

Every field of `VirtualMachineInstancetypeSpec` and `VirtualMachinePreferenceSpec`
(staging/src/kubevirt.io/api/instancetype/v1beta1/types.go) and of the core
kubevirt.io/v1 types they embed. Each field carries its wire name (`name=`: the
automatic camelCase is wrong for names such as `dedicatedCPUPlacement`) and its Go
type (the `go` entry of its `Meta.extra`, or the Struct's `go_type`), which
`engine.godecode` reads to fail exactly as Go's decoder does and `api.crd` reads to
generate the CRD schemas.

Conventions mirror Go:
- a Go pointer field is `X | None = None` (absent and null are the same);
- a plain `omitempty` field defaults to its zero value and is omitted when zero;
- a field WITHOUT omitempty (`cpu`, `memory`, `guest`, a GPU's `name`, ...) uses
  `default_factory`, so it is always written, as Go always writes it.

Public: `decode_instancetype_spec(dict)`, `decode_preference_spec(dict)`, `to_dict(struct)`,
the Structs, and `struct_fields(cls)` (field name, wire name, type) for the schema generators.
"""
from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from msgspec import Meta, field

from instancetype.errors import DecodeError


# --- scalar types, each tagged with the Go type name Go's decoder prints ------------------------
def _go(base: Any, go: str, schema: dict | None = None, **meta: Any) -> Any:
    """`base` tagged with its Go type name; `schema` adds CRD schema keywords (kubebuilder markers)."""
    return Annotated[base, Meta(extra={"go": go}, extra_json_schema=schema, **meta)]


UInt32 = _go(int, "uint32", ge=0, le=4294967295)
UInt = _go(int, "uint", ge=0)  # msgspec bounds stop at int64; godecode checks the full range
Int32 = _go(int, "int32", ge=-2147483648, le=2147483647)
Int = _go(int, "int", ge=-9223372036854775808, le=9223372036854775807)
Int64 = _go(int, "int64", ge=-9223372036854775808, le=9223372036854775807)
Bool = _go(bool, "bool")
String = _go(str, "string")
# resource.Quantity: kept as its canonical text; validated by instancetype.api.quantity.
Quantity = _go(str, "resource.Quantity")
# metav1.Time: RFC 3339 text.
Time = _go(str, "v1.Time")
UID = _go(str, "types.UID")


def _named(go: str) -> Any:
    """A Go named string type (`type DiskBus string`): a string whose Go name shows in errors."""
    return _go(str, go)


PreferredCPUTopologyStr = _named("v1beta1.PreferredCPUTopology")
SpreadAcrossStr = _named("v1beta1.SpreadAcross")
_ATOMIC = {"x-kubernetes-list-type": "atomic"}
StringMap = _go(dict[str, String], "map[string]string")

# Accepted values (pkg/instancetype/preference/validation.IsPreferredTopologySupported).
TOPOLOGIES = ("sockets", "cores", "threads", "spread", "any")
DEPRECATED_TOPOLOGIES = {"preferSockets": "sockets", "preferCores": "cores", "preferThreads": "threads",
                         "preferSpread": "spread", "preferAny": "any"}
SPREAD_ACROSS = ("SocketsCoresThreads", "SocketsCores", "CoresThreads")
DEFAULT_SPREAD_ACROSS = "SocketsCores"
DEFAULT_SPREAD_RATIO = 2


class _S(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=False):
    go_type: ClassVar[str] = ""


# --- kubevirt.io/v1 core types used by the specs -------------------------------------------------
class FeatureState(_S):
    go_type: ClassVar[str] = "v1.FeatureState"
    enabled: Bool | None = None


class VGPUDisplayOptions(_S):
    go_type: ClassVar[str] = "v1.VGPUDisplayOptions"
    enabled: Bool | None = None
    ram_fb: FeatureState | None = field(default=None, name="ramFB")


class VGPUOptions(_S):
    go_type: ClassVar[str] = "v1.VGPUOptions"
    display: VGPUDisplayOptions | None = None


class GPU(_S):
    go_type: ClassVar[str] = "v1.GPU"
    name: String = field(default_factory=str)
    device_name: String = field(default="", name="deviceName")
    virtual_gpu_options: VGPUOptions | None = field(default=None, name="virtualGPUOptions")
    tag: String = ""
    claim_name: String | None = field(default=None, name="claimName")
    request_name: String | None = field(default=None, name="requestName")


class HostDevice(_S):
    go_type: ClassVar[str] = "v1.HostDevice"
    name: String = field(default_factory=str)
    device_name: String = field(default="", name="deviceName")
    tag: String = ""
    claim_name: String | None = field(default=None, name="claimName")
    request_name: String | None = field(default=None, name="requestName")


class DiskIOThreads(_S):
    go_type: ClassVar[str] = "v1.DiskIOThreads"
    supplemental_pool_thread_count: UInt32 | None = field(default=None, name="supplementalPoolThreadCount")


class SEVPolicy(_S):
    go_type: ClassVar[str] = "v1.SEVPolicy"
    encrypted_state: Bool | None = field(default=None, name="encryptedState")


class SEVAttestation(_S):
    go_type: ClassVar[str] = "v1.SEVAttestation"


class SEV(_S):
    go_type: ClassVar[str] = "v1.SEV"
    policy: SEVPolicy | None = None
    attestation: SEVAttestation | None = None
    session: String = ""
    dh_cert: String = field(default="", name="dhCert")


class SEVSNP(_S):
    go_type: ClassVar[str] = "v1.SEVSNP"


class TDX(_S):
    go_type: ClassVar[str] = "v1.TDX"


class LaunchSecurity(_S):
    go_type: ClassVar[str] = "v1.LaunchSecurity"
    sev: SEV | None = None
    snp: SEVSNP | None = None
    tdx: TDX | None = None


class NUMAGuestMappingPassthrough(_S):
    go_type: ClassVar[str] = "v1.NUMAGuestMappingPassthrough"


class NUMA(_S):
    go_type: ClassVar[str] = "v1.NUMA"
    guest_mapping_passthrough: NUMAGuestMappingPassthrough | None = field(
        default=None, name="guestMappingPassthrough")


class Realtime(_S):
    go_type: ClassVar[str] = "v1.Realtime"
    mask: String = ""


class Hugepages(_S):
    go_type: ClassVar[str] = "v1.Hugepages"
    page_size: String = field(default="", name="pageSize")


class CPUFeature(_S):
    go_type: ClassVar[str] = "v1.CPUFeature"
    name: String = field(default_factory=str)
    policy: String = ""


class ClockOffsetUTC(_S):
    go_type: ClassVar[str] = "v1.ClockOffsetUTC"
    offset_seconds: Int | None = field(default=None, name="offsetSeconds")


class ClockOffset(_S):
    go_type: ClassVar[str] = "v1.ClockOffset"
    utc: ClockOffsetUTC | None = None
    timezone: _named("v1.ClockOffsetTimezone") | None = None


class HPETTimer(_S):
    go_type: ClassVar[str] = "v1.HPETTimer"
    tick_policy: _named("v1.HPETTickPolicy") = field(default="", name="tickPolicy")
    present: Bool | None = None


class PITTimer(_S):
    go_type: ClassVar[str] = "v1.PITTimer"
    tick_policy: _named("v1.PITTickPolicy") = field(default="", name="tickPolicy")
    present: Bool | None = None


class RTCTimer(_S):
    go_type: ClassVar[str] = "v1.RTCTimer"
    tick_policy: _named("v1.RTCTickPolicy") = field(default="", name="tickPolicy")
    present: Bool | None = None
    track: _named("v1.RTCTimerTrack") = ""


class KVMTimer(_S):
    go_type: ClassVar[str] = "v1.KVMTimer"
    present: Bool | None = None


class HypervTimer(_S):
    go_type: ClassVar[str] = "v1.HypervTimer"
    present: Bool | None = None


class Timer(_S):
    go_type: ClassVar[str] = "v1.Timer"
    hpet: HPETTimer | None = None
    kvm: KVMTimer | None = None
    pit: PITTimer | None = None
    rtc: RTCTimer | None = None
    hyperv: HypervTimer | None = None


class FeatureAPIC(_S):
    go_type: ClassVar[str] = "v1.FeatureAPIC"
    enabled: Bool | None = None
    end_of_interrupt: Bool = field(default=False, name="endOfInterrupt")


class FeatureSpinlocks(_S):
    go_type: ClassVar[str] = "v1.FeatureSpinlocks"
    enabled: Bool | None = None
    spinlocks: UInt32 | None = None


class FeatureVendorID(_S):
    go_type: ClassVar[str] = "v1.FeatureVendorID"
    enabled: Bool | None = None
    vendorid: String = ""


class SyNICTimer(_S):
    go_type: ClassVar[str] = "v1.SyNICTimer"
    enabled: Bool | None = None
    direct: FeatureState | None = None


class TLBFlush(_S):
    go_type: ClassVar[str] = "v1.TLBFlush"
    enabled: Bool | None = None
    direct: FeatureState | None = None
    extended: FeatureState | None = None


class FeatureHyperv(_S):
    go_type: ClassVar[str] = "v1.FeatureHyperv"
    relaxed: FeatureState | None = None
    vapic: FeatureState | None = None
    spinlocks: FeatureSpinlocks | None = None
    vpindex: FeatureState | None = None
    runtime: FeatureState | None = None
    synic: FeatureState | None = None
    synictimer: SyNICTimer | None = None
    reset: FeatureState | None = None
    vendorid: FeatureVendorID | None = None
    frequencies: FeatureState | None = None
    reenlightenment: FeatureState | None = None
    tlbflush: TLBFlush | None = None
    ipi: FeatureState | None = None
    evmcs: FeatureState | None = None


class FeatureKVM(_S):
    go_type: ClassVar[str] = "v1.FeatureKVM"
    hidden: Bool = False


class EFI(_S):
    go_type: ClassVar[str] = "v1.EFI"
    secure_boot: Bool | None = field(default=None, name="secureBoot")
    persistent: Bool | None = None


class CustomBlockSize(_S):
    go_type: ClassVar[str] = "v1.CustomBlockSize"
    logical: UInt = 0
    physical: UInt = 0
    discard_granularity: UInt | None = field(default=None, name="discardGranularity")


class BlockSize(_S):
    go_type: ClassVar[str] = "v1.BlockSize"
    custom: CustomBlockSize | None = None
    match_volume: FeatureState | None = field(default=None, name="matchVolume")


class Rng(_S):
    go_type: ClassVar[str] = "v1.Rng"


class TPMDevice(_S):
    go_type: ClassVar[str] = "v1.TPMDevice"
    enabled: Bool | None = None
    persistent: Bool | None = None


class InterfaceMasquerade(_S):
    go_type: ClassVar[str] = "v1.InterfaceMasquerade"


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
    overcommit_percent: _go(int, "int", {"minimum": 0, "maximum": 100}) = field(default=0, name="overcommitPercent")
    max_guest: Quantity | None = field(default=None, name="maxGuest")


class VirtualMachineInstancetypeSpec(_S):
    go_type: ClassVar[str] = "v1beta1.VirtualMachineInstancetypeSpec"
    node_selector: StringMap | None = field(default=None, name="nodeSelector")
    scheduler_name: String = field(default="", name="schedulerName")
    cpu: CPUInstancetype = field(default_factory=CPUInstancetype)
    memory: MemoryInstancetype = field(default_factory=MemoryInstancetype)
    gpus: _go(list[GPU], "[]v1.GPU", _ATOMIC) | None = None
    host_devices: _go(list[HostDevice], "[]v1.HostDevice", _ATOMIC) | None = field(default=None, name="hostDevices")
    io_threads_policy: _named("v1.IOThreadsPolicy") | None = field(default=None, name="ioThreadsPolicy")
    io_threads: DiskIOThreads | None = field(default=None, name="ioThreads")
    launch_security: LaunchSecurity | None = field(default=None, name="launchSecurity")
    annotations: StringMap | None = None


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
    preferred_cpu_features: _go(list[CPUFeature], "[]v1.CPUFeature") | None = field(
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
    preferred_input_bus: _named("v1.InputBus") = field(default="", name="preferredInputBus")
    preferred_input_type: _named("v1.InputType") = field(default="", name="preferredInputType")
    preferred_disk_bus: _named("v1.DiskBus") = field(default="", name="preferredDiskBus")
    preferred_lun_bus: _named("v1.DiskBus") = field(default="", name="preferredLunBus")
    preferred_cdrom_bus: _named("v1.DiskBus") = field(default="", name="preferredCdromBus")
    preferred_disk_dedicated_io_thread: Bool | None = field(default=None, name="preferredDiskDedicatedIoThread")
    preferred_disk_cache: _named("v1.DriverCache") = field(default="", name="preferredDiskCache")
    preferred_disk_io: _named("v1.DriverIO") = field(default="", name="preferredDiskIO")
    preferred_disk_block_size: BlockSize | None = field(default=None, name="preferredDiskBlockSize")
    preferred_interface_model: String = field(default="", name="preferredInterfaceModel")
    preferred_rng: Rng | None = field(default=None, name="preferredRng")
    preferred_block_multi_queue: Bool | None = field(default=None, name="preferredBlockMultiQueue")
    preferred_network_interface_multi_queue: Bool | None = field(
        default=None, name="preferredNetworkInterfaceMultiQueue")
    preferred_tpm: TPMDevice | None = field(default=None, name="preferredTPM")
    preferred_interface_masquerade: InterfaceMasquerade | None = field(
        default=None, name="preferredInterfaceMasquerade")
    preferred_panic_device_model: _named("v1.PanicDeviceModel") | None = field(
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


# --- object wrappers (metav1.TypeMeta inline + ObjectMeta) ---------------------------------------
class OwnerReference(_S):
    go_type: ClassVar[str] = "v1.OwnerReference"
    api_version: String = field(default_factory=str, name="apiVersion")
    kind: String = field(default_factory=str)
    name: String = field(default_factory=str)
    uid: UID = field(default_factory=str)
    controller: Bool | None = None
    block_owner_deletion: Bool | None = field(default=None, name="blockOwnerDeletion")


class FieldsV1(_S):
    """Raw JSON in Go (any value is accepted): kept opaque."""
    go_type: ClassVar[str] = "v1.FieldsV1"


class ManagedFieldsEntry(_S):
    go_type: ClassVar[str] = "v1.ManagedFieldsEntry"
    manager: String = ""
    operation: _named("v1.ManagedFieldsOperationType") = ""
    api_version: String = field(default="", name="apiVersion")
    time: Time | None = None
    fields_type: String = field(default="", name="fieldsType")
    fields_v1: Any = field(default=None, name="fieldsV1")
    subresource: String = ""


class ObjectMeta(_S):
    go_type: ClassVar[str] = "v1.ObjectMeta"
    name: String = ""
    generate_name: String = field(default="", name="generateName")
    namespace: String = ""
    self_link: String = field(default="", name="selfLink")
    uid: UID = ""
    resource_version: String = field(default="", name="resourceVersion")
    generation: Int64 = 0
    creation_timestamp: Time | None = field(default=None, name="creationTimestamp")
    deletion_timestamp: Time | None = field(default=None, name="deletionTimestamp")
    deletion_grace_period_seconds: Int64 | None = field(default=None, name="deletionGracePeriodSeconds")
    labels: StringMap | None = None
    annotations: StringMap | None = None
    owner_references: _go(list[OwnerReference], "[]v1.OwnerReference") | None = field(
        default=None, name="ownerReferences")
    finalizers: _go(list[String], "[]string") | None = None
    managed_fields: _go(list[ManagedFieldsEntry], "[]v1.ManagedFieldsEntry") | None = field(
        default=None, name="managedFields")


class VirtualMachineInstancetype(_S):
    """Also the Go type KubeVirt decodes VirtualMachineClusterInstancetype admissions into."""
    go_type: ClassVar[str] = "v1beta1.VirtualMachineInstancetype"
    kind: String = ""
    api_version: String = field(default="", name="apiVersion")
    metadata: ObjectMeta | None = None
    spec: VirtualMachineInstancetypeSpec = field(default_factory=VirtualMachineInstancetypeSpec)


class VirtualMachinePreference(_S):
    """Also the Go type KubeVirt decodes VirtualMachineClusterPreference admissions into."""
    go_type: ClassVar[str] = "v1beta1.VirtualMachinePreference"
    kind: String = ""
    api_version: String = field(default="", name="apiVersion")
    metadata: ObjectMeta | None = None
    spec: VirtualMachinePreferenceSpec = field(default_factory=VirtualMachinePreferenceSpec)


# --- helpers -------------------------------------------------------------------------------------
def _decode(data: Any, cls: type, root: type) -> Any:
    from instancetype.engine.godecode import decode_value

    if data is None:
        return cls()
    return msgspec.convert(decode_value(data, cls, root.__name__, ("spec",)), cls)


def decode_instancetype_spec(data: Any) -> VirtualMachineInstancetypeSpec:
    """A spec dict -> VirtualMachineInstancetypeSpec, failing as Go's decoder fails (DecodeError,
    QuantityError); quantities come out in canonical form, unknown keys are dropped."""
    return _decode(data, VirtualMachineInstancetypeSpec, VirtualMachineInstancetype)


def decode_preference_spec(data: Any) -> VirtualMachinePreferenceSpec:
    """A spec dict -> VirtualMachinePreferenceSpec (see decode_instancetype_spec)."""
    return _decode(data, VirtualMachinePreferenceSpec, VirtualMachinePreference)


def to_dict(obj: Any) -> Any:
    """A Struct (or list/dict of them) -> JSON data with wire names, as Go would marshal it."""
    return msgspec.to_builtins(obj)


def struct_fields(cls: type) -> list[tuple[str, str, Any, bool]]:
    """(attribute, wire name, msgspec type info, always-written) for every field of a Struct."""
    info = msgspec.inspect.type_info(cls)
    if not isinstance(info, msgspec.inspect.StructType):
        raise DecodeError(f"{cls!r} is not a Struct")
    return [(f.name, f.encode_name, f.type, f.default_factory is not msgspec.NODEFAULT)
            for f in info.fields]


# --- OpenAPI v3 (structural) schemas for the CRDs ------------------------------------------------
_QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                     r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
_INT_FORMAT = {"uint32": "int32", "int32": "int32", "int64": "int64"}


def _schema_of(t: Any) -> dict:
    extra: dict = {}
    go = None
    if isinstance(t, msgspec.inspect.UnionType):
        t = next(x for x in t.types if not isinstance(x, msgspec.inspect.NoneType))
    if isinstance(t, msgspec.inspect.Metadata):
        go = (t.extra or {}).get("go")
        extra = dict(t.extra_json_schema or {})
        t = t.type
    if isinstance(t, msgspec.inspect.StructType):
        out = openapi_schema(t.cls)
    elif isinstance(t, msgspec.inspect.ListType):
        out = {"type": "array", "items": _schema_of(t.item_type)}
    elif isinstance(t, msgspec.inspect.DictType):
        out = {"type": "object", "additionalProperties": _schema_of(t.value_type)}
    elif isinstance(t, msgspec.inspect.IntType):
        out = {"type": "integer"}
        if go in _INT_FORMAT:
            out["format"] = _INT_FORMAT[go]
    elif isinstance(t, msgspec.inspect.BoolType):
        out = {"type": "boolean"}
    elif isinstance(t, msgspec.inspect.StrType):
        if go == "resource.Quantity":
            out = {"anyOf": [{"type": "integer"}, {"type": "string"}], "pattern": _QUANTITY_PATTERN,
                   "x-kubernetes-int-or-string": True}
        elif go == "v1.Time":
            out = {"type": "string", "format": "date-time"}
        else:
            out = {"type": "string"}
    else:
        out = {"x-kubernetes-preserve-unknown-fields": True}
    out.update(extra)
    return out


def openapi_schema(cls: type) -> dict:
    """The structural schema of a Struct as controller-gen writes it (without descriptions):
    properties by wire name, `required` = the fields Go always writes (no omitempty)."""
    props: dict = {}
    required: list = []
    for _attr, wire, t, always in struct_fields(cls):
        props[wire] = _schema_of(t)
        if always:
            required.append(wire)
    out: dict = {"type": "object"}
    if props:
        out["properties"] = props
    if required:
        out["required"] = sorted(required)
    return out
