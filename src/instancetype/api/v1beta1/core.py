"""The kubevirt.io/v1 and metav1 types the v1beta1 specs and objects embed, as Structs."""
from __future__ import annotations

from typing import Annotated, Any, ClassVar

from msgspec import field

from instancetype.api.v1beta1._base import (
    _S,
    UID,
    Bool,
    Int,
    Int64,
    String,
    StringMap,
    Time,
    UInt,
    UInt32,
    _go,
)

# What the package re-exports (`from instancetype.api.v1beta1._x import *` in its __init__).
__all__ = [
    "EFI",
    "GPU",
    "NUMA",
    "SEV",
    "SEVSNP",
    "TDX",
    "BlockSize",
    "ClockOffset",
    "ClockOffsetUTC",
    "CPUFeature",
    "CustomBlockSize",
    "DiskIOThreads",
    "FeatureAPIC",
    "FeatureHyperv",
    "FeatureKVM",
    "FeatureSpinlocks",
    "FeatureState",
    "FeatureVendorID",
    "FieldsV1",
    "HostDevice",
    "HPETTimer",
    "Hugepages",
    "HypervTimer",
    "InterfaceMasquerade",
    "KVMTimer",
    "LaunchSecurity",
    "ManagedFieldsEntry",
    "NUMAGuestMappingPassthrough",
    "ObjectMeta",
    "OwnerReference",
    "PITTimer",
    "Realtime",
    "Rng",
    "RTCTimer",
    "SEVAttestation",
    "SEVPolicy",
    "SyNICTimer",
    "Timer",
    "TLBFlush",
    "TPMDevice",
    "VGPUDisplayOptions",
    "VGPUOptions",
]



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
    timezone: Annotated[str, _go("v1.ClockOffsetTimezone")] | None = None


class HPETTimer(_S):
    go_type: ClassVar[str] = "v1.HPETTimer"
    tick_policy: Annotated[str, _go("v1.HPETTickPolicy")] = field(default="", name="tickPolicy")
    present: Bool | None = None


class PITTimer(_S):
    go_type: ClassVar[str] = "v1.PITTimer"
    tick_policy: Annotated[str, _go("v1.PITTickPolicy")] = field(default="", name="tickPolicy")
    present: Bool | None = None


class RTCTimer(_S):
    go_type: ClassVar[str] = "v1.RTCTimer"
    tick_policy: Annotated[str, _go("v1.RTCTickPolicy")] = field(default="", name="tickPolicy")
    present: Bool | None = None
    track: Annotated[str, _go("v1.RTCTimerTrack")] = ""


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


# --- metav1 types of the object wrappers (ObjectMeta and what it holds) ---------------------------
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
    operation: Annotated[str, _go("v1.ManagedFieldsOperationType")] = ""
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
    owner_references: Annotated[list[OwnerReference], _go("[]v1.OwnerReference")] | None = field(
        default=None, name="ownerReferences")
    finalizers: Annotated[list[String], _go("[]string")] | None = None
    managed_fields: Annotated[list[ManagedFieldsEntry], _go("[]v1.ManagedFieldsEntry")] | None = field(
        default=None, name="managedFields")
