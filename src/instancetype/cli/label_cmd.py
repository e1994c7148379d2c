"""kubectl `label` and `annotate`: `key=value` sets, `key-` removes, `--overwrite` to change a key
that has a value; objects by name, by `-l` or `--all`. The changed object goes through the same
update path as `apply` (admission, then the controller).

Texts as kubectl/pkg/cmd/label (`labeled`, `not labeled`, `unlabeled`, `'k' already has a value
(v), and --overwrite is false`) and kubectl/pkg/cmd/annotate (`annotated`, `--overwrite is
false but found the following declared annotation(s): 'k' already has a value (v)`).
"""
from __future__ import annotations

import json
import sys

import click

from instancetype.jsonutil import clone

from .completers import complete_args
from .kubectl import DRY_RUN_SUFFIX, CommandError, cluster_of, dry_run_mode, namespace_option, reports_errors, undone

_LABEL_VALUE_FMT = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"


def label_value_errors(value: str) -> list[str]:
    """apimachinery `IsValidLabelValue`."""
    import re

    from instancetype.api.names import max_len_error, regex_error

    errs = []
    if len(value) > 63:
        errs.append(max_len_error(63))
    if not re.fullmatch(_LABEL_VALUE_FMT, value):
        errs.append(regex_error("a valid label must be an empty string or consist of alphanumeric characters, '-', "
                                "'_' or '.', and must start and end with an alphanumeric character",
                                _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def parse_labels(specs: list[str]) -> tuple[dict[str, str], list[str]]:
    """kubectl label `parseLabels`."""
    labels: dict[str, str] = {}
    remove: list[str] = []
    for spec in specs:
        if "=" in spec:
            parts = spec.split("=")
            if len(parts) != 2:
                raise CommandError(f"error: invalid label spec: {spec}")
            errs = label_value_errors(parts[1])
            if errs:
                raise CommandError(f'error: invalid label value: "{spec}": {";".join(errs)}')
            labels[parts[0]] = parts[1]
        elif spec.endswith("-"):
            remove.append(spec[:-1])
        else:
            raise CommandError(f"error: unknown label spec: {spec}")
    if any(r in labels for r in remove):
        raise CommandError("error: can not both modify and remove a label in the same command")
    return labels, remove


def parse_annotations(specs: list[str]) -> tuple[dict[str, str], list[str]]:
    """kubectl annotate `parseAnnotations` + `validateAnnotations`."""
    new: dict[str, str] = {}
    remove: list[str] = []
    invalid: list[str] = []
    for spec in specs:
        if "=" in spec:
            key, _, value = spec.partition("=")
            if not key:
                invalid.append(spec)
            else:
                new[key] = value
        elif spec.endswith("-"):
            remove.append(spec[:-1])
        else:
            invalid.append(spec)
    if invalid:
        raise CommandError(f"error: invalid annotation format: {', '.join(invalid)}")
    both = [r for r in remove if r in new]
    if both:
        raise CommandError("error: can not both modify and remove the following annotation(s) in the same "
                           f"command: {', '.join(both)}")
    return new, remove


CHANGE_CAUSE = "kubernetes.io/change-cause"


def _overwrite_errors(field: str, current: dict, new: dict[str, str]) -> str | None:
    if field == "labels":
        errs = [f"'{k}' already has a value ({current[k]}), and --overwrite is false" for k, v in new.items()
                if k in current and current[k] != v]
        if not errs:
            return None
        return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
    found = [f"'{k}' already has a value ({current[k]})" for k, v in new.items()
             if k != CHANGE_CAUSE and k in current and current[k] != v]
    if not found:
        return None
    return "--overwrite is false but found the following declared annotation(s): " + "; ".join(found)


def _compact(obj: dict) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True)


def _run(ctx, field: str, args, namespace, all_namespaces, selector, field_selector, select_all, overwrite,
         dry_run) -> int:
    from .changes import save, select, split_pairs, write_failure_text
    from .patch_cmd import _is_refusal

    verb = "label" if field == "labels" else "annotate"
    mode = dry_run_mode(dry_run)
    if select_all and selector:
        raise CommandError("error: cannot set --all and --selector at the same time")
    if select_all and field_selector:
        raise CommandError("error: cannot set --all and --field-selector at the same time")
    words, pairs = split_pairs(args, verb)
    new, remove = parse_labels(pairs) if field == "labels" else parse_annotations(pairs)
    if not words:
        raise CommandError("error: one or more resources must be specified as <resource> <name> or <resource>/<name>")
    if not new and not remove:
        raise CommandError(f"error: at least one {'label' if field == 'labels' else 'annotation'} update is required")
    errors: list[str] = []
    with cluster_of(ctx) as cluster:
        found, errors = select(cluster, words, namespace, all_namespaces=all_namespaces, selector=selector,
                               field_selector=field_selector, select_all=select_all, verb=verb)
        for f in found:
            meta = f.obj.get("metadata") or {}
            current = dict(meta.get(field) or {})
            if not overwrite:
                msg = _overwrite_errors(field, current, new)
                if msg is not None:
                    errors.append(f"error: {msg}")
                    continue
            if field == "labels" and mode != "client":
                for key in remove:
                    if key not in current:
                        sys.stdout.write(f'label "{key}" not found.\n')
            changed_obj = clone(f.obj)
            values = dict(current)
            values.update(new)
            for key in remove:
                values.pop(key, None)
            changed_obj.setdefault("metadata", {})[field] = values
            if field == "labels":
                old_text, new_text = _compact(f.obj), _compact(changed_obj)
                operation = "not labeled"
                if old_text != new_text:
                    operation = "unlabeled" if not overwrite and len(new_text) < len(old_text) else "labeled"
            else:
                operation = "annotated"
            if not values:
                changed_obj["metadata"].pop(field, None)   # an empty map is no map, once stored
            if changed_obj != f.obj and mode != "client":
                try:
                    if mode == "server":
                        with undone(cluster.store):
                            save(cluster, f.obj, changed_obj)
                    else:
                        save(cluster, f.obj, changed_obj)
                except Exception as e:  # noqa: BLE001 - every refusal becomes kubectl's one line
                    if not _is_refusal(e):
                        raise
                    errors.append(write_failure_text(e, changed_obj))
                    continue
            sys.stdout.write(f.printed(operation, DRY_RUN_SUFFIX[mode]))
            sys.stdout.flush()
    for text in errors:
        sys.stderr.write(text.rstrip("\n") + "\n")
    return 1 if errors else 0


def _options(fn):
    for opt in reversed([
        click.argument("args", nargs=-1, shell_complete=complete_args),
        namespace_option,
        click.option("-A", "--all-namespaces", "all_namespaces", is_flag=True, help="Across all namespaces."),
        click.option("-l", "--selector", default=None, help="Label selector of the objects to change."),
        click.option("--field-selector", default=None, help="Field selector of the objects to change."),
        click.option("--all", "select_all", is_flag=True, help="Every object of the type(s)."),
        click.option("--overwrite", is_flag=True, help="Change keys that already have a value."),
        click.option("--dry-run", "dry_run", default="none", flag_value="client", is_flag=False,
                     help="none, client or server: admit the change but keep nothing."),
    ]):
        fn = opt(fn)
    return fn


def _command(name: str, field: str, doc: str) -> click.Command:
    """kubectl `label` or `annotate`: the same options and rules on `metadata.<field>`."""
    def cmd(ctx, args, namespace, all_namespaces, selector, field_selector, select_all, overwrite, dry_run):
        return _run(ctx, field, args, namespace, all_namespaces, selector, field_selector, select_all, overwrite,
                    dry_run)

    cmd.__doc__ = doc
    return click.command(name)(_options(click.pass_context(reports_errors(cmd))))


label_cmd = _command("label", "labels", "Set or remove labels: TYPE NAME KEY=VALUE... KEY-... (kubectl label).")
annotate_cmd = _command("annotate", "annotations",
                        "Set or remove annotations: TYPE NAME KEY=VALUE... KEY-... (kubectl annotate).")
