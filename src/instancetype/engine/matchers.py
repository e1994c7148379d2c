"""The VM's matchers (`spec.instancetype`, `spec.preference`) and the VM shape around them.

    load_vm(vm) -> dict                 a private copy, its shape checked (DecodeError)
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

from typing import Any, Mapping

from instancetype import jsonutil
from instancetype.engine.results import Cause
from instancetype.errors import DecodeError

# --- the VM's shape ----------------------------------------------------------------------------
# A schema is a Python type (str, int, bool), a dict of child schemas (a Go struct: an object
# whose listed fields have those shapes; other fields are not looked at), MAP (a map[string]x:
# any object), or a one-item list [schema] (a Go slice of that).
MAP = "map"
_MATCHER = {"name": str, "kind": str, "revisionName": str, "inferFromVolume": str,
            "inferFromVolumeFailurePolicy": str}
_OBJECT_META = {"name": str, "namespace": str, "uid": str, "generation": int, "labels": MAP,
                "annotations": MAP}
_NAMED = {"name": str}
_DEVICES = {
    "disks": [_NAMED], "filesystems": [_NAMED], "interfaces": [_NAMED], "inputs": [_NAMED],
    "gpus": [_NAMED], "hostDevices": [_NAMED],
    "autoattachPodInterface": bool, "autoattachInputDevice": bool, "autoattachGraphicsDevice": bool,
    "autoattachMemBalloon": bool, "autoattachSerialConsole": bool, "autoattachVSOCK": bool,
}
_DOMAIN = {
    "cpu": {"sockets": int, "cores": int, "threads": int, "maxSockets": int, "model": str},
    "memory": MAP, "resources": {"requests": MAP, "limits": MAP}, "machine": {"type": str},
    "firmware": {"uuid": str}, "features": MAP, "devices": _DEVICES, "clock": MAP,
}
_TEMPLATE_SPEC = {
    "architecture": str, "domain": _DOMAIN, "volumes": [_NAMED], "networks": [_NAMED],
    "nodeSelector": MAP, "schedulerName": str,
}
_VM = {
    "apiVersion": str, "kind": str, "metadata": _OBJECT_META, "status": MAP,
    "spec": {
        "instancetype": _MATCHER, "preference": _MATCHER, "runStrategy": str,
        "dataVolumeTemplates": [{"metadata": _OBJECT_META, "spec": {
            "pvc": MAP, "storage": MAP, "source": MAP, "sourceRef": MAP}}],
        "template": {"metadata": _OBJECT_META, "spec": _TEMPLATE_SPEC},
    },
}
_GO_TYPES = {str: "string", int: "int64", bool: "bool"}


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return f"number {v}"
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
    return DecodeError(f"json: cannot unmarshal {_json_type(value)} into Go struct field "
                       f"VirtualMachine.{path} of type {_go_type(schema)}")


def _check(value: Any, schema: Any, path: str) -> None:
    if value is None:
        return
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise _bad(value, path, schema)
        for key, sub in schema.items():
            if key in value:
                _check(value[key], sub, f"{path}.{key}" if path else key)
    elif isinstance(schema, list):
        if not isinstance(value, list):
            raise _bad(value, path, schema)
        for item in value:
            _check(item, schema[0], path)
    elif schema is MAP:
        if not isinstance(value, dict):
            raise _bad(value, path, schema)
    elif schema is int:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise _bad(value, path, schema)
    elif not isinstance(value, schema):
        raise _bad(value, path, schema)


def load_vm(vm: Any) -> dict:
    """A private deep copy of `vm` with `spec` present, after checking the fields the engine reads.

    Raises `DecodeError` (with Go's json text naming the field) for a wrong shape.
    """
    if not isinstance(vm, Mapping):
        raise DecodeError(f"json: cannot unmarshal {_json_type(vm)} into Go value of type v1.VirtualMachine")
    _check(vm, _VM, "")
    out = jsonutil.clone(vm)
    if not isinstance(out.get("spec"), dict):
        out["spec"] = {}
    return out


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
