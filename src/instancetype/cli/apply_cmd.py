"""kubectl `apply -f` on the embedded cluster.

Prints `<resource>.<group>/<name> created|configured|unchanged` per object, goes on past a
refused object and reports the errors at the end as kubectl's `CheckErr` does (one error: its
own form, e.g. `The request is invalid: ...`; several: one `Error from server (<Reason>): ...`
line each), exit 1. Warnings go to stderr as `Warning: ...`. `--dry-run=client|server` admits
every object and then undoes it all, printing kubectl's `(dry run)` / `(server dry run)`.
"""
from __future__ import annotations

import sys
from typing import Any

import click

from instancetype.api import kinds
from instancetype.api.gotext import quote

from .kubectl import (
    DRY_RUN_SUFFIX,
    CommandError,
    Failure,
    api_failure,
    check_namespace,
    cluster_of,
    dry_run_mode,
    filename_option,
    go_json,
    mapping_error,
    namespace_option,
    report,
    reports_errors,
    source_name,
    stored_kind,
    undone,
)

APPLY_CHUNK = 256          # objects per commit: output shows once its chunk is committed


def _info(res: kinds.Resource, name: str, ns: str | None) -> str:
    """cli-runtime `resource.Info.String()`."""
    return (f'Resource: "{res.group}/{res.version}, Resource={res.plural}", '
            f'GroupVersionKind: "{res.group}/{res.version}, Kind={res.kind}"\n'
            f'Name: "{name}", Namespace: "{ns or ""}"')


def _multiline(prefix: str, messages: list[str]) -> str:
    """kubectl `MultilineError` over the (deduplicated) causes."""
    seen = list(dict.fromkeys(messages))
    if len(seen) == 1:
        return prefix + seen[0]
    return prefix + "\n" + "\n".join(f"* {m}" for m in seen)


def invalid_failure(kind: str, name: str, causes: Any, *, verb: str, source: str) -> Failure:
    """The API server's Invalid error (apierrors.NewInvalid) as kubectl prints it: alone, `The <Kind>
    "<name>" is invalid: <causes>` (cmdutil checkErr; several causes one per line); among others,
    the server's message after cli-runtime's `error when <verb> "<file>": `."""
    res = kinds.BY_KIND.get(kind)
    texts = [f"{c.field}: {c.message}" if c.field else c.message for c in causes]
    group_kind = f"{res.kind}.{res.group}" if res and res.group else kind
    body = texts[0] if len(texts) == 1 else "[" + ", ".join(dict.fromkeys(texts)) + "]"
    message = f'error when {verb} "{source}": {group_kind} {quote(name)} is invalid: {body}'
    return Failure(_multiline(f"The {kind} {quote(name)} is invalid: ", texts),
                   f"Error from server (Invalid): {message}")


def refusal_failure(e: Any, *, verb: str, source: str, obj: dict) -> Failure:
    """A `lifecycle.admission.Refused` as kubectl reports it."""
    from .output import refusal_text

    result, webhook = e.result, e.webhook
    if not webhook:
        # The CRD's structural schema: the API server's own Invalid error, which names the object.
        name = (obj.get("metadata") or {}).get("name", "")
        return invalid_failure(obj.get("kind", ""), name if isinstance(name, str) else "", result.causes,
                               verb=verb, source=source)
    text = refusal_text(result, verb=verb, source=source, webhook=webhook)
    if result.causes:
        denied = f'admission webhook "{webhook}" denied the request: {result.message}'
        return Failure(text, f'Error from server (Invalid): error when {verb} "{source}": {denied}')
    return Failure(text, text)


# kubectl's --dry-run and --validate of apply and create -f.
dry_run_option = click.option("--dry-run", "dry_run", default="none", flag_value="client", is_flag=False,
                              help="none, client or server: admit the objects but keep nothing.")
validate_option = click.option("--validate", "validate", default="strict", flag_value="strict", is_flag=False,
                               help="strict (or true), warn or ignore (or false): unknown fields refused, "
                                    "warned about and dropped, or dropped.")


@click.command("apply")
@filename_option
@namespace_option
@click.option("-R", "--recursive", is_flag=True, help="Accepted for kubectl compatibility (directories are always "
                                                      "read recursively).")
@dry_run_option
@validate_option
@click.pass_context
@reports_errors
def apply_cmd(ctx, filenames, namespace, recursive, dry_run, validate):
    """Create or update objects from files, as kubectl apply (client-side, three-way merge)."""
    mode = dry_run_mode(dry_run)
    if not filenames:
        raise CommandError("error: must specify one of -f and -k")
    return write_files(ctx, list(filenames), namespace, mode, validate, verb="apply")


def write_files(ctx, filenames: list[str], namespace: str, mode: str, validate: str, *, verb: str) -> int:
    """`apply -f` (or, with verb `create`, `create -f`: create only) of every object in the files,
    each refused or written on its own; kubectl's lines, exit 1 if any failed."""
    from instancetype.errors import Error

    from .field_validation import validate_mode
    from .loader import read_sources
    from .output import warn

    fields = validate_mode(validate)
    create_only = verb == "create"
    docs = read_sources(filenames)
    for d in docs:
        check_namespace(ctx, d, namespace)
    if not docs:
        raise CommandError(f"error: no objects passed to {verb}")
    failures: list[Failure] = []
    with cluster_of(ctx) as cluster:
        store = cluster.store
        try:
            if mode != "none":
                # One transaction around everything, undone at the end: later objects see the
                # earlier ones, as on a server that kept them, and nothing stays.
                with undone(store):
                    _apply_chunk(cluster, docs, namespace, failures, DRY_RUN_SUFFIX[mode], warn, fields,
                                 create_only=create_only)
            else:
                for start in range(0, len(docs), APPLY_CHUNK):
                    # Each object on its own savepoint (a refusal undoes only it), committed in chunks.
                    with store.transaction():
                        pending = _apply_chunk(cluster, docs[start:start + APPLY_CHUNK], namespace, failures, "",
                                               fields=fields, create_only=create_only)
                    _show(pending, warn)
        except Error as e:   # the state file failed under us: nothing more can be applied
            failures.append(Failure(f"error: {e}", str(e)))
    return report(failures)


def _apply_chunk(cluster: Any, docs: list, namespace: str, failures: list[Failure], suffix: str,
                 show: Any = None, fields: str = "strict", create_only: bool = False) -> list[tuple[str, str]]:
    pending: list[tuple[str, str]] = []
    for d in docs:
        failure = _apply_one(cluster, d, namespace, pending, suffix, fields, create_only)
        if failure is not None:
            failures.append(failure)
    if show is not None:
        _show(pending, show)
        pending = []
    return pending


def _show(pending: list[tuple[str, str]], warn: Any) -> None:
    for stream, text in pending:
        if stream == "warn":
            warn(text)
        else:
            sys.stdout.write(text)
    sys.stdout.flush()


def _apply_one(cluster: Any, d: Any, namespace: str, pending: list[tuple[str, str]],
               suffix: str, fields: str = "strict", create_only: bool = False) -> Failure | None:
    """Apply one document; `create_only` is kubectl create's: a plain create (no
    last-applied annotation), an existing object the API server's AlreadyExists."""
    from instancetype.errors import StoreError
    from instancetype.store.base import StateFileError

    source = source_name(d.source)
    meta = got if isinstance(got := d.obj.get("metadata"), dict) else {}
    res = kinds.BY_KIND.get(d.kind)
    ns = (meta.get("namespace") or namespace) if (res is None or res.namespaced) else None
    mapping = mapping_error(d, ns)
    if mapping is not None:
        return Failure(f"error: {mapping}", mapping)
    if create_only:
        return _create_one(cluster, d, ns, pending, suffix, fields, source)
    if not meta.get("name") or not isinstance(meta["name"], str):   # unstructured GetName: "" unless a string
        res_ = res or kinds.BY_KIND.get(stored_kind(d.obj))
        text = ("error when retrieving current configuration of:\n" + (_info(res_, "", ns) if res_ else "") +
                f'\nfrom server for: "{source}": resource name may not be empty')
        return Failure(f"error: {text}", text)
    try:
        current = cluster.get(stored_kind(d.obj), meta["name"], ns)
    except StateFileError:
        raise
    except StoreError:     # not there (or not servable): the create below says which
        current = None
    verb = "creating" if current is None else _patch_verb(d.obj, current, ns)
    from .field_validation import check_fields

    obj, field_warnings, refused = check_fields(d.obj, fields, verb=verb, source=source)
    if refused is not None:
        return refused
    pending.extend(("warn", w) for w in field_warnings)
    return _write(lambda: cluster.apply(obj, namespace=ns), d, pending, suffix, verb, source)


def _create_one(cluster: Any, d: Any, ns: str | None, pending: list[tuple[str, str]], suffix: str, fields: str,
                source: str) -> Failure | None:
    from .field_validation import check_fields

    obj, field_warnings, refused = check_fields(d.obj, fields, verb="creating", source=source)
    if refused is not None:
        return refused
    pending.extend(("warn", w) for w in field_warnings)
    return _write(lambda: cluster.create(obj, namespace=ns), d, pending, suffix, "creating", source)


def _write(write: Any, d: Any, pending: list[tuple[str, str]], suffix: str, verb: str, source: str
           ) -> Failure | None:
    """Run one write and turn its refusal into kubectl's failure texts."""
    from instancetype.errors import Error
    from instancetype.lifecycle.admission import Refused
    from instancetype.store.base import APIError, Invalid, StateFileError

    from .manifests import resource_name

    try:
        result = write()
    except Refused as e:
        return refusal_failure(e, verb=verb, source=source, obj=d.obj)
    except StateFileError:
        raise
    except Invalid as e:
        if not e.causes:
            return api_failure(e, verb=verb, source=source)
        if not (e.kind or e.name):
            # An admission webhook's Status names no object: kubectl prints its causes alone.
            from .kubectl import api_error_text

            return Failure(api_error_text(e), api_failure(e, verb=verb, source=source).among)
        return invalid_failure(e.kind, e.name, e.causes, verb=verb, source=source)
    except APIError as e:
        return api_failure(e, verb=verb, source=source)
    except Error as e:
        return Failure(f'error: error when {verb} "{source}": {e}', f'error when {verb} "{source}": {e}')
    pending.extend(("warn", w) for w in result.warnings)
    pending.append(("out", f"{resource_name(result.object)} {result.action}{suffix}\n"))
    return None


def _patch_verb(obj: dict, current: dict, ns: str | None) -> str:
    """kubectl's verb for a failed update: `applying patch:\\n<patch>\\nto:\\n<info>\\nfor:`."""
    from instancetype.controller.apply import original_of, three_way_patch, with_last_applied

    res = kinds.BY_KIND.get(current.get("kind", ""))
    try:
        patch = three_way_patch(original_of(current), with_last_applied(obj, ns if res and res.namespaced else None),
                                current)
        text = go_json(patch)
    except Exception:  # a patch we cannot show must not hide the real error
        text = "{}"
    name = (current.get("metadata") or {}).get("name", "")
    info = _info(res, name, ns) if res else f'Name: "{name}", Namespace: "{ns or ""}"'
    return f"applying patch:\n{text}\nto:\n{info}\nfor:"
