"""`get -w` / `--watch-only`: the store's change feed printed as it comes, as kubectl's watch
prints it (one table row per change, the column widths kept from the list above it; one document
per change with `-o yaml|json`; `<resource>/<name>` with `-o name`). Runs until Ctrl-C."""
from __future__ import annotations

import sys
import time
from typing import Any

from instancetype.store.base import fields_match, labels_match, parse_field_selector, parse_label_selector

from . import tables
from .kubectl import Target, go_json, namespace_of


def follow(cluster: Any, target: Target, query: Any, since: Any, fmt: str | None, printer: Any,
           show_labels: bool, *, initial: Any = None, no_headers: bool = False) -> int:
    """Print until interrupted; returns kubectl's exit status on Ctrl-C (its interrupt handler's
    `os.Exit(1)`, nothing printed)."""
    try:
        _follow(cluster, target, query, since, fmt, printer, show_labels, initial, no_headers)
    except KeyboardInterrupt:
        sys.stdout.flush()
    return 1


def _follow(cluster: Any, target: Target, query: Any, since: Any, fmt: str | None, printer: Any,
            show_labels: bool, initial: Any, no_headers: bool) -> None:
    res = target.resource
    ns = None if query.all_namespaces else namespace_of(res, query.namespace)
    labels = parse_label_selector(query.selector) if query.selector else None
    fields = parse_field_selector(query.field_selector) if query.field_selector else None
    names = set(target.names)
    cols = tables.columns_for(res.kind, fmt == "wide")
    if show_labels:
        from .listing import _labels_text

        cols = cols + [tables.Column("LABELS", lambda o, n: _labels_text(o))]
    ns_col = query.all_namespaces and res.namespaced
    writer = tables.TabWriter(sys.stdout, remember=True)
    if initial is not None:
        _initial_table(writer, initial, cols, ns_col, no_headers, query, target)
    for ev in cluster.store.watch(res.kind, ns, since=since):
        obj = ev.object
        if obj is None:
            continue
        meta = obj.get("metadata") or {}
        if names and meta.get("name") not in names:
            continue
        if labels is not None and not labels_match(meta.get("labels") or {}, labels):
            continue
        if fields is not None and not fields_match(obj, fields):
            continue
        if printer is not None:
            printer.print_event(obj, writer)
        elif fmt == "json":
            sys.stdout.write(go_json(obj, indent=4) + "\n")
        elif fmt == "yaml":
            from .listing import _yaml

            sys.stdout.write("---\n" + _yaml(obj))
        elif fmt == "name":
            sys.stdout.write(f"{res.qualified_singular}/{meta.get('name', '')}\n")
        else:
            for cells in tables.table_rows([obj], cols, time.time(), namespace_column=ns_col):
                writer.row([tables._cell_text(c) for c in cells])
            writer.flush()
        sys.stdout.flush()


def _initial_table(writer: Any, objs: Any, cols: list, ns_col: bool, no_headers: bool, query: Any,
                   target: Target) -> None:
    rows = list(tables.table_rows(objs, cols, time.time(), namespace_column=ns_col))
    if not rows:
        from .listing import _no_resources

        _no_resources([target], query.namespace, query.all_namespaces)
        return
    if not no_headers:
        writer.row(tables.header_for(cols, ns_col))
    for cells in rows:
        writer.row([tables._cell_text(c) for c in cells])
    writer.flush()
    sys.stdout.flush()
