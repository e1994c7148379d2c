"""Structural OpenAPI v3 schemas from KubeVirt's type table (api/kubevirt_types.py).

The table lists every field of VirtualMachine and VirtualMachineInstance (and the CDI and
Kubernetes types they embed) as `[type, pointer, omitempty]`. A structural schema prunes every
field it does not list, so the table must be whole wherever it is used: it is, for the kinds
it lists (the conformance suite's kv_types.json is KubeVirt v1.9's `kubevirt.io/api`).

Mapping (as KubeVirt's generated CRD validation, pkg/virt-operator/resource/generate/components
/validations_generated.go, spells the Go types):
- `string`, `bool`, `int`: `type: string | boolean | integer`;
- `time` (metav1.Time): `type: string, format: date-time`;
- `quantity` (resource.Quantity) and `any` (intstr.IntOrString): `x-kubernetes-int-or-string`;
- `slice:T`: an array of T; `map:T`: an object whose values are T;
- `struct:meta.ObjectMeta` below the top level (templates): an object that keeps its fields
  (`x-kubernetes-preserve-unknown-fields`), as KubeVirt's templates' metadata;
- `struct:X`: an object with X's fields.
Values Go can hold as nil (pointers, slices, maps, times) are `nullable`, so an explicit `null`
reaches the webhooks (which read it as Go does) instead of being dropped on the way.

Public: `type_schema(type_name, extra=None) -> dict`, `object_schema(kind_type, extra=None) -> dict`.
"""
from __future__ import annotations

from typing import Any

from instancetype.api.kubevirt_types import NOT_REQUIRED, kubevirt_types
from instancetype.api.v1beta1._base import _QUANTITY_PATTERN

PRESERVE = "x-kubernetes-preserve-unknown-fields"


def preserved_object(nullable: bool = False) -> dict:
    """An object whose fields are all kept: for what the project does not type."""
    out: dict = {"type": "object", PRESERVE: True}
    if nullable:
        out["nullable"] = True
    return out


def _field_schema(spec: str, pointer: bool, types: dict, extra: dict) -> dict:
    nullable = pointer
    if spec.startswith("slice:"):
        out: dict[str, Any] = {"type": "array", "items": _field_schema(spec[6:], False, types, extra)}
        nullable = True
    elif spec.startswith("map:"):
        out = {"type": "object", "additionalProperties": _field_schema(spec[4:], False, types, extra)}
        nullable = True
    elif spec == "string":
        out = {"type": "string"}
    elif spec == "bool":
        out = {"type": "boolean"}
    elif spec == "int":
        out = {"type": "integer"}
    elif spec == "time":
        out = {"type": "string", "format": "date-time"}
        nullable = True
    elif spec == "quantity":
        out = {"anyOf": [{"type": "integer"}, {"type": "string"}], "pattern": _QUANTITY_PATTERN,
               "x-kubernetes-int-or-string": True}
    elif spec == "any":
        out = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
    elif spec == "struct:meta.ObjectMeta":
        return preserved_object(nullable=True)
    elif spec.startswith("struct:"):
        out = type_schema(spec[7:], extra, _types=types)
    else:
        raise ValueError(f"unknown type {spec!r} in the type table")
    if nullable:
        out["nullable"] = True
    return out


def type_schema(name: str, extra: dict | None = None, *, _types: dict | None = None) -> dict:
    """The schema of one struct of the table, e.g. `kv.VirtualMachineSpec`. `extra` adds fields
    per struct ({"kv.VirtualMachineSpec": {"flavor": ["struct:kv.InstancetypeMatcher", True, True]}})."""
    types = _types if _types is not None else kubevirt_types()
    extra = extra or {}
    fields = dict(types[name])
    fields.update(extra.get(name, {}))
    props = {k: _field_schema(v[0], bool(v[1]), types, extra) for k, v in sorted(fields.items())}
    out: dict = {"type": "object"}
    if props:
        out["properties"] = props
    required = sorted(k for k, v in fields.items() if not v[1] and not v[2] and not v[0].startswith(("slice:", "map:"))
                      and (name, k) not in NOT_REQUIRED)
    if required:
        out["required"] = required
    return out


def object_schema(kind_type: str, extra: dict | None = None, *, description: str = "") -> dict:
    """The openAPIV3Schema of a top-level kind of the table (`kv.VirtualMachine`): `metadata` is
    the API server's (a plain object), every other field from the table."""
    out = type_schema(kind_type, extra)
    out["properties"]["metadata"] = {"type": "object"}
    if description:
        out = {"description": description, **out}
    return out
