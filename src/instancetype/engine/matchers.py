"""The VM as the engine reads it: its shape, its quantities, its matchers.

    load_vm(vm) -> dict                 a private copy, its shape checked (DecodeError)
    object_index(objects, namespace)    the objects that exist, their names checked (LoadError)
    normalize_vm(vm) / normalize_vmi_spec(spec)
                                        quantities in Kubernetes canonical form, in place
    check_matcher_update(old, new)      UPDATE: a matcher renamed with its revisionName kept
    check_matcher_shapes(vm)            name or inferFromVolume, not both, policy Reject/Ignore

KubeVirt decodes the VM into typed Go structs before any of its webhooks run;
`load_vm` stands for that step for the fields the engine reads, so a VM whose
`spec.instancetype` is a string, or whose volumes are not objects, fails with
a decode error naming the field instead of failing deep inside a rule.

The matcher rules are `pkg/instancetype/webhooks/vm/mutator.go`
(validateMatcherUpdate, validateInstancetypeMatcher/validatePreferenceMatcher).
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from instancetype.jsonutil import clone
from instancetype.engine.objects import ObjectIndex
from instancetype.engine.results import Cause
from instancetype.engine.spec import canonical_quantity
from instancetype.errors import DecodeError, LoadError

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
        from instancetype.engine.godecode import number_literal

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


def _compile(schema: Any, path: str):
    """A copier for `schema` at `path`, built once: it deep-copies a value while checking the
    shape of the fields the schema lists, in one walk (as cheap as a plain clone)."""
    if isinstance(schema, dict):
        fields = {key: _compile(sub, f"{path}.{key}" if path else key) for key, sub in schema.items()}
        get_field = fields.get

        def copy_struct(value: Any) -> dict:
            if type(value) is not dict:
                if not isinstance(value, Mapping):
                    raise _bad(value, path, schema)
            out = {}
            for key, x in value.items():
                if x is None:
                    out[key] = None
                    continue
                copy = get_field(key)
                if copy is not None:
                    out[key] = copy(x)
                elif type(x) is dict or type(x) is list:
                    out[key] = clone(x)
                else:
                    out[key] = x
            return out
        return copy_struct
    if isinstance(schema, list):
        item = _compile(schema[0], path)
        # Go decodes a null item of a struct slice as the zero struct.
        null_item = {} if isinstance(schema[0], dict) else None

        def copy_slice(value: Any) -> list:
            if type(value) is not list:
                raise _bad(value, path, schema)
            return [(null_item if null_item is None else {}) if x is None else item(x) for x in value]
        return copy_slice
    if schema is MAP:
        def copy_map(value: Any) -> dict:
            if not isinstance(value, Mapping):
                raise _bad(value, path, schema)
            return clone(value)
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


def load_vm(vm: Any) -> dict:
    """A private deep copy of `vm` with `spec` present, after checking the fields the engine reads.

    Raises `DecodeError` (with Go's json text naming the field) for a wrong shape.
    """
    if not isinstance(vm, Mapping):
        raise DecodeError(f"json: cannot unmarshal {_json_type(vm)} into Go value of type v1.VirtualMachine")
    out = _copy_vm(vm)
    if not isinstance(out.get("spec"), dict):
        out["spec"] = {}
    return out


# --- quantities in canonical form (as KubeVirt prints a decoded VM) ---------------------------
def _canon_map(m: Any, path: str) -> None:
    if isinstance(m, dict):
        for k, v in m.items():
            if v is not None:
                m[k] = canonical_quantity(v, f"{path}.{k}")


def _canon_key(obj: Any, key: str, path: str) -> None:
    if isinstance(obj, dict) and obj.get(key) is not None:
        obj[key] = canonical_quantity(obj[key], f"{path}.{key}")


def normalize_vmi_spec(spec: Any, path: str = "spec") -> None:
    """Rewrite the quantities of a VMI spec (or a VM template spec) in canonical form, in place."""
    if not isinstance(spec, dict):
        return
    dom = spec.get("domain")
    if isinstance(dom, dict):
        mem = dom.get("memory")
        if isinstance(mem, dict):
            _canon_key(mem, "guest", f"{path}.domain.memory")
            _canon_key(mem, "maxGuest", f"{path}.domain.memory")
            _canon_key(mem.get("reservedOverhead"), "addedOverhead", f"{path}.domain.memory.reservedOverhead")
        res = dom.get("resources")
        if isinstance(res, dict):
            _canon_map(res.get("requests"), f"{path}.domain.resources.requests")
            _canon_map(res.get("limits"), f"{path}.domain.resources.limits")
    vols = spec.get("volumes")
    if isinstance(vols, list):
        for vol in vols:
            if not isinstance(vol, dict):
                continue
            _canon_key(vol.get("emptyDisk"), "capacity", f"{path}.volumes.emptyDisk")
            _canon_key(vol.get("hostDisk"), "capacity", f"{path}.volumes.hostDisk")
            fields = (vol.get("downwardAPI") or {}).get("fields") if isinstance(vol.get("downwardAPI"), dict) else None
            if isinstance(fields, list):
                for f in fields:
                    if isinstance(f, dict):
                        _canon_key(f.get("resourceFieldRef"), "divisor", f"{path}.volumes.downwardAPI.fields")


def normalize_vm(vm: dict) -> dict:
    """Rewrite the quantities of a loaded VM in canonical form, in place; returns `vm`."""
    spec = vm.get("spec")
    if not isinstance(spec, dict):
        return vm
    for i, dvt in enumerate(data_volume_templates(spec)):
        dspec = dvt.get("spec")
        if not isinstance(dspec, dict):
            continue
        for claim in ("pvc", "storage"):
            res = dspec.get(claim, {}).get("resources") if isinstance(dspec.get(claim), dict) else None
            if isinstance(res, dict):
                base = f"spec.dataVolumeTemplates[{i}].spec.{claim}.resources"
                _canon_map(res.get("requests"), f"{base}.requests")
                _canon_map(res.get("limits"), f"{base}.limits")
    normalize_vmi_spec(template_spec(spec), "spec.template.spec")
    return vm


def object_index(objects: Any, default_namespace: str, extra: Iterable[Mapping] = ()) -> ObjectIndex:
    """An ObjectIndex of `objects` (plus `extra`), after checking the names it keys on are strings
    (LoadError). An `ObjectSource` (the store) is asked on demand instead of listed."""
    if hasattr(objects, "lookup"):
        index = ObjectIndex(objects, default_namespace)
        for i, obj in enumerate(object_list(list(extra))):
            index.add(obj, index=i)
        return index
    return ObjectIndex(object_list(objects) + list(extra), default_namespace)


def object_list(objects: Any) -> list:
    """`objects` as a list, the names an ObjectIndex keys on checked to be strings (LoadError)."""
    if objects is None:
        objects = ()
    elif isinstance(objects, (str, bytes, Mapping)) or not isinstance(objects, Iterable):
        raise LoadError("objects: must be a list of objects")
    objects = list(objects)
    for i, obj in enumerate(objects):
        meta = obj.get("metadata") if isinstance(obj, Mapping) else None
        if isinstance(meta, Mapping):
            for key in ("name", "namespace"):
                if meta.get(key) is not None and not isinstance(meta[key], str):
                    raise LoadError(f"objects[{i}]: metadata.{key}: must be a string")
    return objects


def namespace(vm: dict) -> str:
    meta = vm.get("metadata")
    ns = meta.get("namespace") if isinstance(meta, dict) else None
    return ns or "default"


def template_spec(vm_spec: dict, *, create: bool = False) -> dict | None:
    """`spec.template.spec` of a loaded VM's spec; created (empty) when asked."""
    template = vm_spec.get("template")
    if not isinstance(template, dict):
        if not create:
            return None
        template = vm_spec["template"] = {}
    spec = template.get("spec")
    if not isinstance(spec, dict):
        if not create:
            return None
        spec = template["spec"] = {}
    return spec


def volumes(vm_spec: dict) -> list[dict]:
    tspec = template_spec(vm_spec)
    vols = tspec.get("volumes") if tspec else None
    return [v for v in vols if isinstance(v, dict)] if isinstance(vols, list) else []


def data_volume_templates(vm_spec: dict) -> list[dict]:
    dvts = vm_spec.get("dataVolumeTemplates")
    return [d for d in dvts if isinstance(d, dict)] if isinstance(dvts, list) else []


def domain(vm_spec: dict) -> dict | None:
    tspec = template_spec(vm_spec)
    dom = tspec.get("domain") if tspec else None
    return dom if isinstance(dom, dict) else None


# --- matcher rules -----------------------------------------------------------------------------
_NAMES = {"instancetype": "InstancetypeMatcher", "preference": "PreferenceMatcher"}
_POLICIES = ("Reject", "Ignore")
RENAME_KEEPS_REVISION = "the Matcher Name has been updated without updating the RevisionName"


def _matcher(vm: Mapping | None, key: str) -> dict | None:
    if not isinstance(vm, Mapping):
        return None
    spec = vm.get("spec")
    m = spec.get(key) if isinstance(spec, Mapping) else None
    return m if isinstance(m, dict) else None


def check_matcher_update(old: Mapping | None, new: Mapping) -> list[Cause]:
    """UPDATE rule (KubeVirt's validateMatcherUpdate), instancetype then preference.

    Rejected only when both matchers exist, the old one had a non-empty revisionName,
    the name changed and the revisionName did not. Adding or removing a matcher,
    changing its kind, or changing name and revisionName together are fine.
    """
    for key in ("instancetype", "preference"):
        o, n = _matcher(old, key), _matcher(new, key)
        if o is None or n is None:
            continue
        old_rev = o.get("revisionName") or ""
        if old_rev and (o.get("name") or "") != (n.get("name") or "") and old_rev == (n.get("revisionName") or ""):
            return [Cause("FieldValueInvalid", RENAME_KEEPS_REVISION, f"spec.{key}.revisionName")]
    return []


def _matcher_causes(m: dict, key: str) -> list[Cause]:
    causes: list[Cause] = []
    base = f"spec.{key}"
    infer_from = m.get("inferFromVolume") or ""
    if not (m.get("name") or "") and not infer_from:
        causes.append(Cause("FieldValueNotFound",
                            f"Either Name or InferFromVolume should be provided within the {_NAMES[key]}", base))
    if infer_from:
        if m.get("name"):
            causes.append(Cause("FieldValueNotSupported",
                                "Name already set, should be cleared before setting inferFromVolume",
                                f"{base}.name"))
        if m.get("kind"):
            causes.append(Cause("FieldValueNotSupported",
                                "Kind already set, should be cleared before setting inferFromVolume",
                                f"{base}.kind"))
    policy = m.get("inferFromVolumeFailurePolicy")
    if policy is not None and policy not in _POLICIES:
        causes.append(Cause("FieldValueInvalid", f"Invalid value '{policy}' for InferFromVolumeFailurePolicy",
                            f"{base}.inferFromVolumeFailurePolicy"))
    return causes


def check_matcher_shapes(vm: Mapping) -> list[Cause]:
    """The matchers' shape (KubeVirt's validateInstancetypeMatcher / validatePreferenceMatcher).

    The instancetype matcher first; when it has causes the preference is not looked at.
    Kinds are not checked here (an unknown kind fails later, at lookup).
    """
    for key in ("instancetype", "preference"):
        m = _matcher(vm, key)
        if m is None:
            continue
        causes = _matcher_causes(m, key)
        if causes:
            return causes
    return []
