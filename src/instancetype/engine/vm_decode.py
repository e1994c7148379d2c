"""The VM as KubeVirt's Go decoder reads it: its shape checked while it is copied.

    load_vm(vm) -> dict                 a private copy, its shape checked (DecodeError)

KubeVirt decodes the VM into typed Go structs before any of its webhooks run;
`load_vm` stands for that step for the fields the engine reads, so a VM whose
`spec.instancetype` is a string, or whose volumes are not objects, fails with
a decode error naming the field instead of failing deep inside a rule.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Annotated, Any

import msgspec

from instancetype.engine.jsondata import copy_json
from instancetype.errors import DecodeError

# msgspec.field's stub types `field(default=None)` as None: typed Any here, as a compiled build
# (mypyc checks at run time what the stubs promise) must take the Field it returns.
_struct_field: Any = msgspec.field

# --- the VM's shape ----------------------------------------------------------------------------
# A schema is a Python type (str, int, bool), a dict of child schemas (a Go struct: an object
# whose listed fields have those shapes; other fields are not looked at), MAP (a map[string]x:
# any object), or a one-item list [schema] (a Go slice of that).
MAP = "map"
UINT32 = "uint32"   # a Go uint32 (CPU topology counts): an integer in 0..4294967295
_MATCHER = {"name": str, "kind": str, "revisionName": str, "inferFromVolume": str,
            "inferFromVolumeFailurePolicy": str}
_OBJECT_META = {"name": str, "namespace": str, "uid": str, "generation": int, "labels": MAP,
                "annotations": MAP, "finalizers": [str]}
_NAMED = {"name": str}
_TARGET = {"bus": str}
_DISK = {"name": str, "disk": _TARGET, "cdrom": {"bus": str, "tray": str, "readonly": bool}, "lun": _TARGET,
         "blockSize": {"matchVolume": MAP, "custom": MAP}}
_DEVICES = {
    "disks": [_DISK], "filesystems": [_NAMED], "interfaces": [_NAMED], "inputs": [
        {"name": str, "bus": str, "type": str}],
    "gpus": [_NAMED], "hostDevices": [_NAMED], "watchdog": {"name": str, "i6300esb": MAP, "diag288": MAP},
    "autoattachPodInterface": bool, "autoattachInputDevice": bool, "autoattachGraphicsDevice": bool,
    "autoattachMemBalloon": bool, "autoattachSerialConsole": bool, "autoattachVSOCK": bool,
}
_STATE = MAP   # a FeatureState and its relatives: `enabled` and friends
_DOMAIN = {
    "cpu": {"sockets": UINT32, "cores": UINT32, "threads": UINT32, "maxSockets": UINT32, "model": str,
            "dedicatedCpuPlacement": bool, "isolateEmulatorThread": bool, "numa": MAP, "realtime": MAP,
            "features": [{"name": str, "policy": str}]},
    "memory": {"hugepages": {"pageSize": str}, "reservedOverhead": MAP},
    "resources": {"requests": MAP, "limits": MAP}, "machine": {"type": str},
    "firmware": {"uuid": str, "bootloader": {"efi": MAP, "bios": MAP}},
    "features": {"acpi": _STATE, "apic": _STATE, "smm": _STATE, "pvspinlock": _STATE, "kvm": MAP,
                 "hyperv": {k: _STATE for k in ("relaxed", "vapic", "vpindex", "runtime", "synic", "synictimer",
                                                "reset", "vendorid", "frequencies", "reenlightenment",
                                                "tlbflush", "ipi", "evmcs", "spinlocks")}},
    "devices": _DEVICES, "clock": {"timer": {k: _STATE for k in ("hpet", "kvm", "pit", "rtc", "hyperv")}},
    "launchSecurity": MAP, "ioThreads": MAP, "ioThreadsPolicy": str,
}
_VOLUME = {"name": str, "containerDisk": {"image": str, "imagePullPolicy": str},
           "persistentVolumeClaim": {"claimName": str}, "dataVolume": {"name": str},
           "emptyDisk": MAP, "hostDisk": MAP, "downwardAPI": {"fields": [{"resourceFieldRef": MAP}]}}
_TEMPLATE_SPEC = {
    "architecture": str, "domain": _DOMAIN, "volumes": [_VOLUME], "networks": [_NAMED],
    "nodeSelector": MAP, "schedulerName": str, "evictionStrategy": str, "hostname": str, "subdomain": str,
    "affinity": MAP, "tolerations": [MAP], "readinessProbe": MAP, "livenessProbe": MAP,
    "terminationGracePeriodSeconds": int,
}
_DV_CLAIM = {"storageClassName": str, "resources": {"requests": MAP, "limits": MAP}}
_VM = {
    "apiVersion": str, "kind": str, "metadata": _OBJECT_META, "status": MAP,
    "spec": {
        "instancetype": _MATCHER, "preference": _MATCHER, "runStrategy": str,
        "dataVolumeTemplates": [{"metadata": _OBJECT_META, "spec": {
            "pvc": _DV_CLAIM, "storage": _DV_CLAIM,
            "source": {"pvc": {"name": str, "namespace": str}, "snapshot": {"name": str, "namespace": str}},
            "sourceRef": {"kind": str, "name": str, "namespace": str}}}],
        "template": {"metadata": _OBJECT_META, "spec": _TEMPLATE_SPEC},
    },
}
_GO_TYPES = {str: "string", int: "int64", bool: "bool", UINT32: "uint32"}


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        from instancetype.api.godecode import number_literal

        return f"number {number_literal(v)}"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _go_type(schema: Any) -> str:
    if isinstance(schema, list):
        return "[]" + _go_type(schema[0])
    if schema is MAP:
        return "map[string]interface {}"
    if isinstance(schema, dict):
        return "struct"
    return _GO_TYPES[schema]


def _bad(value: Any, path: str, schema: Any) -> DecodeError:
    what = _json_type(value)
    if what.startswith("number") and schema not in (int, UINT32):
        what = "number"     # Go names the literal only when a number does not fit a number field
    return DecodeError(f"json: cannot unmarshal {what} into Go struct field "
                       f"VirtualMachine.{path} of type {_go_type(schema)}")


def _compile(schema: Any, path: str) -> Callable[[Any], Any]:
    """A copier for `schema` at `path`, built once: it deep-copies a value while checking the
    shape of the fields the schema lists, in one walk (as cheap as a plain clone)."""
    if isinstance(schema, dict):
        fields = {key: _compile(sub, f"{path}.{key}" if path else key) for key, sub in schema.items()}
        get_field = fields.get

        def copy_struct(value: Any) -> dict[str, Any]:
            if type(value) is not dict:
                if not isinstance(value, Mapping):
                    raise _bad(value, path, schema)
            out: dict[str, Any] = {}
            for key, x in value.items():
                if x is None:
                    out[key] = None
                    continue
                copy = get_field(key)
                if copy is not None:
                    out[key] = copy(x)
                elif type(x) is dict or type(x) is list:
                    out[key] = copy_json(x)
                else:
                    out[key] = x
            return out
        return copy_struct
    if isinstance(schema, list):
        item = _compile(schema[0], path)
        # Go decodes a null item of a struct slice as the zero struct.
        null_item: dict[str, Any] | None = {} if isinstance(schema[0], dict) else None

        def copy_slice(value: Any) -> list[Any]:
            if type(value) is not list:
                raise _bad(value, path, schema)
            return [(null_item if null_item is None else {}) if x is None else item(x) for x in value]
        return copy_slice
    if schema is MAP:
        def copy_map(value: Any) -> dict[str, Any]:
            if not isinstance(value, Mapping):
                raise _bad(value, path, schema)
            return copy_json(value if type(value) is dict else dict(value))
        return copy_map
    if schema is UINT32:
        def copy_uint32(value: Any) -> Any:
            if type(value) is not int:
                raise _bad(value, path, schema)
            if not 0 <= value <= 0xFFFFFFFF:
                raise DecodeError(f"json: cannot unmarshal number {value} into Go struct field "
                                  f"VirtualMachine.{path} of type uint32")
            return value
        return copy_uint32
    if schema is int:
        def copy_int(value: Any) -> Any:
            # Go's decoder takes only an integer literal into an integer field: 3.0 is refused
            # ("cannot unmarshal number 3.0 into ... of type int64"), as are bools and strings.
            if type(value) is not int:
                raise _bad(value, path, schema)
            return value
        return copy_int

    def copy_scalar(value: Any) -> Any:
        if not isinstance(value, schema):
            raise _bad(value, path, schema)
        return value
    return copy_scalar


_copy_vm = _compile(_VM, "")


# --- the same shape checked in C: the hot path of a well-formed VM --------------------------------
# msgspec Structs built from the schema above (every field optional, unknown fields ignored, a
# null struct-slice item refused so the copier makes it Go's zero struct) confirm a well-formed VM
# about 3x faster than the copier walks it; the copy is then a msgpack round trip. A VM msgspec refuses
# goes through the copier, which names the field. msgspec takes a tuple for a list (its JSON form)
# where the copier refuses one: only a Python caller can hold a tuple; every driver hands the
# engine decoded JSON.
def _struct_type(schema: Any, name: str) -> Any:
    if isinstance(schema, dict):
        fields = [(f"f{i}", _struct_type(sub, f"{name}_{key}") | None, _struct_field(default=None, name=key))
                  for i, (key, sub) in enumerate(schema.items())]
        return msgspec.defstruct(name, fields, kw_only=True)
    if isinstance(schema, list):
        return list[_struct_type(schema[0], name)]      # type: ignore[misc]  # (a runtime type)
    if schema is MAP:
        return dict[str, Any]
    if schema is UINT32:
        return Annotated[int, msgspec.Meta(ge=0, le=0xFFFFFFFF)]
    return schema


@lru_cache(maxsize=1)
def _vm_struct() -> Any:
    return _struct_type(_VM, "DecodedVM")


def warm_up() -> None:
    """Build the C paths' msgspec types and use each once, before any thread can.

    msgspec fills a Struct type's decoding information on its first use, and two threads using a
    fresh type at once crashed the process (SIGSEGV: the controller's workers starting their first
    VMs together, serve's admission pool admitting its first VMs together). A driver that calls
    the engine from several threads calls this first, from one thread (`controller.runner`,
    `webhook.workers`); a single-threaded caller needs nothing (the first call warms up)."""
    from instancetype.engine.vm_validation.schema import _fast_root

    for root in (_vm_struct(), _fast_root()):
        if root is not None:
            try:
                msgspec.convert({}, root)
            except msgspec.ValidationError:
                pass        # a required field missing: the type information is built all the same


def _well_formed(vm: Any) -> bool:
    try:
        msgspec.convert(vm, _vm_struct())
    except (msgspec.ValidationError, RecursionError, TypeError, ValueError, OverflowError):
        return False
    return True


_PACK = msgspec.msgpack.Encoder().encode
_UNPACK = msgspec.msgpack.Decoder().decode


def _plain_copy(vm: dict[str, Any]) -> dict[str, Any] | None:
    """A msgpack round trip of `vm`, or None when it holds what msgpack cannot (then the copier
    copies it: a map given as another Mapping becomes a dict there)."""
    try:
        out: dict[str, Any] = _UNPACK(_PACK(vm))
    except (TypeError, ValueError, OverflowError, msgspec.MsgspecError):
        return None
    return out


def load_vm(vm: Any) -> dict[str, Any]:
    """A private deep copy of `vm` with `spec` present, after checking the fields the engine reads.

    Raises `DecodeError` (with Go's json text naming the field) for a wrong shape.
    """
    if type(vm) is not dict and not isinstance(vm, Mapping):
        raise DecodeError(f"json: cannot unmarshal {_json_type(vm)} into Go value of type v1.VirtualMachine")
    out: dict[str, Any] | None = _plain_copy(vm) if type(vm) is dict and _well_formed(vm) else None
    if out is None:
        out = _copy_vm(vm)
    if not isinstance(out.get("spec"), dict):
        out["spec"] = {}
    return out


def load_schema_checked_vm(vm: dict[str, Any]) -> dict[str, Any]:
    """`load_vm` for a VM that passed the VirtualMachine schema check exactly as Go decodes it
    (schema.check_vm_schema_shaped): the schema has checked every field's type, so a plain
    copy is its decoded form once the uint32 CPU counts are in range (else `load_vm` says why)."""
    out = copy_json(vm)
    cpu = (((out["spec"].get("template") or {}).get("spec") or {}).get("domain") or {}).get("cpu")
    if cpu:
        for key in ("sockets", "cores", "threads", "maxSockets"):
            v = cpu.get(key)
            if v is not None and not 0 <= v <= 0xFFFFFFFF:
                return load_vm(vm)
    return out
