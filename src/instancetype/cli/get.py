"""`get` and `describe` on the embedded cluster, as kubectl prints them.

`get` streams table rows straight from the store's iterator (no list held in memory) and
does per row only what its columns need; YAML/JSON printers load lazily.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any

import click

from instancetype.api.gotext import served_number

from . import tables
from .completers import complete_args
from .kubectl import (
    CommandError,
    Target,
    api_error_text,
    check_all_namespaces,
    cluster_of,
    fail,
    go_json,
    namespace_of,
    namespace_option,
    parse_targets,
    reports_errors,
)
from .listing import _labels_text, _no_resources, _yaml  # noqa: F401 (patch_cmd, edit_cmd use _yaml)

_OUTPUTS = ("yaml", "json", "name", "wide")


def _as_list(items: list[dict]) -> dict:
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


@click.command("get")
@click.argument("args", nargs=-1, shell_complete=complete_args)
@namespace_option
@click.option("-A", "--all-namespaces", "all_namespaces", is_flag=True, help="List across all namespaces.")
@click.option("-o", "--output", "fmt", default=None, metavar="FORMAT",
              help="yaml, json, name, wide, jsonpath=TEMPLATE, jsonpath-file=FILE, custom-columns=SPEC or "
                   "custom-columns-file=FILE.")
@click.option("-l", "--selector", default=None, help="Label selector (a=b,c!=d,e in (f,g),!h).")
@click.option("--field-selector", default=None, help="Field selector (metadata.name=x).")
@click.option("--show-labels", is_flag=True, help="Add a LABELS column.")
@click.option("--no-headers", is_flag=True, help="Print tables without their header.")
@click.option("--ignore-not-found", is_flag=True, help="Print nothing for objects that do not exist.")
@click.option("-w", "--watch", is_flag=True, help="After listing, print changes as they happen (until Ctrl-C).")
@click.option("--watch-only", is_flag=True, help="Print changes as they happen, without listing first.")
@click.option("--sort-by", default=None, metavar="JSONPATH",
              help="Order the objects by this field ('{.metadata.name}', .spec.runStrategy, ...).")
@click.pass_context
@reports_errors
def get_cmd(ctx, args, namespace, all_namespaces, fmt, selector, field_selector, show_labels, no_headers,
            ignore_not_found, watch, watch_only, sort_by):
    """Print objects: TYPE [NAME...], TYPE/NAME..., or TYPE1,TYPE2 (kubectl get)."""
    from instancetype.errors import StoreError
    from instancetype.store.base import StateFileError

    from .printers import output_printer

    printer = output_printer(fmt)
    if printer is None and fmt is not None and fmt not in _OUTPUTS:
        raise CommandError(f'error: unable to match a printer suitable for the output format "{fmt}", allowed '
                           "formats are: custom-columns,custom-columns-file,json,jsonpath,jsonpath-file,name,wide,"
                           "yaml")
    if args and args[0] and "/" not in args[0]:     # a category (`get all`) stands for its kinds
        from .categories import expand

        args = (",".join(expand(args[0].split(","), lambda: cluster_of(ctx))), *args[1:])
    targets = parse_targets(args)
    named = any(t.names for t in targets)
    if named and (selector or field_selector):
        raise CommandError("error: name cannot be provided when a selector is specified")
    check_all_namespaces(targets, all_namespaces)
    if (watch or watch_only) and len(targets) > 1:
        raise CommandError("error: you may only specify a single resource type")
    query = _Query(namespace, all_namespaces, selector, field_selector, ignore_not_found)
    if sort_by:
        from .sorting import Sorter

        query.sorter = Sorter(sort_by)
    errors: list[str] = []
    with cluster_of(ctx) as cluster:
        since = cluster.store.resource_version() if (watch or watch_only) else None
        table_watch = watch and printer is None and fmt not in ("yaml", "json", "name")
        try:
            if watch_only or table_watch:
                pass    # the watch prints the list itself, through the writer its rows share
            elif printer is not None:
                printer.print_objects(_gathered(cluster, targets, query, errors), no_headers=no_headers)
            elif fmt in ("yaml", "json"):
                _print_objects(cluster, targets, query, fmt, errors)
            else:
                _print_tables(cluster, targets, query, fmt, _with_kind(args, targets), show_labels, no_headers,
                              errors)
        except StateFileError:
            raise
        except StoreError as e:     # a selector the store cannot parse, ...
            errors.append(api_error_text(e))
        for msg in errors:
            fail(msg)
        if (watch or watch_only) and not errors:
            from .watch import follow

            initial = _objects(cluster, targets[0], query, errors) if table_watch else None
            return follow(cluster, targets[0], query, since, fmt, printer, show_labels, initial=initial,
                          no_headers=no_headers)
    return 1 if errors else 0


def _gathered(cluster, targets: list[Target], query: _Query, errors: list[str]) -> tuple[Any, bool]:
    """What jsonpath and custom-columns print: one named object as itself, else a List."""
    items: list[dict] = []
    for t in targets:
        items.extend(_objects(cluster, t, query, errors))
    single = len(targets) == 1 and len(targets[0].names) == 1
    if single:
        return (items[0] if items else None), True
    return _as_list(items), False


class _Query:
    """Where and what `get` lists: -n / -A, -l, --field-selector, --ignore-not-found."""

    __slots__ = ("namespace", "all_namespaces", "selector", "field_selector", "ignore_not_found", "sorter")

    def __init__(self, namespace, all_namespaces, selector, field_selector, ignore_not_found):
        self.namespace, self.all_namespaces = namespace, all_namespaces
        self.selector, self.field_selector = selector or None, field_selector or None
        self.ignore_not_found = ignore_not_found
        self.sorter = None          # --sort-by (sorting.Sorter)


def _with_kind(args: tuple[str, ...], targets: list[Target]) -> bool:
    """Names are printed as `<kind>.<group>/<name>` when several types were asked for: cli-runtime
    `MultipleTypesRequested` (distinct type words, or a comma list of distinct words) or
    several kinds among the results (kubectl `multipleGVKsRequested`)."""
    words: set[str] = set()
    for a in args:
        if "/" in a:
            words.add(a.partition("/")[0])
        elif "," in a and len(set(a.split(","))) > 1:
            return True
    return len(words) > 1 or len({t.resource.kind for t in targets}) > 1


def _print_tables(cluster, targets: list[Target], query: _Query, fmt: str | None, with_kind: bool,
                  show_labels: bool, no_headers: bool, errors: list[str]) -> None:
    printed = 0
    now = time.time()
    for t in targets:
        prefix = t.resource.qualified_singular + "/"
        ns_col = query.all_namespaces and t.resource.namespaced
        served = None
        if fmt != "name" and not t.names and cluster.remote:
            served = _served_table(cluster, t, query, fmt == "wide", prefix if with_kind else "", show_labels,
                                   ns_col)
        if served is not None:
            header: list[str] | None
            header, rows = served
            if no_headers:
                header = None
        else:
            objs = _objects(cluster, t, query, errors)
            if fmt == "name":
                for o in objs:
                    sys.stdout.write(f"{prefix}{(o.get('metadata') or {}).get('name', '')}\n")
                    printed += 1
                continue
            cols = tables.columns_for(t.resource.kind, fmt == "wide")
            if show_labels:
                cols = cols + [tables.Column("LABELS", lambda o, n: _labels_text(o))]
            rows = tables.table_rows(objs, cols, now, namespace_column=ns_col,
                                     name_prefix=prefix if with_kind else "")
            header = None if no_headers else tables.header_for(cols, ns_col)
        if printed and header is not None:
            # kubectl separates the tables of several resource types by a blank line.
            first = _peek(rows)
            if first is None:
                continue
            sys.stdout.write("\n")
            rows = first
        printed += tables.print_table(sys.stdout, rows, header)
    if printed == 0 and not errors and fmt != "name" and not query.ignore_not_found:
        _no_resources(targets, query.namespace, query.all_namespaces)


def _served_table(cluster, t: Target, query: _Query, wide: bool, name_prefix: str, show_labels: bool,
                  ns_col: bool) -> tuple[list[str], Iterator[list[str]]] | None:
    """A list on a cluster as kubectl prints it: the API server's Table (its columns and cells:
    a CRD's printer columns, AGE computed there), then cli-runtime `printTable`'s choices: columns
    of priority 0 unless wide, NAMESPACE from each row's metadata, `<kind>.<group>/` before the
    first cell, LABELS last. The header and the rows; None when the server sent a plain list."""
    ns = None if query.all_namespaces else namespace_of(t.resource, query.namespace)
    sorter = query.sorter
    pages = cluster.store.list_table(t.resource.kind, ns, label_selector=query.selector,
                                     field_selector=query.field_selector, include_object=sorter is not None)
    first = next(pages)
    if first.get("kind") != "Table":
        return None
    definitions = [c for c in first.get("columnDefinitions") or () if isinstance(c, dict)]
    shown = [i for i, c in enumerate(definitions) if wide or not c.get("priority")]
    header = [str(definitions[i].get("name", "")).upper() for i in shown]
    if show_labels:
        header.append("LABELS")
    if ns_col:
        header.insert(0, "NAMESPACE")

    def raw_rows() -> Iterator[dict]:
        page = first
        while True:
            yield from (row for row in page.get("rows") or () if isinstance(row, dict))
            page = next(pages, None)
            if page is None:
                return

    def rows() -> Iterator[list[str]]:
        listed = raw_rows() if sorter is None else iter(sorter.sort(raw_rows(), lambda row: row.get("object") or {}))
        for row in listed:
            cells = row.get("cells") or []
            out = [tables.go_cell(cells[i]) for i in shown if i < len(cells)]
            if name_prefix and out:
                out[0] = name_prefix + out[0]
            obj = row.get("object") or {}
            if show_labels:
                out.append(_labels_text(obj))
            if ns_col:
                out.insert(0, tables.go_cell((obj.get("metadata") or {}).get("namespace")))
            yield out
    return header, rows()


def _peek(rows: Iterable[list[str]]) -> Iterator[list[str]] | None:
    it = iter(rows)
    for first in it:
        def chain(first: list[str] = first) -> Iterator[list[str]]:
            yield first
            yield from it
        return chain()
    return None


def _objects(cluster, t: Target, query: _Query, errors: list[str]) -> Iterator[dict]:
    """The objects of one target: named ones in order (errors collected), else a streamed list;
    with --sort-by, all of them, ordered."""
    if query.sorter is not None:
        return iter(query.sorter.sort(_listed(cluster, t, query, errors)))
    return _listed(cluster, t, query, errors)


def _listed(cluster, t: Target, query: _Query, errors: list[str]) -> Iterator[dict]:
    from instancetype.store.base import NotFound

    if t.names:
        ns = namespace_of(t.resource, query.namespace)
        for name in t.names:
            try:
                yield cluster.get(t.resource.kind, name, ns)
            except NotFound as e:
                if not query.ignore_not_found:
                    errors.append(api_error_text(e))
        return
    ns = None if query.all_namespaces else namespace_of(t.resource, query.namespace)
    yield from cluster.list(t.resource.kind, ns, label_selector=query.selector, field_selector=query.field_selector)


def _print_objects(cluster, targets: list[Target], query: _Query, fmt: str, errors: list[str]) -> None:
    """kubectl `printGeneric`: one named object as itself, anything else as a `List`."""
    items: list[dict] = []
    for t in targets:
        items.extend(_objects(cluster, t, query, errors))
    single = len(targets) == 1 and len(targets[0].names) == 1
    if not items and (single or query.ignore_not_found):
        return
    doc = items[0] if single else _as_list(items)
    sys.stdout.write(go_json(doc, indent=4) + "\n" if fmt == "json" else _yaml(doc))


# --- describe ------------------------------------------------------------------------------------------

_ACRONYMS = {"API", "URL", "UID", "OSB", "GUID"}
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_MAX_ANNOTATION = 140


def _camel_split(s: str) -> list[str]:
    """fatih/camelcase `Split`: runs of lower, upper, digits; `CPUTopology` -> `CPU`, `Topology`."""
    runs: list[list[str]] = []
    last = None
    for ch in s:
        cls = 1 if ch.islower() else 2 if ch.isupper() else 3 if ch.isdigit() else 4
        if cls == last:
            runs[-1].append(ch)
        else:
            runs.append([ch])
        last = cls
    for i in range(len(runs) - 1):
        if runs[i][0].isupper() and runs[i + 1][0].islower():
            runs[i + 1].insert(0, runs[i].pop())
    return ["".join(r) for r in runs if r]


def smart_label(field: str) -> str:
    """kubectl describe's `smartLabelFor`: `apiVersion` -> `API Version`."""
    if any(not (ch.isalpha() or ch == "-") for ch in field):
        return field
    parts = []
    for p in _camel_split(field):
        if p == "_":
            continue
        parts.append(p.upper() if p.upper() in _ACRONYMS else p[:1].upper() + p[1:])
    return " ".join(parts)


def _go_value(v: Any) -> str:
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return served_number(v)
    return str(v)


def _content(lines: list[str], level: int, content: dict, prefix: str, skip: set[str]) -> None:
    ind = "  " * level
    for field in sorted(content):
        value = content[field]
        path = f"{prefix}.{field}"
        if path in skip:
            continue
        if isinstance(value, dict):
            lines.append(f"{ind}{smart_label(field)}:")
            _content(lines, level + 1, value, path, skip)
        elif isinstance(value, list):
            lines.append(f"{ind}{smart_label(field)}:")
            for child in value:
                if isinstance(child, dict):
                    _content(lines, level + 1, child, path, skip)
                else:
                    lines.append(f"{ind}  {_go_value(child)}")
        else:
            lines.append(f"{ind}{smart_label(field)}:\t{_go_value(value)}")


def _multiline_map(lines: list[str], title: str, values: dict, *, annotations: bool) -> None:
    keys = sorted(k for k in values if not (annotations and k == _LAST_APPLIED))
    if not keys:
        lines.append(f"{title}:\t<none>")
        return
    for i, k in enumerate(keys):
        v = str(values[k])
        if annotations and len(v) > _MAX_ANNOTATION:
            v = v[:_MAX_ANNOTATION] + "..."
        head = f"{title}:\t" if i == 0 else "\t"
        if annotations:
            first, *rest = v.split("\n")
            lines.append(f"{head}{k}: {first}")
            lines.extend(f"\t  {r}" for r in rest)
        else:
            lines.append(f"{head}{k}={v}")


def describe_text(obj: dict, extra: list[str] | tuple[str, ...] = ()) -> str:
    """kubectl's generic describer for an object (GenericDescriberFor + printUnstructuredContent),
    with `extra` lines (a section of ours) before the events."""
    meta = obj.get("metadata") or {}
    lines = [f"Name:\t{meta.get('name', '')}", f"Namespace:\t{meta.get('namespace', '')}"]
    _multiline_map(lines, "Labels", meta.get("labels") or {}, annotations=False)
    _multiline_map(lines, "Annotations", meta.get("annotations") or {}, annotations=True)
    _content(lines, 0, obj, "", {".metadata.name", ".metadata.namespace", ".metadata.labels",
                                 ".metadata.annotations"})
    lines.extend(extra)
    lines.append("Events:\t<none>")
    return tables.described(lines)


@click.command("describe")
@click.argument("args", nargs=-1, shell_complete=complete_args)
@namespace_option
@click.option("-A", "--all-namespaces", "all_namespaces", is_flag=True, help="Across all namespaces.")
@click.option("-l", "--selector", default=None, help="Label selector.")
@click.pass_context
@reports_errors
def describe_cmd(ctx, args, namespace, all_namespaces, selector):
    """Show objects in detail: TYPE [NAME_PREFIX] or TYPE/NAME (kubectl describe)."""
    from instancetype.errors import StoreError
    from instancetype.store.base import NotFound, StateFileError

    from .describe_vm import resolved_lines

    targets = parse_targets(args, verb="describe")
    check_all_namespaces(targets, all_namespaces)
    errors: list[str] = []
    texts: list[str] = []
    with cluster_of(ctx) as cluster:
        def describe(obj: dict) -> str:
            if obj.get("kind") == "Node":
                from .describe_node import node_text

                return node_text(cluster, obj)
            extra = resolved_lines(cluster, obj) if obj.get("kind") == "VirtualMachine" else []
            return describe_text(obj, extra)

        try:
            for t in targets:
                ns = None if all_namespaces else namespace_of(t.resource, namespace)
                if not t.names:
                    texts.extend(describe(o) for o in cluster.list(t.resource.kind, ns,
                                                                        label_selector=selector or None))
                    continue
                for name in t.names:
                    try:
                        texts.append(describe(cluster.get(t.resource.kind, name, ns)))
                    except NotFound as e:
                        # kubectl describe falls back to the objects whose names start with NAME.
                        found = [o for o in cluster.list(t.resource.kind, ns)
                                 if (o.get("metadata") or {}).get("name", "").startswith(name)]
                        if not found:
                            errors.append(api_error_text(e))
                        texts.extend(describe(o) for o in found)
        except StateFileError:
            raise
        except StoreError as e:
            errors.append(api_error_text(e))
    sys.stdout.write("\n\n".join(texts))
    if not texts and not errors:
        # kubectl describe words it by the namespace asked for, whatever the kind's scope.
        fail("No resources found" if all_namespaces else f"No resources found in {namespace or 'default'} namespace.")
    for msg in errors:
        fail(msg)
    return 1 if errors else 0
