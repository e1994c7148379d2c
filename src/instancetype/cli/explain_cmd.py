"""kubectl `api-resources` and `explain`, from what this project knows of its kinds.

`api-resources` lists the kinds the store serves (api/kinds.py) in kubectl's columns.
`explain` walks a kind's structural schema: the instancetype.kubevirt.io CRDs' (api/crd.py)
and, for VirtualMachine, VirtualMachineInstance and DataVolume, the schema of KubeVirt's Go types
(api/kubevirt_types.py); `metadata` is ObjectMeta from the same table. The layout is kubectl's
OpenAPI v3 plaintext template (kubectl/pkg/explain/v2/templates/plaintext.tmpl). Descriptions
are ours (`api/field_docs.py`, the same the CRDs carry): every field of the four kinds, and the VM
and VMI fields instancetypes and preferences touch; the others print `<no description>`.
"""
from __future__ import annotations

import sys

import click

from instancetype.api import kinds

from .kubectl import CommandError, reports_errors, resource_or_error

# --- api-resources ----------------------------------------------------------------------------------


@click.command("api-resources")
@click.option("--namespaced", default=None, type=click.Choice(["true", "false"]),
              help="Only namespaced (true) or cluster-scoped (false) kinds.")
@click.option("--api-group", default=None, help="Only the kinds of this group (\"\" for the core group).")
@click.option("-o", "--output", "fmt", default=None, help="wide or name.")
@click.option("--no-headers", is_flag=True, help="Print the table without its header.")
@click.option("--sort-by", default=None, type=click.Choice(["name", "kind"]), help="name or kind.")
@reports_errors
def api_resources_cmd(namespaced, api_group, fmt, no_headers, sort_by):
    """The kinds the store serves: NAME SHORTNAMES APIVERSION NAMESPACED KIND (kubectl api-resources)."""
    from . import tables

    if fmt not in (None, "wide", "name"):
        raise CommandError(f"error: --output {fmt} is not available")
    resources = [r for r in kinds.RESOURCES
                 if (namespaced is None or r.namespaced == (namespaced == "true"))
                 and (api_group is None or r.group == api_group)]
    # kubectl sorts stably by group (the core group first) unless --sort-by says otherwise.
    resources.sort(key=lambda r: (r.group, r.plural))
    if sort_by == "name":
        resources.sort(key=lambda r: r.plural)
    elif sort_by == "kind":
        resources.sort(key=lambda r: r.kind)
    if fmt == "name":
        for r in resources:
            sys.stdout.write(f"{r.qualified}\n")
        return 0
    rows = [[r.plural, ",".join(r.short_names), r.api_version, "true" if r.namespaced else "false", r.kind]
            + ([_verbs(r), ",".join(_categories(r))] if fmt == "wide" else []) for r in resources]
    header = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"] + (["VERBS", "CATEGORIES"] if fmt == "wide"
                                                                          else [])
    tw = tables.TabWriter(sys.stdout)
    if not no_headers:
        tw.row(header)
    for row in rows:
        tw.row(row)
    tw.flush()
    return 0


def _verbs(r: kinds.Resource) -> str:
    return "[create delete deletecollection get list patch update watch]"


def _categories(r: kinds.Resource) -> list[str]:
    if r.group in (kinds.GROUP,) and r.namespaced:
        return ["all"]
    return []


# --- explain ------------------------------------------------------------------------------------------

_KIND_DESCRIPTIONS = {
    "VirtualMachine": ("VirtualMachine handles the VirtualMachines that are not running\nor are in a stopped "
                       "state\nThe VirtualMachine contains the template to create the\nVirtualMachineInstance. It "
                       "also mirrors the running state of the created\nVirtualMachineInstance in its status."),
    "VirtualMachineInstance": ("VirtualMachineInstance is *the* VirtualMachineInstance Definition. It represents "
                               "a virtual machine in the runtime environment of kubernetes."),
    "DataVolume": ("DataVolume is an abstraction on top of PersistentVolumeClaims to allow easy population of "
                   "those PersistentVolumeClaims with relation to VirtualMachines"),
}
_TYPE_ROOTS = {"VirtualMachine": "kv.VirtualMachine", "VirtualMachineInstance": "kv.VirtualMachineInstance"}
# What the API server says of every kind's top fields (apimachinery's TypeMeta and ObjectMeta docs, shortened).
_TOP_DOCS = {
    "apiVersion": "APIVersion defines the versioned schema of this representation of an object. Servers should "
                  "convert recognized schemas to the latest internal value, and may reject unrecognized values.",
    "kind": "Kind is a string value representing the REST resource this object represents. Servers may infer "
            "this from the endpoint the client submits requests to. Cannot be updated. In CamelCase.",
    "metadata": "Standard object's metadata.",
}


class _TypeSchemas:
    """OpenAPI-shaped schemas of the type table's structs, built on demand (no cycles kept:
    a struct seen on the way down is a plain object)."""

    def __init__(self, docs: dict[str, str] | None = None) -> None:
        from instancetype.api.kubevirt_types import kubevirt_types

        self.types = kubevirt_types()
        self.docs = docs or {}      # path from the kind's root -> description (api/field_docs.py)

    def of(self, t: str, seen: tuple = (), path: tuple = ()) -> dict:
        if t.startswith("slice:"):
            return {"type": "array", "items": self.of(t[6:], seen, path)}
        if t.startswith("map:"):
            return {"type": "object", "additionalProperties": self.of(t[4:], seen, path)}
        if t.startswith("struct:"):
            return self.struct(t[7:], seen, path)
        return {"string": {"type": "string"}, "bool": {"type": "boolean"}, "int": {"type": "integer"},
                "time": {"type": "string", "format": "date-time"}}.get(t, {})

    def struct(self, name: str, seen: tuple = (), path: tuple = ()) -> dict:
        fields = self.types.get(name)
        if fields is None or name in seen:
            return {"type": "object"}
        return _LazyStruct(self, name, fields, seen + (name,), path)


class _LazyStruct(dict):
    """A struct's schema whose properties are built when first looked at (the VMI's types are deep)."""

    def __init__(self, schemas: _TypeSchemas, name: str, fields: dict, seen: tuple, path: tuple = ()):
        super().__init__(type="object")
        required = sorted(f for f, (_t, pointer, omitempty) in fields.items() if not omitempty and not pointer)
        if required:
            self["required"] = required
        self._schemas, self._fields, self._seen, self._path = schemas, fields, seen, path

    def get(self, key, default=None):
        if key == "properties":
            if "properties" not in self:
                props = {}
                for f, spec in self._fields.items():
                    here = (*self._path, f)
                    sub = self._schemas.of(spec[0], self._seen, here)
                    text = self._schemas.docs.get(".".join(here))
                    if text:
                        sub["description"] = text
                    props[f] = sub
                self["properties"] = props
            return self["properties"]
        return super().get(key, default)


def kind_schema(kind: str) -> dict | None:
    """The schema `explain` walks for a kind (None: this project has none)."""
    from instancetype.api import field_docs

    docs = {"VirtualMachine": field_docs.VM_DOCS, "VirtualMachineInstance": field_docs.VMI_DOCS}.get(kind, {})
    schemas = _TypeSchemas({**_TOP_DOCS, **docs})
    if kind in kinds.ALL_TYPE_KINDS:
        from instancetype.api.crd import object_schema

        s = object_schema(kind)
        s["properties"]["metadata"] = schemas.struct("meta.ObjectMeta")
        for name in _TOP_DOCS:
            s["properties"][name]["description"] = _TOP_DOCS[name]
        return s
    if kind in _TYPE_ROOTS:
        s = schemas.struct(_TYPE_ROOTS[kind])
        s["description"] = _KIND_DESCRIPTIONS[kind]
        return s
    if kind == "DataVolume":
        return {"type": "object", "description": _KIND_DESCRIPTIONS[kind], "required": ["spec"],
                "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                               "metadata": schemas.struct("meta.ObjectMeta"),
                               "spec": schemas.struct("cdi.DataVolumeSpec"), "status": {"type": "object"}}}
    return None


def wrap(s: str, limit: int) -> str:
    """kubectl explain's `wrap` (term.NewWordWrapWriter: mitchellh/go-wordwrap `WrapString`):
    words move to a new line once the line would pass `limit`; newlines are kept; a word longer
    than the limit stays whole."""
    out: list[str] = []
    current = 0
    word: list[str] = []
    space: list[str] = []
    for ch in s:
        if ch == "\n":
            if not word:
                if current + len(space) > limit:
                    current = 0
                else:
                    out.extend(space)
            else:
                out.extend(space)
                out.extend(word)
                word = []
            space = []
            out.append(ch)
            current = 0
        elif ch.isspace() and ch != "\u00a0":
            if not space or word:
                current += len(space) + len(word)
                out.extend(space)
                out.extend(word)
                space, word = [], []
            space.append(ch)
        else:
            word.append(ch)
            if current + len(space) + len(word) > limit and len(word) < limit:
                out.append("\n")
                current = 0
                space = []
    if not word:
        if current + len(space) <= limit:
            out.extend(space)
    else:
        out.extend(space)
        out.extend(word)
    return "".join(out)


def indent(s: str, n: int) -> str:
    """sprig `indent`: every line, the empty last one included."""
    pad = " " * n
    return pad + s.replace("\n", "\n" + pad)


def type_guess(schema: dict) -> str:
    if schema.get("items"):
        return "[]" + type_guess(schema["items"])
    ap = schema.get("additionalProperties")
    if ap and not isinstance(ap, bool):
        return "map[string]" + type_guess(ap)
    t = schema.get("type")
    return "Object" if t == "object" or not t else t


def _enum(schema: dict, long_view: bool, limit: int, indent_amount: int = 0) -> str:
    values = schema.get("enum")
    if not values:
        return ""
    out = ("\n" + " " * indent_amount + "enum: ") if not long_view else "ENUM:"
    for i, v in enumerate(values):
        if limit > -1 and i >= limit:
            out += ", ...."
            break
        if i > 0 and not long_view:
            out += ", "
        elif long_view:
            out += "\n    "
        out += '""' if v == "" else str(v)
    return out


def _field_list(schema: dict, level: int, recursive: bool, depth: int = 0) -> str:
    out = []
    props = schema.get("properties") or {}
    required = schema.get("required") or []
    for name in sorted(props):
        sub = props[name]
        amount = level * 2
        line = " " * amount + name + "\t<" + type_guess(sub) + ">"
        if name in required:
            line += " -required-"
        line += _enum(sub, False, 4, amount) + "\n"
        out.append(line)
        if not recursive:
            out.append(indent(wrap(sub.get("description") or "<no description>", 78 - amount), amount + 2) + "\n")
            out.append("\n")
        elif depth < 32:
            out.append(_field_list(_container(sub), level + 1, recursive, depth + 1))
    return "".join(out)


def _container(schema: dict) -> dict:
    """The schema whose fields a field lists: an array's items, a map's values."""
    while True:
        if schema.get("items"):
            schema = schema["items"]
            continue
        ap = schema.get("additionalProperties")
        if ap and not isinstance(ap, bool):
            schema = ap
            continue
        return schema


def explain_text(res: kinds.Resource, schema: dict, path: list[str], recursive: bool) -> str:
    out = []
    if res.group:
        out.append(f"GROUP:      {res.group}\n")
    out.append(f"KIND:       {res.kind}\nVERSION:    {res.version}\n\n")
    current = schema
    for i, field in enumerate(path):
        holder = _container(current)
        props = holder.get("properties") or {}
        if field not in props:
            raise CommandError(f'error: field "{field}" does not exist')
        current = props[field]
        if i == len(path) - 1:
            out.append(f"FIELD: {field} <{type_guess(current)}>\n" + _enum(current, True, -1) + "\n\n")
    resolved = _container(current) if path else current
    description = current.get("description") or resolved.get("description")
    out.append("DESCRIPTION:\n" + indent(wrap(description + "\n" if description else "<empty>", 76), 4) + "\n")
    fields = _field_list(resolved, 1, recursive)
    if fields:
        out.append("FIELDS:\n" + fields)
    out.append("\n")
    return "".join(out)


@click.command("explain")
@click.argument("resource", required=False)
@click.option("--recursive", is_flag=True, help="Print the fields of fields (names and types only).")
@click.option("--api-version", default=None, help="The group/version (only the one served is known).")
@reports_errors
def explain_cmd(resource, recursive, api_version):
    """Fields of a kind: RESOURCE[.FIELD...] (kubectl explain), from the CRD schemas."""
    if not resource:
        raise CommandError("error: You must specify the type of resource to explain. Use \"instancetype "
                           "api-resources\" for a complete list of supported resources.")
    word, *path = resource.split(".")
    res = resource_or_error(word)
    if api_version is not None and api_version != res.api_version:
        raise CommandError(f'error: couldn\'t find resource for "{res.group}/{api_version.rpartition("/")[2]}, '
                           f'Resource={res.plural}"')
    schema = kind_schema(res.kind)
    if schema is None:
        raise CommandError(f'error: GVK {res.api_version}, Kind={res.kind} not found in OpenAPI schema')
    sys.stdout.write(explain_text(res, schema, path, recursive))
    return 0
