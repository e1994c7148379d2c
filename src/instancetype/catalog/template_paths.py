"""Paths into a VM template for `migrate-vm`: tuples of keys (str) and list indices (int).

    Path                                  a path, relative to spec.template (or to a VMI's root)
    MISSING                               what `value_at` returns where nothing is
    value_at(root, path) -> value | MISSING
    path_text(path, base="spec.template") -> "spec.template.spec.domain.cpu.cores"
    related(a, b) -> bool                 one path is a prefix of the other
    remove_field(template, path) -> Path | None
                                          delete a field and the dict ancestors it leaves empty
    KEEP                                  the paths never removed when emptied
"""
from __future__ import annotations

from typing import Any

Path = tuple  # of str (keys) and int (list indices), relative to spec.template

TEMPLATE = "spec.template"
# Never removed when emptied: KubeVirt requires domain and domain.devices.
KEEP = {("spec",), ("metadata",), ("spec", "domain"), ("spec", "domain", "devices")}
MISSING = object()


def value_at(root: Any, path: Path) -> Any:
    for p in path:
        if isinstance(p, int):
            if not isinstance(root, list) or p >= len(root):
                return MISSING
            root = root[p]
        else:
            if not isinstance(root, dict) or p not in root:
                return MISSING
            root = root[p]
    return root


def path_text(path: Path, base: str = TEMPLATE) -> str:
    out = base
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def related(a: Path, b: Path) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def remove_field(template: dict, path: Path) -> Path | None:
    """Delete `path`, then every dict ancestor it leaves empty; the topmost path removed."""
    parent = value_at(template, path[:-1])
    if not isinstance(parent, dict) or path[-1] not in parent:
        return None
    del parent[path[-1]]
    top = path
    while len(top) > 1:
        up = top[:-1]
        if up in KEEP or isinstance(up[-1], int):
            break
        node = value_at(template, up)
        if not isinstance(node, dict) or node:
            break
        holder = value_at(template, up[:-1])
        if not isinstance(holder, dict):
            break
        del holder[up[-1]]
        top = up
    return top
