"""The removed versions: flavor.kubevirt.io/v1alpha1, instancetype.kubevirt.io/v1alpha1 and v1alpha2.

Three ways old data reaches us, three conversions (KubeVirt v0.56-v1.6 crds.go and pkg/instancetype/compatibility):

1. Objects a user gives in `instancetype.kubevirt.io/v1alpha1|v1alpha2`: the CRDs used
   `conversion.strategy: None`, so only `apiVersion` changes (the JSON names of all fields are
   the same in every version). The API server answered with the version's deprecation warning
   (crds.go, v1.0-v1.5): `deprecation_warning(version, kind)`.
2. Payloads inside old ControllerRevisions: the generated conversion (conversion-gen plus
   v1alpha1/conversion.go, v1alpha2/conversion.go at the parent of 4ab92ca9a3): the data is
   read with the alpha Go types (fields v1beta1 added are dropped), `preferredCPUTopology: ""`
   becomes absent, and the alpha value fields `model`, `dedicatedCPUPlacement`,
   `isolateEmulatorThread` become v1beta1 pointers that are ALWAYS set (`""`, `false`). The
   v0.56/0.57 wrapper `{"apiVersion": "", "spec": <base64 of the spec JSON>}`
   (VirtualMachine{Instancetype,Preference}SpecRevision) is tried first as a preference then as
   an instancetype (strict), giving objects named `old-version-of-preference-object` /
   `old-version-of-instancetype-object`. `convert_revision_data(data)`.
3. The pre-v0.56 flavor API of seed 002: `rewrite_flavor(obj)`.

Public: `convert_to_v1beta1(obj) -> (obj, warnings)` for any of the four kinds in any version
(flavor objects included), `rewrite_flavor`, `none_conversion`, `convert_revision_data`,
`deprecation_warning`, and the alpha Structs.
"""
from __future__ import annotations

import base64
import binascii
import json
from typing import Annotated, Any, ClassVar

import msgspec
from msgspec import field

from instancetype.api import kinds
from instancetype.api import v1beta1 as b
from instancetype.errors import DecodeError, LoadError, UnexpectedKindError
from instancetype.jsonutil import clone

V1ALPHA1 = f"{kinds.GROUP}/v1alpha1"
V1ALPHA2 = f"{kinds.GROUP}/v1alpha2"
FLAVOR_API_VERSION = f"{kinds.FLAVOR_GROUP}/v1alpha1"


# --- alpha shapes (identical in v1alpha1 and v1alpha2 but for volumes) ---------------------------
class CPUInstancetype(b._S):
    go_type: ClassVar[str] = "v1alpha2.CPUInstancetype"
    guest: b.UInt32 = field(default_factory=int)
    model: b.String = field(default_factory=str)
    dedicated_cpu_placement: b.Bool = field(default_factory=bool, name="dedicatedCPUPlacement")
    numa: b.NUMA | None = None
    isolate_emulator_thread: b.Bool = field(default_factory=bool, name="isolateEmulatorThread")
    realtime: b.Realtime | None = None


class MemoryInstancetype(b._S):
    go_type: ClassVar[str] = "v1alpha2.MemoryInstancetype"
    guest: b.Quantity = field(default_factory=lambda: "0")
    hugepages: b.Hugepages | None = None


class VirtualMachineInstancetypeSpec(b._S):
    go_type: ClassVar[str] = "v1alpha2.VirtualMachineInstancetypeSpec"
    cpu: CPUInstancetype = field(default_factory=CPUInstancetype)
    memory: MemoryInstancetype = field(default_factory=MemoryInstancetype)
    gpus: Annotated[list[b.GPU], b._go("[]v1.GPU")] | None = None
    host_devices: Annotated[list[b.HostDevice], b._go("[]v1.HostDevice")] | None = field(default=None, name="hostDevices")
    io_threads_policy: Annotated[str, b._go("v1.IOThreadsPolicy")] | None = field(default=None, name="ioThreadsPolicy")
    launch_security: b.LaunchSecurity | None = field(default=None, name="launchSecurity")


class CPUPreferences(b._S):
    go_type: ClassVar[str] = "v1alpha2.CPUPreferences"
    preferred_cpu_topology: Annotated[str, b._go("v1alpha2.PreferredCPUTopology")] = field(
        default="", name="preferredCPUTopology")


class DevicePreferences(b._S):
    go_type: ClassVar[str] = "v1alpha2.DevicePreferences"
    preferred_autoattach_graphics_device: b.Bool | None = field(default=None, name="preferredAutoattachGraphicsDevice")
    preferred_autoattach_mem_balloon: b.Bool | None = field(default=None, name="preferredAutoattachMemBalloon")
    preferred_autoattach_pod_interface: b.Bool | None = field(default=None, name="preferredAutoattachPodInterface")
    preferred_autoattach_serial_console: b.Bool | None = field(default=None, name="preferredAutoattachSerialConsole")
    preferred_autoattach_input_device: b.Bool | None = field(default=None, name="preferredAutoattachInputDevice")
    preferred_disable_hotplug: b.Bool | None = field(default=None, name="preferredDisableHotplug")
    preferred_virtual_gpu_options: b.VGPUOptions | None = field(default=None, name="preferredVirtualGPUOptions")
    preferred_sound_model: b.String = field(default="", name="preferredSoundModel")
    preferred_use_virtio_transitional: b.Bool | None = field(default=None, name="preferredUseVirtioTransitional")
    preferred_input_bus: Annotated[str, b._go("v1.InputBus")] = field(default="", name="preferredInputBus")
    preferred_input_type: Annotated[str, b._go("v1.InputType")] = field(default="", name="preferredInputType")
    preferred_disk_bus: Annotated[str, b._go("v1.DiskBus")] = field(default="", name="preferredDiskBus")
    preferred_lun_bus: Annotated[str, b._go("v1.DiskBus")] = field(default="", name="preferredLunBus")
    preferred_cdrom_bus: Annotated[str, b._go("v1.DiskBus")] = field(default="", name="preferredCdromBus")
    preferred_disk_dedicated_io_thread: b.Bool | None = field(default=None, name="preferredDiskDedicatedIoThread")
    preferred_disk_cache: Annotated[str, b._go("v1.DriverCache")] = field(default="", name="preferredDiskCache")
    preferred_disk_io: Annotated[str, b._go("v1.DriverIO")] = field(default="", name="preferredDiskIO")
    preferred_disk_block_size: b.BlockSize | None = field(default=None, name="preferredDiskBlockSize")
    preferred_interface_model: b.String = field(default="", name="preferredInterfaceModel")
    preferred_rng: b.Rng | None = field(default=None, name="preferredRng")
    preferred_block_multi_queue: b.Bool | None = field(default=None, name="preferredBlockMultiQueue")
    preferred_network_interface_multi_queue: b.Bool | None = field(
        default=None, name="preferredNetworkInterfaceMultiQueue")
    preferred_tpm: b.TPMDevice | None = field(default=None, name="preferredTPM")


class FirmwarePreferences(b._S):
    go_type: ClassVar[str] = "v1alpha2.FirmwarePreferences"
    preferred_use_bios: b.Bool | None = field(default=None, name="preferredUseBios")
    preferred_use_bios_serial: b.Bool | None = field(default=None, name="preferredUseBiosSerial")
    preferred_use_efi: b.Bool | None = field(default=None, name="preferredUseEfi")
    preferred_use_secure_boot: b.Bool | None = field(default=None, name="preferredUseSecureBoot")


class VirtualMachinePreferenceSpecV1Alpha1(b._S):
    go_type: ClassVar[str] = "v1alpha1.VirtualMachinePreferenceSpec"
    clock: b.ClockPreferences | None = None
    cpu: CPUPreferences | None = None
    devices: DevicePreferences | None = None
    features: b.FeaturePreferences | None = None
    firmware: FirmwarePreferences | None = None
    machine: b.MachinePreferences | None = None


class VirtualMachinePreferenceSpec(VirtualMachinePreferenceSpecV1Alpha1):
    """v1alpha2 added `volumes.preferredStorageClassName`."""
    go_type: ClassVar[str] = "v1alpha2.VirtualMachinePreferenceSpec"
    volumes: b.VolumePreferences | None = None


class VirtualMachineInstancetype(b._S):
    go_type: ClassVar[str] = "v1alpha2.VirtualMachineInstancetype"
    kind: b.String = ""
    api_version: b.String = field(default="", name="apiVersion")
    metadata: b.ObjectMeta | None = None
    spec: VirtualMachineInstancetypeSpec = field(default_factory=VirtualMachineInstancetypeSpec)


class VirtualMachinePreference(b._S):
    go_type: ClassVar[str] = "v1alpha2.VirtualMachinePreference"
    kind: b.String = ""
    api_version: b.String = field(default="", name="apiVersion")
    metadata: b.ObjectMeta | None = None
    spec: VirtualMachinePreferenceSpec = field(default_factory=VirtualMachinePreferenceSpec)


# --- 1. the CRDs' None strategy --------------------------------------------------------------------
def deprecation_warning(version: str, kind: str) -> str:
    """The CRD version's deprecationWarning (crds.go v1.0-v1.5), KubeVirt's spelling kept: the
    cluster instancetype is written `VirtualMachineClusterInstanceTypes`."""
    plural = "VirtualMachineClusterInstanceTypes" if kind == kinds.CLUSTER_INSTANCETYPE else f"{kind}s"
    return f"{kinds.GROUP}/{version} {plural} is now deprecated and will be removed in v1."


def none_conversion(obj: dict[str, Any]) -> dict[str, Any]:
    """`conversion.strategy: None`: a copy with only apiVersion changed to v1beta1."""
    out = clone(obj)
    out["apiVersion"] = kinds.API_VERSION
    return out


# --- 2. ControllerRevision payloads ----------------------------------------------------------------
def _strict_keys(v: Any, cls: type) -> bool:
    """Go's DisallowUnknownFields: every key (exactly or case-insensitively) a field of `cls`."""
    from instancetype.api.godecode import STRUCT, struct_desc

    def ok(x: Any, d: Any) -> bool:
        if d.kind == STRUCT and isinstance(x, dict):
            for k, y in x.items():
                name = k if k in d.fields else d.fold.get(k.lower())
                if name is None or (y is not None and not ok(y, d.fields[name][0])):
                    return False
        elif d.elem is not None and d.elem.kind == STRUCT and isinstance(x, list):
            return all(ok(y, d.elem) for y in x if y is not None)
        return True

    return ok(v, struct_desc(cls))


def _upconvert_instancetype_spec(spec: Any, root: str) -> dict[str, Any]:
    """An alpha instancetype spec -> v1beta1 spec dict (generated conversion semantics)."""
    from instancetype.api.godecode import decode_value

    data = decode_value(spec, VirtualMachineInstancetypeSpec, root, ("spec",))
    out: dict[str, Any] = b.to_dict(msgspec.convert(data, VirtualMachineInstancetypeSpec))
    cpu = out.setdefault("cpu", {})
    # alpha value fields become always-set v1beta1 pointers (Convert_string_To_Pointer_string, ...)
    cpu.setdefault("model", "")
    cpu.setdefault("dedicatedCPUPlacement", False)
    cpu.setdefault("isolateEmulatorThread", False)
    return out


def _upconvert_preference_spec(spec: Any, root: str, cls: type = VirtualMachinePreferenceSpec) -> dict[str, Any]:
    from instancetype.api.godecode import decode_value

    data = decode_value(spec, cls, root, ("spec",))
    out: dict[str, Any] = b.to_dict(msgspec.convert(data, cls))
    cpu = out.get("cpu")
    if cpu is not None and cpu.get("preferredCPUTopology", "") == "":
        cpu.pop("preferredCPUTopology", None)  # "" -> nil
    return out


def _is_spec_revision(data: Any) -> bool:
    return (isinstance(data, dict) and isinstance(data.get("spec"), str)
            and set(data) <= {"apiVersion", "spec"})


def _from_spec_revision(data: dict[str, Any]) -> dict[str, Any]:
    try:
        spec = json.loads(base64.b64decode(data["spec"], validate=True))
    except (binascii.Error, ValueError) as e:
        raise DecodeError(f"failed to decode object in ControllerRevision: {e}") from None
    if _strict_keys(spec, VirtualMachinePreferenceSpecV1Alpha1):
        return {"apiVersion": kinds.API_VERSION, "kind": kinds.PREFERENCE,
                "metadata": {"name": "old-version-of-preference-object"},
                "spec": _upconvert_preference_spec(spec, "VirtualMachinePreferenceSpec",
                                                   VirtualMachinePreferenceSpecV1Alpha1)}
    if _strict_keys(spec, VirtualMachineInstancetypeSpec):
        return {"apiVersion": kinds.API_VERSION, "kind": kinds.INSTANCETYPE,
                "metadata": {"name": "old-version-of-instancetype-object"},
                "spec": _upconvert_instancetype_spec(spec, "VirtualMachineInstancetypeSpec")}
    raise DecodeError("failed to decode object in ControllerRevision: "
                      "neither a v1alpha1 preference nor instancetype spec revision")


def convert_revision_data(data: Any) -> dict[str, Any]:
    """The object stored in a ControllerRevision's `data`, in any past format -> a v1beta1 object.

    v1beta1 objects come back unchanged (a copy); alpha objects go through the generated
    conversion; the v1alpha1 SpecRevision wrapper is unwrapped. Raises DecodeError/QuantityError.
    """
    if _is_spec_revision(data):
        return _from_spec_revision(data)
    if not isinstance(data, dict):
        raise DecodeError("failed to decode object in ControllerRevision: not an object")
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if kind not in kinds.ALL_TYPE_KINDS:
        raise DecodeError(f"unexpected type in ControllerRevision: {kind}")
    if api_version == kinds.API_VERSION:
        return clone(data)
    if api_version not in (V1ALPHA1, V1ALPHA2):
        raise DecodeError(f"failed to decode object in ControllerRevision: no kind \"{kind}\" "
                          f"is registered for version \"{api_version}\"")
    out = clone({k: v for k, v in data.items() if k != "spec"})
    out["apiVersion"] = kinds.API_VERSION
    if kind in kinds.INSTANCETYPE_KINDS:
        out["spec"] = _upconvert_instancetype_spec(data.get("spec") or {}, "VirtualMachineInstancetype")
    else:
        cls = VirtualMachinePreferenceSpec if api_version == V1ALPHA2 else VirtualMachinePreferenceSpecV1Alpha1
        out["spec"] = _upconvert_preference_spec(data.get("spec") or {}, "VirtualMachinePreference", cls)
    return out


# --- 3. the flavor API (seed 002) ------------------------------------------------------------------
FLAVOR_KINDS = kinds.FLAVOR_KINDS   # flavor kind -> instancetype kind
# Matcher kinds are compared lower-cased, singular or plural, as KubeVirt compares kinds.
_FLAVOR_MATCHER_KINDS = {
    "virtualmachineflavor": "VirtualMachineFlavor", "virtualmachineflavors": "VirtualMachineFlavor",
    "virtualmachineclusterflavor": "VirtualMachineClusterFlavor",
    "virtualmachineclusterflavors": "VirtualMachineClusterFlavor",
}


def flavor_warning(old_kind: str, new_kind: str) -> str:
    return f"{FLAVOR_API_VERSION} {old_kind} is deprecated; use {kinds.API_VERSION} {new_kind}"


def _rewrite_matcher(matcher: Any, warnings: list[str]) -> Any:
    if not isinstance(matcher, dict):
        return matcher
    kind = matcher.get("kind")
    old = _FLAVOR_MATCHER_KINDS.get(kind.lower()) if isinstance(kind, str) else None
    if old is not None:
        new = FLAVOR_KINDS[old]
        matcher["kind"] = new
        warnings.append(flavor_warning(old, new))
    return matcher


def rewrite_flavor(obj: Any) -> tuple[Any, list[str]]:
    """Seed 002's names -> the instancetype API: `flavor.kubevirt.io/v1alpha1` flavor and
    preference objects become the v1beta1 kinds; a VirtualMachine's `spec.flavor` becomes
    `spec.instancetype` and matcher kinds naming a flavor kind (any case, singular or plural)
    become the instancetype kinds. Anything else comes back as is (a copy), so names that never
    shipped (seed 002's proposed `VirtualMachineInstanceType`) stay unknown kinds."""
    out = clone(obj)
    warnings: list[str] = []
    if not isinstance(out, dict):
        return out, warnings
    kind = out.get("kind")
    if out.get("apiVersion") == FLAVOR_API_VERSION:
        new = FLAVOR_KINDS.get(kind) if isinstance(kind, str) else None   # (a list kind is unhashable)
        if new is None:
            raise UnexpectedKindError(f'no kind "{kind}" is registered for version "{FLAVOR_API_VERSION}"')
        out["apiVersion"] = kinds.API_VERSION
        out["kind"] = new
        warnings.append(flavor_warning(str(kind), new))
        return out, warnings
    if kind == "VirtualMachine" and isinstance(out.get("spec"), dict):
        spec = out["spec"]
        if "flavor" in spec:
            if spec.get("instancetype") is not None:
                raise LoadError("spec.flavor and spec.instancetype cannot both be set; "
                                "spec.flavor is the deprecated name of spec.instancetype",
                                field="spec.flavor")
            flavor = spec.pop("flavor")
            # keep the key order readable: instancetype where flavor was
            spec["instancetype"] = flavor
            if not (isinstance(flavor, dict) and isinstance(flavor.get("kind"), str)
                    and flavor["kind"].lower() in _FLAVOR_MATCHER_KINDS):
                warnings.append("spec.flavor is deprecated; use spec.instancetype")
        _rewrite_matcher(spec.get("instancetype"), warnings)
    return out, warnings


# --- any version -> v1beta1 -------------------------------------------------------------------------
def convert_to_v1beta1(obj: Any) -> tuple[dict[str, Any], list[str]]:
    """Any of the four kinds in any version (flavor.kubevirt.io/v1alpha1, instancetype v1alpha1,
    v1alpha2, v1beta1, or a v1alpha1 SpecRevision payload) -> (v1beta1 object, warnings).
    VirtualMachines get their flavor names rewritten. Raises UnexpectedKindError/LoadError."""
    if _is_spec_revision(obj):
        return _from_spec_revision(obj), []
    if not isinstance(obj, dict):
        raise LoadError("an object is required", field="")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if api_version == FLAVOR_API_VERSION or kind == "VirtualMachine":
        return rewrite_flavor(obj)
    if kind not in kinds.ALL_TYPE_KINDS:
        raise UnexpectedKindError(f"unknown kind {kind!r}: expected one of " + ", ".join(kinds.ALL_TYPE_KINDS))
    if api_version == kinds.API_VERSION:
        return clone(obj), []
    if api_version in (V1ALPHA1, V1ALPHA2):
        return none_conversion(obj), [deprecation_warning(api_version.rsplit("/", 1)[1], kind)]
    raise UnexpectedKindError(f'no matches for kind "{kind}" in version "{api_version}"')


__all__ = [
    "convert_to_v1beta1", "rewrite_flavor", "none_conversion", "convert_revision_data",
    "deprecation_warning", "flavor_warning", "VirtualMachineInstancetypeSpec",
    "VirtualMachinePreferenceSpec", "VirtualMachinePreferenceSpecV1Alpha1",
]
