"""The shared pieces of the v1beta1 Structs: the `_S` base, Go-typed annotations, schemas.

`Annotated[T, _go("name")]` tags a Python type with the Go type name KubeVirt's decoder
prints (a Go named string type, `type DiskBus string`, is `Annotated[str, _go("v1.DiskBus")]`);
the scalar aliases (`UInt32`, `String`, `Quantity`, ...) are built so.  Also here:
`to_dict`, `struct_fields` and the OpenAPI v3 schema generator `openapi_schema`, which
work on any of the Structs.
"""
from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from msgspec import Meta

from instancetype.errors import DecodeError

# What the package re-exports (`from instancetype.api.v1beta1._x import *` in its __init__).
__all__ = [
    "_S",
    "UID",
    "Bool",
    "Int",
    "Int32",
    "Int64",
    "PreferredCPUTopologyStr",
    "Quantity",
    "SpreadAcrossStr",
    "String",
    "StringMap",
    "Time",
    "UInt",
    "UInt32",
    "_go",
    "openapi_schema",
    "struct_fields",
    "to_dict",
]



# --- scalar types, each tagged with the Go type name Go's decoder prints ------------------------
def _go(go: str, schema: dict[str, Any] | None = None, **meta: Any) -> Meta:
    """The msgspec Meta of a field whose Go type is `go` (used as `Annotated[T, _go(...)]`, a
    form type checkers read as T); `schema` adds CRD schema keywords (kubebuilder markers)."""
    return Meta(extra={"go": go}, extra_json_schema=schema, **meta)


UInt32 = Annotated[int, _go("uint32", ge=0, le=4294967295)]
UInt = Annotated[int, _go("uint", ge=0)]  # msgspec bounds stop at int64; godecode checks the full range
Int32 = Annotated[int, _go("int32", ge=-2147483648, le=2147483647)]
Int = Annotated[int, _go("int", ge=-9223372036854775808, le=9223372036854775807)]
Int64 = Annotated[int, _go("int64", ge=-9223372036854775808, le=9223372036854775807)]
Bool = Annotated[bool, _go("bool")]
String = Annotated[str, _go("string")]
# resource.Quantity: kept as its canonical text; validated by instancetype.api.quantity.
Quantity = Annotated[str, _go("resource.Quantity")]
# metav1.Time: RFC 3339 text.
Time = Annotated[str, _go("v1.Time")]
UID = Annotated[str, _go("types.UID")]


PreferredCPUTopologyStr = Annotated[str, _go("v1beta1.PreferredCPUTopology")]
SpreadAcrossStr = Annotated[str, _go("v1beta1.SpreadAcross")]
_ATOMIC = {"x-kubernetes-list-type": "atomic"}
StringMap = Annotated[dict[str, String], _go("map[string]string")]


class _S(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=False):
    go_type: ClassVar[str] = ""


# --- helpers -------------------------------------------------------------------------------------
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


def _schema_of(t: Any) -> dict[str, Any]:
    extra: dict[str, Any] = {}
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


def openapi_schema(cls: type) -> dict[str, Any]:
    """The structural schema of a Struct as controller-gen writes it (without descriptions):
    properties by wire name, `required` = the fields Go always writes (no omitempty)."""
    props: dict[str, Any] = {}
    required: list[Any] = []
    for _attr, wire, t, always in struct_fields(cls):
        props[wire] = _schema_of(t)
        if always:
            required.append(wire)
    out: dict[str, Any] = {"type": "object"}
    if props:
        out["properties"] = props
    if required:
        out["required"] = sorted(required)
    return out
