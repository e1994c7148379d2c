"""Kubernetes label and field selectors, parsed and matched (apimachinery's `labels.Parse` grammar).

Label selectors: comma-separated requirements `key`, `!key`, `key=value`, `key==value`,
`key!=value`, `key in (a,b)`, `key notin (a,b)`, `key>n`, `key<n`, or a {key: value} mapping.
Field selectors: `path=value`, `path!=value` on any dotted path, values compared as text.
Bad syntax raises `SelectorError` with Kubernetes' wording. Pure: the store, the catalogue and
the command line share it.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from instancetype.errors import SelectorError
from instancetype.jsonutil import dig


class Requirement(NamedTuple):
    """One requirement of a label selector. (A NamedTuple: a dataclass costs every command line its generated code at import.)"""

    key: str
    op: str                   # "=", "!=", "in", "notin", "exists", "!", ">", "<"
    values: tuple[str, ...] = ()


_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_KEY_RE = re.compile(rf"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?{_NAME}$")
_VALUE_RE = re.compile(rf"^({_NAME})?$")
_SET_RE = re.compile(r"^\s*(\S+)\s+(in|notin)\s*\((.*)\)\s*$")
_CMP_RE = re.compile(r"^\s*([^\s=!<>]+)\s*(==|=|!=|>|<)\s*(\S*)\s*$")
_NOT_RE = re.compile(r"^\s*!\s*(\S+)\s*$")


def _split_top(text: str) -> list[str]:
    """Split at commas outside parentheses (`a in (x,y),b` -> two requirements)."""
    if "(" not in text and ")" not in text:
        return text.split(",")      # no parentheses: every comma splits (the common case, unwalked)
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def parse_label_selector(selector: str | Mapping[str, str] | None) -> list[Requirement]:
    """Kubernetes label selector syntax (`a=b,c!=d,e in (f,g),!h,i`), or a {key: value} mapping."""
    if not selector:
        return []
    if isinstance(selector, Mapping):
        return [Requirement(str(k), "=", (str(v),)) for k, v in selector.items()]
    reqs = []
    values: tuple[str, ...]
    for part in _split_top(selector):
        if not part.strip():
            raise SelectorError(f'unable to parse requirement: empty requirement in selector "{selector}"')
        if m := _NOT_RE.match(part):
            key, op, values = m.group(1), "!", ()
        elif m := _SET_RE.match(part):
            key, op = m.group(1), m.group(2)
            values = tuple(v.strip() for v in m.group(3).split(","))
        elif m := _CMP_RE.match(part):
            key, op, values = m.group(1), {"==": "="}.get(m.group(2), m.group(2)), (m.group(3),)
        elif (key := part.strip()) and " " not in key:
            op, values = "exists", ()
        else:
            raise SelectorError(f'unable to parse requirement: cannot parse "{part.strip()}" in selector "{selector}"')
        if not _KEY_RE.match(key) or len(key.rpartition("/")[2]) > 63:
            raise SelectorError(f'unable to parse requirement: invalid label key "{key}": name part must consist of '
                             "alphanumeric characters, '-', '_' or '.', and must start and end with an "
                             "alphanumeric character")
        for v in values:
            if op in (">", "<"):
                if not re.fullmatch(r"-?[0-9]+", v):
                    raise SelectorError(f'unable to parse requirement: for \'Gt\', \'Lt\' operators, the value must be '
                                     f'an integer: "{v}"')
            elif len(v) > 63 or not _VALUE_RE.match(v):
                raise SelectorError(f'unable to parse requirement: invalid label value: "{v}"')
        reqs.append(Requirement(key, op, values))
    return reqs


def labels_match(labels: Mapping[str, str] | None, reqs: list[Requirement]) -> bool:
    labels = labels or {}
    for r in reqs:
        v = labels.get(r.key)
        if r.op == "=" and v != r.values[0]:
            return False
        if r.op == "!=" and v == r.values[0]:
            return False
        if r.op == "in" and v not in r.values:
            return False
        if r.op == "notin" and v in r.values:
            return False
        if r.op == "exists" and v is None:
            return False
        if r.op == "!" and v is not None:
            return False
        if r.op in (">", "<"):
            if v is None or not re.fullmatch(r"-?[0-9]+", v):
                return False
            if (int(v) > int(r.values[0])) != (r.op == ">") or int(v) == int(r.values[0]):
                return False
    return True


class FieldRequirement(NamedTuple):
    """One requirement of a field selector. (A NamedTuple: a dataclass costs every command line its generated code at import.)"""

    path: tuple[str, ...]      # ("metadata", "name")
    equal: bool
    value: str


def parse_field_selector(selector: str | Mapping[str, str] | None) -> list[FieldRequirement]:
    """`metadata.name=x,status.phase!=Running` (any dotted path; values compared as text)."""
    if not selector:
        return []
    if isinstance(selector, Mapping):
        return [FieldRequirement(tuple(str(k).split(".")), True, str(v)) for k, v in selector.items()]
    out = []
    for part in selector.split(","):
        m = re.fullmatch(r"\s*([A-Za-z0-9_.\-/]+)\s*(==|=|!=)\s*(.*?)\s*", part)
        if not m:
            raise SelectorError(f'invalid selector: \'{selector}\'; can\'t understand \'{part.strip()}\'')
        out.append(FieldRequirement(tuple(m.group(1).split(".")), m.group(2) != "!=", m.group(3)))
    return out


def _field_text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def fields_match(obj: Mapping[str, Any], reqs: list[FieldRequirement]) -> bool:
    return all((_field_text(dig(obj, *r.path)) == r.value) == r.equal for r in reqs)
