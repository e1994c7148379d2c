"""virtctl's `key:value,key:value` flag parameters (pkg/virtctl/create/params).

A params string is split at every `,`, each pair at its first `:`; a key given
twice keeps its last value. `parse` maps the pairs onto a field list (KubeVirt
uses tagged Go structs; the field order decides which bad value is reported
first), and reports leftover keys as `unknown param(s)`.
"""
from __future__ import annotations

from instancetype.errors import CLIError

from . import goparse

STR, UINT, QUANTITY, LIST = "string", "uint", "quantity", "list"


def flag_err(flag: str, msg: str) -> CLIError:
    """params.FlagErr: `failed to parse "--<flag>" flag: <msg>`."""
    return CLIError(f'failed to parse "--{flag}" flag: {msg}')


class ParamError(CLIError):
    """An error without the flag prefix (params.split / GetParamByName)."""


def split(params: str) -> dict[str, str]:
    """params.split: the key -> value map (insertion order kept for messages)."""
    if params == "":
        raise ParamError("params may not be empty")
    out: dict[str, str] = {}
    for pair in params.split(","):
        key, colon, value = pair.partition(":")
        if not colon:
            raise ParamError(f"params need to have at least one colon: {pair}")
        out[key] = value
    return out


def parse(flag: str, params: str, fields: tuple[tuple[str, str], ...]) -> dict:
    """params.Map: the values of `fields` (key, kind) found in `params`; absent keys are missing.

    Kinds: STR, UINT (a 32-bit unsigned decimal), QUANTITY (its canonical text), LIST (split at `;`).
    """
    try:
        pairs = split(params)
    except ParamError as exc:
        raise flag_err(flag, str(exc)) from None
    out: dict = {}
    for key, kind in fields:
        if key not in pairs:
            continue
        raw = pairs.pop(key)
        try:
            out[key] = convert(raw, kind)
        except (goparse.NumError, ValueError) as exc:
            raise flag_err(flag, f'failed to parse param "{key}": {exc}') from None
    if pairs:
        # KubeVirt walks a Go map here, so with several unknown keys its order varies
        raise flag_err(flag, "unknown param(s): " + ",".join(f"{k}:{v}" for k, v in pairs.items()))
    return out


def convert(raw: str, kind: str):
    if kind == STR:
        return raw
    if kind == UINT:
        return goparse.parse_uint(raw, 10, 32)
    if kind == QUANTITY:
        from instancetype.api.quantity import Quantity

        return str(Quantity.parse(raw))
    if kind == LIST:
        return raw.split(";")
    raise AssertionError(kind)  # pragma: no cover


def get(name: str, params: str) -> str | None:
    """params.GetParamByName: the raw value, or None when the key is absent (split errors raise)."""
    return split(params).get(name)


def split_prefixed_name(value: str) -> tuple[str, str]:
    """params.SplitPrefixedName: `[prefix/]name` -> (prefix, name)."""
    parts = value.split("/")
    if len(parts) == 1:
        prefix, name = "", parts[0]
    elif len(parts) == 2:
        prefix, name = parts
    else:
        raise ParamError(f"invalid count {len(parts) - 1} of slashes in prefix/name")
    if name == "":
        raise ParamError("name cannot be empty")
    return prefix, name
