"""Decode JSON data into a typed v1beta1 shape the way KubeVirt's Go decoder does.

KubeVirt's webhooks call `encoding/json.Unmarshal` into the v1beta1 Go types
(pkg/util/webhooks.GetInstanceTypeSpecFromAdmissionRequest). The KubeVirt build that
produced the reference answers runs Go's json v2 engine in v1 mode, whose observable
rules are reproduced here:

- object keys match field names exactly, else case-insensitively; unknown keys are ignored;
- `null` leaves a value alone (and clears a pointer);
- the FIRST error in document order is the answer (later ones are never seen);
- a value of the wrong JSON kind fails with
  `json: cannot unmarshal <what> into Go struct field <Root>.<path> of type <go type>`, where
  `<what>` is `string`/`number`/`bool`/`object`/`array`, or `number <literal>` for a number
  a Go integer cannot hold; `<Root>` is the ROOT type's name; `<path>` is the JSON pointer of
  the value with `/` turned into `.` (keys as written, list indexes included); when the last
  token is a list index the words `Go struct field ` are left out (v2_decode.go heuristic);
- resource.Quantity's UnmarshalJSON parses the raw text and its error text is the answer as is.

The type table is read from the msgspec Structs of `instancetype.api.v1beta1` (their Go
type names ride in `Meta.extra["go"]` and `go_type`), never written per field here.

Public: `decode_value(value, cls, root, path=()) -> normalized data` and
`decode_object(obj, cls) -> normalized data`; both raise `DecodeError` or `QuantityError`.
The normalized data has canonical wire names, no nulls, no unknown keys and quantities in
canonical form, so `msgspec.convert(data, cls)` cannot fail on it.
"""
from __future__ import annotations

import re
from functools import cache
from typing import Any

import msgspec
from msgspec import inspect as mi

from instancetype.errors import DecodeError, QuantityError

# Descriptor kinds
STRUCT, LIST, MAP, INT, STR, BOOL, QTY, TIME, ANY = range(9)


class Desc:
    """One Go type: its kind, Go name and, for containers, what they hold."""

    __slots__ = ("kind", "go", "lo", "hi", "fields", "fold", "pointer", "elem", "cls")

    def __init__(self, kind: int, go: str, **kw: Any):
        self.kind = kind
        self.go = go
        self.lo: int = kw.get("lo", 0)      # an INT's bounds (its Go type's range)
        self.hi: int = kw.get("hi", 0)
        self.fields: dict[str, tuple[Desc, bool]] = kw.get("fields") or {}
        self.fold: dict[str, str] = {}
        self.elem: Desc | None = kw.get("elem")
        self.cls = kw.get("cls")


_INT_RANGES = {
    "uint32": (0, 2**32 - 1), "uint": (0, 2**64 - 1), "uint64": (0, 2**64 - 1),
    "int32": (-2**31, 2**31 - 1), "int": (-2**63, 2**63 - 1), "int64": (-2**63, 2**63 - 1),
}


def _desc_of(t: Any, go: str | None = None) -> tuple[Desc, bool]:
    """msgspec type info -> (Desc, is_pointer)."""
    pointer = False
    if isinstance(t, mi.UnionType):
        rest = [x for x in t.types if not isinstance(x, mi.NoneType)]
        pointer = len(rest) != len(t.types)
        t = rest[0] if len(rest) == 1 else mi.AnyType()
    if isinstance(t, mi.Metadata):
        go = (t.extra or {}).get("go", go)
        t = t.type
    if isinstance(t, mi.StructType):
        return struct_desc(t.cls), pointer
    if isinstance(t, mi.ListType):
        elem, _ = _desc_of(t.item_type)
        return Desc(LIST, go or f"[]{elem.go}", elem=elem), pointer
    if isinstance(t, mi.DictType):
        elem, _ = _desc_of(t.value_type)
        return Desc(MAP, go or f"map[string]{elem.go}", elem=elem), pointer
    if isinstance(t, mi.IntType):
        go = go or "int"
        lo, hi = _INT_RANGES.get(go, (-2**63, 2**63 - 1))
        return Desc(INT, go, lo=lo, hi=hi), pointer
    if isinstance(t, mi.BoolType):
        return Desc(BOOL, go or "bool"), pointer
    if isinstance(t, mi.StrType):
        if go == "resource.Quantity":
            return Desc(QTY, go), pointer
        if go == "v1.Time":
            return Desc(TIME, go), pointer
        return Desc(STR, go or "string"), pointer
    return Desc(ANY, go or "interface {}"), pointer


@cache
def struct_desc(cls: type) -> Desc:
    """The descriptor of a msgspec Struct, built once from its fields."""
    d = Desc(STRUCT, getattr(cls, "go_type", "") or cls.__name__, cls=cls)
    info = msgspec.inspect.type_info(cls)
    assert isinstance(info, msgspec.inspect.StructType), cls
    for f in info.fields:
        d.fields[f.encode_name] = _desc_of(f.type)
        d.fold.setdefault(f.encode_name.lower(), f.encode_name)
    return d


# --- error texts ---------------------------------------------------------------------------------
def _json_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "object"
    if isinstance(v, list):
        return "array"
    return "null"


def number_literal(v: Any) -> str:
    """The JSON text of a number, as near to what the user wrote as Python keeps it."""
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e16:
            return f"{v:.1f}"
        return repr(v)
    return str(v)


def _token(t: Any) -> str:
    return str(t).replace("~", "~0").replace("/", "~1")


def type_error(what: str, root: str, path: tuple[Any, ...], go: str) -> DecodeError:
    if not path:
        return DecodeError(f"json: cannot unmarshal {what} into Go value of type {go}")
    field = ".".join(_token(t) for t in path)
    last = field.rsplit(".", 1)[-1]
    into = "" if last.isdigit() and last.isascii() else "Go struct field "
    return DecodeError(f"json: cannot unmarshal {what} into {into}{root}.{field} of type {go}",
                       field=field)


def _key_error(key: Any, root: str, path: tuple[Any, ...], go: str) -> DecodeError:
    """A key no JSON object can hold (a Python caller's int, bytes, tuple, ...)."""
    e = type_error(f"object key {key!r} ({type(key).__name__}, not a string)", root, path, go)
    return DecodeError(e.message[:300], field=getattr(e, "field", ""))


# --- quantities and times ------------------------------------------------------------------------
_FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def _quantity_text(v: Any) -> str:
    """The raw text resource.Quantity.UnmarshalJSON parses (quotes stripped, spaces trimmed)."""
    if isinstance(v, str):
        return v.strip()
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return number_literal(v)
    return "{}" if isinstance(v, dict) else "[]"


def canonical_quantity(v: Any) -> str:
    """A quantity value -> its canonical text; QuantityError with apimachinery's text."""
    text = _quantity_text(v)
    if not text:
        raise QuantityError(_FORMAT_WRONG)
    try:
        from instancetype.api.quantity import canonical
    except ImportError:  # the Quantity module is written by another helper; keep a minimal check
        if not re.fullmatch(r"[+-]?[0-9.]+[eEinumkKMGTP]*[-+]?[0-9]*", text):
            raise QuantityError(_FORMAT_WRONG) from None
        return text
    return canonical(text)


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def _check_time(v: Any) -> str:
    """metav1.Time.UnmarshalJSON: a JSON string in RFC 3339."""
    if not isinstance(v, str):
        raise DecodeError(f"json: cannot unmarshal {_json_kind(v)} into Go value of type string")
    if not _RFC3339.fullmatch(v):
        raise DecodeError(f'parsing time "{v}" as "2006-01-02T15:04:05Z07:00": cannot parse "{v}" as "2006"')
    return v


# --- the walk ------------------------------------------------------------------------------------
def _walk(v: Any, d: Desc, root: str, path: tuple[Any, ...], prev: Any = None) -> Any:
    k = d.kind
    if k == STRUCT:
        if not isinstance(v, dict):
            raise type_error(_json_kind(v), root, path, d.go)
        out = prev if isinstance(prev, dict) else {}
        fields, fold = d.fields, d.fold
        for key, x in v.items():
            if type(key) is not str:
                raise _key_error(key, root, path, d.go)
            name = key if key in fields else fold.get(key.lower())
            if name is None:
                continue  # unknown field: ignored, as Go ignores it
            fd, pointer = fields[name]
            if x is None:
                if pointer:
                    out.pop(name, None)
                continue
            out[name] = _walk(x, fd, root, path + (key,), out.get(name))
        return out
    if k == INT:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise type_error(_json_kind(v), root, path, d.go)
        if isinstance(v, float) or not d.lo <= v <= d.hi:
            raise type_error(f"number {number_literal(v)}", root, path, d.go)
        return v
    if k == STR:
        if not isinstance(v, str):
            raise type_error(_json_kind(v), root, path, d.go)
        return v
    if k == BOOL:
        if not isinstance(v, bool):
            raise type_error(_json_kind(v), root, path, d.go)
        return v
    if k == QTY:
        return canonical_quantity(v)
    if k == LIST:
        if not isinstance(v, list):
            raise type_error(_json_kind(v), root, path, d.go)
        e = d.elem
        assert e is not None        # a LIST or MAP always has its element's Desc
        return [_zero(e) if x is None else _walk(x, e, root, path + (i,)) for i, x in enumerate(v)]
    if k == MAP:
        if not isinstance(v, dict):
            raise type_error(_json_kind(v), root, path, d.go)
        out = prev if isinstance(prev, dict) else {}
        e = d.elem
        assert e is not None
        for key, x in v.items():
            if type(key) is not str:
                raise _key_error(key, root, path, d.go)
            out[key] = _zero(e) if x is None else _walk(x, e, root, path + (key,))
        return out
    if k == TIME:
        return _check_time(v)
    return v


def _zero(d: Desc) -> Any:
    return {STRUCT: {}, LIST: [], MAP: {}, INT: 0, STR: "", BOOL: False, QTY: "0"}.get(d.kind)


def decode_value(value: Any, cls: type, root: str = "", path: tuple[Any, ...] = ()) -> Any:
    """`value` decoded as the Struct `cls`, errors named from `root` (a Go type name) and
    `path` (the tokens leading to `value`, e.g. ("spec",))."""
    return _walk(value, struct_desc(cls), root, tuple(path))


def decode_object(obj: Any, cls: type) -> Any:
    """A whole object decoded as the Struct `cls` (errors are named after `cls`)."""
    return _walk(obj, struct_desc(cls), cls.__name__, ())
