"""The CRD structural-schema checks the API server (apiextensions-apiserver) runs before KubeVirt's webhook.

Against the openAPIV3Schema of `api.crd` (generated from the v1beta1 Structs):
- `null` values and fields the schema does not know are pruned (no field of these CRDs
  preserves unknown fields; `metadata` is left to the API server's ObjectMeta handling);
- JSON types, `minimum`/`maximum` (overcommitPercent 0..100), the quantity pattern and the
  required fields are checked, with apiextensions-apiserver's error texts, e.g.
  `spec.cpu.guest: Required value`,
  `spec.memory.overcommitPercent: Invalid value: 150: spec.memory.overcommitPercent in body should be less than or equal to 100`,
  `spec.cpu.guest: Invalid value: "string": spec.cpu.guest in body must be of type integer: "string"`.

Public: `check_schema(obj) -> (pruned_obj, causes)` (the input is never changed; `causes` are
`Cause`s as the API server's Status carries them: `field` the path, `message` the detail, so
`<field>: <message>` is the texts above; empty when the object passes).
The store and the CLI run this, then `engine.validation.validate`.
"""
from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from instancetype.api import crd, kinds
from instancetype.engine.jsondata import copy_json
from instancetype.engine.results import Cause
from instancetype.errors import UnexpectedKindError


@cache
def _schema(kind: str) -> dict[str, Any]:
    return crd.object_schema(kind)


@cache
def _pattern(p: str) -> re.Pattern[str]:
    return re.compile(p)


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _show(v: Any) -> str:
    """A value as Kubernetes' field errors print it (strings quoted, numbers bare)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (int, float, str)):
        return json.dumps(v)
    return json.dumps(v, separators=(",", ":"))


def _invalid(path: str, shown: str, detail: str, reason: str = "FieldValueInvalid") -> Cause:
    # A StatusCause's message is the error's body (apimachinery's ErrorBody); the path is `field`.
    return Cause(reason, f"Invalid value: {shown}: {detail}", path)


def _check(v: Any, s: dict[str, Any], path: str, causes: list[Cause]) -> Any:
    """Validate `v` against schema `s` (appending causes) and return its pruned copy."""
    if "anyOf" in s:  # int-or-string (quantities)
        t = _json_type(v)
        if t not in ("integer", "string"):
            causes.append(_invalid(path, json.dumps(t), f'{path} in body must be of type integer,string: "{t}"',
                                   "FieldValueTypeInvalid"))
            return v
        if t == "string" and "pattern" in s and not _pattern(s["pattern"]).search(v):
            causes.append(_invalid(path, _show(v), f"{path} in body should match '{s['pattern']}'"))
        return v
    want = s.get("type")
    if want is None:
        return v
    got = _json_type(v)
    if got != want and not (want == "number" and got == "integer"):
        causes.append(_invalid(path, json.dumps(got), f'{path} in body must be of type {want}: "{got}"',
                               "FieldValueTypeInvalid"))
        return v
    if want == "object":
        return _check_object(v, s, path, causes)
    if want == "array":
        items = s.get("items") or {}
        return [_check(x, items, f"{path}[{i}]", causes) for i, x in enumerate(v) if x is not None]
    if want == "integer":
        if "minimum" in s and v < s["minimum"]:
            causes.append(_invalid(path, _show(v), f"{path} in body should be greater than or equal to {s['minimum']}"))
        if "maximum" in s and v > s["maximum"]:
            causes.append(_invalid(path, _show(v), f"{path} in body should be less than or equal to {s['maximum']}"))
    return v


def _check_object(v: dict[str, Any], s: dict[str, Any], path: str, causes: list[Cause]) -> dict[str, Any]:
    props = s.get("properties")
    addl = s.get("additionalProperties")
    out: dict[str, Any] = {}
    for key, x in v.items():
        if x is None:
            continue  # nulls of non-nullable fields are pruned
        sub = props.get(key) if props else None
        if sub is None:
            sub = addl if isinstance(addl, dict) else None
        if sub is None:
            continue  # unknown field: pruned
        out[key] = _check(x, sub, f"{path}.{key}" if path else key, causes)
    for key in s.get("required", ()):
        if key not in out:
            p = f"{path}.{key}" if path else key
            causes.append(Cause("FieldValueRequired", "Required value", p))
    return out


def check_schema(obj: Any) -> tuple[Any, list[Cause]]:
    """The API server's CRD schema step for an object of one of the four kinds."""
    if not isinstance(obj, dict):
        return obj, [Cause("FieldValueTypeInvalid", f'Invalid value: "{_json_type(obj)}": '
                                                    f'must be of type object: "{_json_type(obj)}"', "<root>")]
    kind = obj.get("kind")
    if kind not in kinds.ALL_TYPE_KINDS:
        raise UnexpectedKindError(f"no CRD schema for kind {kind!r}: expected one of "
                                  + ", ".join(kinds.ALL_TYPE_KINDS))
    causes: list[Cause] = []
    s = _schema(kind)
    meta = obj.get("metadata")
    body = {k: v for k, v in obj.items() if k != "metadata"}
    pruned = _check_object(body, s, "", causes)
    if isinstance(meta, dict):
        pruned["metadata"] = copy_json(meta)
    elif meta is not None:
        causes.append(_invalid("metadata", json.dumps(_json_type(meta)),
                               f'metadata in body must be of type object: "{_json_type(meta)}"',
                               "FieldValueTypeInvalid"))
    # keep Kubernetes' key order: apiVersion, kind, metadata, spec
    order = {"apiVersion": 0, "kind": 1, "metadata": 2}
    pruned = dict(sorted(pruned.items(), key=lambda kv: order.get(kv[0], 3)))
    return pruned, causes
