"""Kubernetes label selectors (`kubectl get -l ...`) parsed and matched against label maps.

Supports the grammar of apimachinery's `labels.Parse`: comma-separated requirements
`key`, `!key`, `key=value`, `key==value`, `key!=value`, `key in (a,b)`, `key notin (a,b)`.
An empty selector matches everything. Bad syntax raises `CLIError` naming the selector.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from instancetype.errors import CLIError

_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_KEY_RE = re.compile(_KEY)
_VALUE_RE = re.compile(_VALUE)
_SET_RE = re.compile(rf"\s*(!?)\s*({_KEY})\s+(in|notin)\s*\(([^()]*)\)\s*")
_CMP_RE = re.compile(rf"\s*({_KEY})\s*(==|!=|=)\s*([^,\s]*)\s*")
_EXISTS_RE = re.compile(rf"\s*(!?)\s*({_KEY})\s*")


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str                       # "exists", "!exists", "=", "!=", "in", "notin"
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!exists":
            return not present
        if self.op in ("=", "in"):
            return present and labels[self.key] in self.values
        # != and notin match objects without the label too (as Kubernetes does)
        return not present or labels[self.key] not in self.values


def _split(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts, depth, cur = [], 0, []
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


def _bad(selector: str, why: str) -> CLIError:
    return CLIError(f'invalid label selector "{selector}": {why}')


def _value(selector: str, v: str) -> str:
    if len(v) > 63 or not _VALUE_RE.fullmatch(v):
        raise _bad(selector, f'invalid label value "{v}"')
    return v


def parse(selector: str | None) -> tuple[Requirement, ...]:
    if selector is None or not selector.strip():
        return ()
    reqs = []
    for part in _split(selector):
        if not part.strip():
            raise _bad(selector, "found an empty requirement")
        m = _SET_RE.fullmatch(part)
        if m and not m.group(1):
            values = tuple(_value(selector, v.strip()) for v in m.group(5).split(","))
            reqs.append(Requirement(m.group(2), m.group(4), values))
            continue
        m = _CMP_RE.fullmatch(part)
        if m:
            op = "!=" if m.group(3) == "!=" else "="
            reqs.append(Requirement(m.group(1), op, (_value(selector, m.group(4)),)))
            continue
        m = _EXISTS_RE.fullmatch(part)
        if m:
            reqs.append(Requirement(m.group(2), "!exists" if m.group(1) else "exists"))
            continue
        raise _bad(selector, f'unable to parse requirement "{part.strip()}"')
    return tuple(reqs)


def matches(requirements: tuple[Requirement, ...], labels: dict[str, str] | None) -> bool:
    labels = labels or {}
    return all(r.matches(labels) for r in requirements)
