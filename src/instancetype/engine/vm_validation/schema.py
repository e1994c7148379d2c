"""The VirtualMachine schema check (KubeVirt pkg/util/webhooks ValidateSchema, run first by both
VM webhooks): the raw object against the VirtualMachine OpenAPI schema.

    check_vm_schema(vm) -> list[Cause]      causes with a message only, as KubeVirt answers them

The schema comes from `instancetype.api.kubevirt_types` (package data
`api/schemas/kubevirt_types.json`: every field of KubeVirt's VirtualMachine types, its Go type,
whether it is a pointer, whether it is omitempty); the same source cluster mode's
VirtualMachine CRD is to be generated from. The rules, as kube-openapi's
validator words them (paths are dotted field names, list indices left out):

* a field the type does not have: `<path> in body is a forbidden property`;
* a required field missing (one without `omitempty`, but for NOT_REQUIRED):
  `<path> in body is required`;
* a value of the wrong JSON type: `<path> in body must be of type <type>: "<got>"`;
* a Kubernetes enum value not listed: `<path> in body should be one of [<values, sorted>]`.

Object metadata may hold fields of its own (KubeVirt's schema leaves ObjectMeta open; the
types of the fields it has are checked), int-or-string
fields take an integer or a string, and `null` counts as absent.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal, cast

import msgspec

from instancetype.api.kubevirt_types import NOT_REQUIRED, kubevirt_types
from instancetype.engine.results import Cause

# msgspec.field's stub types `field(default=None)` as None: typed Any here, as a compiled build
# (mypyc checks at run time what the stubs promise) must take the Field it returns.
_struct_field: Any = msgspec.field

ROOT = "kv.VirtualMachine"
# metav1.FieldsV1 (managedFields' field sets) is opaque JSON (`x-kubernetes-preserve-unknown-fields`):
# every object the API server admits carries it, with keys such as `f:spec`.
OPAQUE_STRUCTS = frozenset({"meta.FieldsV1"})
OPEN_STRUCTS = frozenset({"meta.ObjectMeta"}) | OPAQUE_STRUCTS     # unknown keys allowed

# Kubernetes enums (+enum) that the OpenAPI schema carries, by struct and field.
ENUMS: dict[tuple[str, str], tuple[str, ...]] = {
    ("k8s.NodeSelectorRequirement", "operator"): ("DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"),
    ("k8s.Toleration", "operator"): ("Equal", "Exists"),
    ("k8s.Toleration", "effect"): ("NoExecute", "NoSchedule", "PreferNoSchedule"),
    ("k8s.TopologySpreadConstraint", "whenUnsatisfiable"): ("DoNotSchedule", "ScheduleAnyway"),
    ("k8s.TopologySpreadConstraint", "nodeAffinityPolicy"): ("Honor", "Ignore"),
    ("k8s.TopologySpreadConstraint", "nodeTaintsPolicy"): ("Honor", "Ignore"),
    ("k8s.HTTPGetAction", "scheme"): ("HTTP", "HTTPS"),
    ("k8s.PersistentVolumeClaimSpec", "volumeMode"): ("Block", "Filesystem"),
    ("kv.VirtualMachineInstanceSpec", "dnsPolicy"): ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"),
}

# A field's path is a string, or (parent path, key) pairs joined only for a cause (`_text`).
Path = Any
Checker = Callable[[Any, Path, list[Any]], None]


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "integer" if v.is_integer() else "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object" if isinstance(v, dict) else "null"


def _text(path: Any) -> str:
    """A field path as printed. The checkers pass a nested field's path as (parent, key) pairs,
    joined only here, when a cause is built: a conforming VM builds no path text at all."""
    if type(path) is str:
        return path
    keys = []
    while type(path) is tuple:
        path, key = path
        keys.append(key)
    if path:
        keys.append(path)
    return ".".join(reversed(keys))


def _wrong(path: Any, want: str, v: Any) -> Cause:
    return Cause("", f'{_text(path)} in body must be of type {want}: "{_json_type(v)}"', "")


class _Compiler:
    """Builds, per struct, a checker `(value, path, out) -> None` that appends causes.

    Scalars are checked inline by their Python types; only structs, slices and maps recurse
    (and only they build the path of the field)."""

    def __init__(self, types: dict[str, Any], *, open_all: bool = False):
        self.types = types
        self.open_all = open_all        # unknown fields allowed everywhere (the status schema)
        self.structs: dict[str, Checker] = {}

    def struct(self, name: str) -> Checker:
        checker = self.structs.get(name)
        if checker is not None:
            return checker
        spec = self.types.get(name, {})
        # key -> (accepted Python types, schema type name) for a scalar checked inline, else the
        # field's checker: one lookup per key
        fields: dict[str, tuple[Any, ...] | Checker] = {}
        required = tuple(f for f, t in spec.items() if not t[2] and (name, f) not in NOT_REQUIRED)
        open_struct = self.open_all or name in OPEN_STRUCTS

        def check_struct(v: Any, path: Path, out: list[Any]) -> None:
            if type(v) is not dict:
                out.append(_wrong(path, "object", v))
                return
            for key in required:
                if v.get(key) is None:
                    out.append(Cause("", f"{_text((path, key))} in body is required", ""))
            for key, x in v.items():
                if x is None:
                    continue
                field = fields.get(key)     # (accepted Python types, schema type name) or a checker
                if field is None:
                    if not open_struct:
                        out.append(Cause("", f"{_text((path, key))} in body is a forbidden property", ""))
                elif type(field) is tuple:
                    if type(x) not in field[0]:
                        if field[1] != "integer" or not (type(x) is float and x.is_integer()):
                            out.append(_wrong((path, key), field[1], x))
                        else:
                            out.append(NOT_GO_SHAPED)     # 3.0: the schema's integer, not Go's
                else:
                    cast(Checker, field)(x, (path, key), out)

        self.structs[name] = check_struct
        for f, t in spec.items():
            kind = t[0]
            if (name, f) not in ENUMS and kind in _SCALAR_TYPES:
                fields[f] = _SCALAR_TYPES[kind]
            else:
                fields[f] = self.field(kind, name, f)
        return check_struct

    def field(self, kind: str, struct: str, name: str) -> Checker:
        enum = ENUMS.get((struct, name))
        if enum is not None:
            return _enum(enum)
        if struct == "k8s.PersistentVolumeClaimSpec" and name == "accessModes":
            return self.slice_of(_enum(("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")))
        return self.of(kind)

    def of(self, kind: str) -> Checker:
        if kind.startswith("struct:"):
            # registered before its fields are built, so recursive types resolve
            return self.struct(kind[7:])
        if kind.startswith("slice:"):
            return self.slice_of(self.of(kind[6:]))
        if kind.startswith("map:"):
            return _map_of(self.of(kind[4:]))
        return _SCALARS.get(kind, _any)

    @staticmethod
    def slice_of(item: Checker) -> Checker:
        def check_slice(v: Any, path: Path, out: list[Any]) -> None:
            if type(v) is not list:
                out.append(_wrong(path, "array", v))
                return
            for x in v:
                if x is not None:
                    item(x, path, out)
                else:
                    out.append(NOT_GO_SHAPED)     # a null item: Go decodes it as the zero value
        return check_slice


def _map_of(value: Checker) -> Checker:
    def check_map(v: Any, path: Path, out: list[Any]) -> None:
        if type(v) is not dict:
            out.append(_wrong(path, "object", v))
            return
        for k, x in v.items():
            if x is not None:
                value(x, (path, k), out)
    return check_map


def _enum(values: tuple[str, ...]) -> Checker:
    def check_enum(v: Any, path: Path, out: list[Any]) -> None:
        if type(v) is not str:
            out.append(_wrong(path, "string", v))
        elif v not in values:
            out.append(Cause("", f"{_text(path)} in body should be one of [{' '.join(values)}]", ""))
    return check_enum


def _scalar(want: str, ok: Callable[[Any], bool]) -> Checker:
    def check_scalar(v: Any, path: Path, out: list[Any]) -> None:
        if not ok(v):
            out.append(_wrong(path, want, v))
    return check_scalar


def _any(v: Any, path: Path, out: list[Any]) -> None:
    return None


def _int_ok(v: Any) -> bool:
    return (type(v) is int) or (type(v) is float and v.is_integer())


def _check_int(v: Any, path: Path, out: list[Any]) -> None:
    if type(v) is not int:
        out.append(NOT_GO_SHAPED if _int_ok(v) else _wrong(path, "integer", v))


# Scalars checked inline by check_struct: accepted Python types and the schema's type name.
_SCALAR_TYPES: dict[str, tuple[Any, ...]] = {
    "string": ((str,), "string"), "time": ((str,), "string"), "bool": ((bool,), "boolean"),
    "int": ((int,), "integer"), "quantity": ((str, int, float), "string"),
    "any": ((str, int, float, bool, dict, list), "string"),
}

_SCALARS: dict[str, Checker] = {
    "string": _scalar("string", lambda v: type(v) is str),
    "time": _scalar("string", lambda v: type(v) is str),
    "bool": _scalar("boolean", lambda v: type(v) is bool),
    "int": _check_int,
    # int-or-string
    "quantity": _scalar("string", lambda v: type(v) in (str, int, float)),
    "any": _any,
}


@lru_cache(maxsize=1)
def _root() -> Checker:
    return _Compiler(kubevirt_types()).struct(ROOT)


@lru_cache(maxsize=1)
def _body_checkers() -> tuple[Checker, Checker]:
    types = kubevirt_types()
    return _Compiler(types).struct("kv.VirtualMachineSpec"), _Compiler(types, open_all=True).struct(
        "kv.VirtualMachineStatus")


TOP_LEVEL_KEYS = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})


def check_vm_body(vm: dict[str, Any]) -> list[Cause]:
    """KubeVirt's `Validator.Validate` (pkg/util/openapi) of a decoded JSON object, as virt-api's
    `expand-vm-spec` runs it on the posted VM: a top-level key other than apiVersion, kind,
    metadata, spec and status is `.<key> in body is a forbidden property` (PropertyNotAllowed with
    an empty name; Go's map order is undefined, the keys come sorted here); no `spec` key is
    `spec in body is required`; then `spec` against the VirtualMachineSpec schema (no unknown
    fields; a `null` or missing spec is `spec in body must be of type object: "null"`) and
    `status` against the VirtualMachineStatus schema, which keeps unknown fields and may be null.
    Metadata is not looked at."""
    out: list[Any] = [Cause("", f".{k} in body is a forbidden property", "") for k in sorted(vm) if k not in TOP_LEVEL_KEYS]
    if "spec" not in vm:
        out.append(Cause("", "spec in body is required", ""))
    spec_check, status_check = _body_checkers()
    spec = vm.get("spec")
    if spec is None:
        out.append(Cause("", 'spec in body must be of type object: "null"', ""))
    else:
        spec_check(spec, "spec", out)
    if vm.get("status") is not None:
        status_check(vm["status"], "status", out)
    return [c for c in out if c is not NOT_GO_SHAPED]


# Not a cause: marks a value the schema accepts but Go's decoder reads differently (a null list
# item, an integer written 3.0), so the decoded copy must come from vm_decode.load_vm.
NOT_GO_SHAPED = Cause("", "", "")


def check_vm_schema(vm: Any) -> list[Cause]:
    """The schema causes of a raw VirtualMachine (empty when it conforms)."""
    return check_vm_schema_shaped(vm)[0]


def check_vm_schema_shaped(vm: Any) -> tuple[list[Cause], bool]:
    """The schema causes, and whether the object is also exactly as Go decodes it (no null
    list items, no integers written as floats): then a plain copy of it is its decoded form."""
    if type(vm) is dict and _conforms(vm):
        return [], True
    return checked_in_python(vm)


def checked_in_python(vm: Any) -> tuple[list[Cause], bool]:
    """check_vm_schema_shaped by the checkers alone (what the C path must agree with)."""
    out: list[Any] = []
    _root()(vm, "", out)
    if not out:
        return out, True
    causes = [c for c in out if c is not NOT_GO_SHAPED]
    return causes, False


# --- the same schema checked in C: the hot path of a conforming VM ---------------------------------
# The checkers above say why a VM does not conform; a VM that does (every admitted one) is
# confirmed by msgspec (`convert` into Structs built from the same type table: unknown fields
# refused but in ObjectMeta and FieldsV1, required fields required, enums as Literals, a null
# field absent, a null list item or an integer written 3.0 refused), about 3x faster than the
# Python walk. Anything msgspec refuses goes through the checkers above, which decide. The one
# difference: msgspec takes what Python alone can hold as its JSON form (a tuple as an array, a
# subclass of dict or str as one), which the checkers above refuse; every driver (webhook, store,
# file loader) hands the engine decoded JSON, and KubeVirt itself only ever sees JSON.
_FAST_SCALARS: dict[str, Any] = {
    "string": str, "time": str, "bool": bool, "int": int, "quantity": str | int | float,
    "any": str | int | float | bool | dict | list,
}
_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")


class _FastSchema:
    """Structs for the VirtualMachine's types, built once from `kubevirt_types()`."""

    def __init__(self, types: dict[str, Any]):
        self.types = types
        self.made: dict[str, Any] = {}
        self.building: set[str] = set()

    def of(self, kind: str, struct: str = "", name: str = "") -> Any:
        enum = ENUMS.get((struct, name))
        if enum is not None:
            return Literal[enum]
        if struct == "k8s.PersistentVolumeClaimSpec" and name == "accessModes":
            return list[Literal[_ACCESS_MODES]]      # type: ignore[valid-type]  # (a runtime type)
        if kind.startswith("struct:"):
            return self.struct(kind[7:])
        if kind.startswith("slice:"):
            return list[self.of(kind[6:])]      # type: ignore[misc]  # (a runtime type)
        if kind.startswith("map:"):
            return dict[str, self.of(kind[4:]) | None]      # type: ignore[misc]  # (a null value is absent)
        return _FAST_SCALARS[kind]

    def struct(self, name: str) -> Any:
        made = self.made.get(name)
        if made is not None:
            return made
        if name in self.building:
            raise ValueError(f"recursive type {name}")      # (none today; the checkers would decide)
        self.building.add(name)
        fields: list[tuple[str, Any, Any]] = []
        for i, (key, t) in enumerate(self.types.get(name, {}).items()):
            typ = self.of(t[0], name, key)
            if not t[2] and (name, key) not in NOT_REQUIRED:     # required: present and not null
                fields.append((f"f{i}", typ, _struct_field(name=key)))
            else:
                fields.append((f"f{i}", typ | None, _struct_field(default=None, name=key)))
        made = self.made[name] = msgspec.defstruct(
            "VM_" + name.replace(".", "_"), fields, kw_only=True, forbid_unknown_fields=name not in OPEN_STRUCTS)
        return made


@lru_cache(maxsize=1)
def _fast_root() -> Any:
    try:
        return _FastSchema(kubevirt_types()).struct(ROOT)
    except (ValueError, TypeError):
        return None


def _conforms(vm: dict[str, Any]) -> bool:
    """Whether msgspec finds `vm` conforming and Go-shaped (False: the checkers decide)."""
    root = _fast_root()
    if root is None:
        return False
    try:
        msgspec.convert(vm, root)
    except (msgspec.ValidationError, RecursionError, TypeError, ValueError, OverflowError):
        return False
    return True


# --- unknown fields: what the API server's strict field validation reports and what its
# structural pruning drops (kubectl --validate=strict|warn|ignore) -----------------------------
def _walk_unknown(kind: str, v: Any, path: str, out: list[Any], prune: bool) -> Any:
    """`v` (of type `kind`) with the fields its type does not have removed when `prune`; the
    paths of those fields (`a.b[0].c`, as the API server prints them) appended to `out`."""
    types = kubevirt_types()
    if kind.startswith("struct:"):
        name = kind[7:]
        if type(v) is not dict or name in OPAQUE_STRUCTS:
            return v
        # (object metadata too: the API server decodes ObjectMeta strictly)
        fields = types.get(name, {})
        kept: dict[str, Any] = {}
        for key, x in v.items():
            sub = f"{path}.{key}" if path else key
            spec = fields.get(key)
            if spec is None:
                out.append(sub)
                continue
            y = _walk_unknown(spec[0], x, sub, out, prune) if x is not None else None
            if prune:
                kept[key] = y
        return kept if prune else v
    if kind.startswith("slice:"):
        if type(v) is not list:
            return v
        items = [_walk_unknown(kind[6:], x, f"{path}[{i}]", out, prune) if x is not None else None
                 for i, x in enumerate(v)]
        return items if prune else v
    if kind.startswith("map:"):
        if type(v) is not dict:
            return v
        pruned = {k: _walk_unknown(kind[4:], x, f"{path}[{k}]", out, prune) if x is not None else None
                  for k, x in v.items()}
        return pruned if prune else v
    return v


def unknown_fields(vm: Any) -> list[str]:
    """The paths of the fields a VirtualMachine's types do not have (strict field validation)."""
    out: list[str] = []
    _walk_unknown("struct:" + ROOT, vm, "", out, False)
    return out


def prune_unknown_fields(vm: Any) -> tuple[Any, list[str]]:
    """A copy of the VirtualMachine without the fields its types do not have (the API server's
    structural pruning), and their paths."""
    out: list[str] = []
    pruned = _walk_unknown("struct:" + ROOT, vm, "", out, True)
    return pruned, out


_ZERO = {"string": "", "time": "", "bool": False, "int": 0}


def _zero_nulls(kind: str, v: Any) -> None:
    if kind.startswith("struct:"):
        if type(v) is dict:
            fields = kubevirt_types().get(kind[7:], {})
            for key, x in v.items():
                spec = fields.get(key)
                if spec is not None and x is not None:
                    _zero_nulls(spec[0], x)
    elif kind.startswith("slice:"):
        if type(v) is list:
            item = kind[6:]
            for i, x in enumerate(v):
                if x is None:
                    v[i] = {} if item.startswith("struct:") else _ZERO.get(item)
                else:
                    _zero_nulls(item, x)
    elif kind.startswith("map:"):
        if type(v) is dict:
            for x in v.values():
                if x is not None:
                    _zero_nulls(kind[4:], x)


def zero_null_items(vm: dict[str, Any]) -> dict[str, Any]:
    """Replace, in place, every null list item by its type's zero value, as Go's decoder reads
    it (a null Disk is the zero Disk): the rules then see what KubeVirt sees."""
    _zero_nulls("struct:" + ROOT, vm)
    return vm
