"""Printers shared by the commands: YAML and JSON as kubectl prints them, warnings, refusals."""
from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

import yaml

from instancetype.api import kinds

try:
    from yaml import CSafeDumper as _BaseDumper
except ImportError:  # PyYAML without libyaml
    from yaml import SafeDumper as _BaseDumper  # type: ignore[assignment]  # the same interface, in Python
_STR = "tag:yaml.org,2002:str"
_resolver = yaml.resolver.Resolver()


class _Dumper(_BaseDumper):
    """YAML as kubectl (go-yaml v2) and kustomize write it: keys in their given order, multi-line
    strings as `|` blocks, strings that would read as another type double-quoted (`"133"`,
    `"true"`, `"2024-01-01T00:00:00Z"`, `""`)."""


def _str_representer(dumper: Any, data: str):
    if "\n" in data and all(ch == "\n" or ch == "\t" or ch >= " " for ch in data) and not data.endswith(" "):
        return dumper.represent_scalar(_STR, data, style="|")
    if _resolver.resolve(yaml.ScalarNode, data, (True, False)) != _STR:
        return dumper.represent_scalar(_STR, data, style='"')
    return dumper.represent_scalar(_STR, data)


_Dumper.add_representer(str, _str_representer)


def yaml_text(obj: Any, *, width: int = 1 << 20) -> str:
    """One YAML document (`width=80` folds long lines as kubectl's `get -o yaml` does)."""
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True,
                     width=width)


def yaml_docs(objs: Iterable[Any]) -> str:
    """Multi-document YAML: documents separated by `---`, as kubectl get -o yaml of several objects."""
    return "---\n".join(yaml_text(o) for o in objs)


def json_text(obj: Any) -> str:
    import json  # (here: YAML output, the default, does not need it)

    return json.dumps(obj, indent=4, ensure_ascii=False) + "\n"


def as_list(objs: list[dict]) -> dict:
    return {"apiVersion": "v1", "kind": "List", "items": objs, "metadata": {"resourceVersion": ""}}


def objects_text(objs: list[dict], fmt: str, *, as_get: bool = False) -> str:
    """Objects as `expand`, `convert` and `migrate-vm` print them: `json` is one object as itself
    and several as a `List`; YAML is one document per object. `as_get`: the YAML as `get -o yaml`
    prints it (keys sorted, folded at 80 columns), as virtctl's `expand` marshals through JSON."""
    if fmt == "json":
        return json_text(objs[0] if len(objs) == 1 else as_list(objs))
    if as_get:
        from instancetype.jsonutil import sorted_keys

        return "---\n".join(yaml_text(sorted_keys(o), width=80) for o in objs)
    return yaml_docs(objs)


def warn(message: str) -> None:
    sys.stderr.write(f"Warning: {message}\n")


def error(message: str) -> None:
    sys.stderr.write(f"error: {message}\n")


def refusal_text(result: Any, *, verb: str = "creating", source: str | None = None,
                 webhook: str = kinds.WEBHOOK_VM_MUTATOR, obj: dict | None = None) -> str:
    """A refused admission as kubectl prints it.

    With causes (422): `The request is invalid: <field>: <message>` (several: `[a: x, b: y]`);
    refused by the CRD's schema (the API server itself, `result.stage == "schema"`), naming the
    object: `The <Kind> "<name>" is invalid: <field>: <message>`.
    Without causes (400): `Error from server (BadRequest): error when <verb> "<file>": admission
    webhook "<webhook>" denied the request: <message>`.
    """
    causes = list(getattr(result, "causes", ()) or ())
    if causes:
        parts = [f"{c.field}: {c.message}" if c.field else c.message for c in causes]
        body = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
        if getattr(result, "stage", None) == "schema" and obj is not None:
            return f'The {obj.get("kind", "")} "{(obj.get("metadata") or {}).get("name", "")}" is invalid: {body}'
        return f"The request is invalid: {body}"
    where = f' "{source}"' if source else ""
    return (f"Error from server (BadRequest): error when {verb}{where}: admission webhook "
            f'"{webhook}" denied the request: {result.message}')
