"""kubectl `delete` on the embedded cluster: by TYPE NAME, TYPE/NAME, -f FILE, -l SELECTOR or --all.

Prints `<kind>.<group> "<name>" deleted[ from <ns> namespace][ (dry run)]` per object (`-o name`:
`<kind>.<group>/<name>`; `force deleted` with `--grace-period=0 --force`); the store's garbage
collector removes what the object owns (a VM's VMI and ControllerRevisions, a DataVolume's PVC)
as `--cascade` says (background, the default; foreground; orphan: kept, their owner reference
dropped). Goes on past a missing object and reports the errors at the end, exit 1. A selector
matching nothing prints `No resources found` on stdout and exits 0, as kubectl does.

As kubectl's: `--wait` (default true) waits, once every object was deleted, until each is gone
(its finalizers removed: a VM's once its VMI has stopped) or replaced by another of the same name,
within `--timeout` (a Go duration; 0, the default, waits a week): `error: timed out waiting for
the condition on <resource>/<name>`. `--wait=false` returns once the deletions are accepted.
`--grace-period` is sent as DeleteOptions.gracePeriodSeconds (-1, the default: not sent; 0 is
turned into 1 without `--force`; `--now` is 1); the kinds stored here have no graceful deletion
of their own, so the API server marks them with a grace period of 0 (a VMI's guest shutdown
follows its own terminationGracePeriodSeconds).
"""
from __future__ import annotations

import sys

import click

from instancetype.api import kinds, names
from instancetype.api.gotext import quote

from .completers import complete_args
from .delete_wait import Deleted, DeleteOptions, delete_options, wait_gone
from .kubectl import (
    DRY_RUN_SUFFIX,
    CommandError,
    Failure,
    api_failure,
    check_all_namespaces,
    check_namespace,
    cluster_of,
    dry_run_mode,
    filename_option,
    mapping_error,
    namespace_of,
    namespace_option,
    parse_targets,
    report,
    reports_errors,
    source_name,
    stored_kind,
)

_Item = tuple[kinds.Resource, str, "str | None", "str | None"]     # (resource, name, namespace, source file)


def _items_from_files(ctx: click.Context, filenames: tuple[str, ...], namespace: str) -> list[_Item]:
    from .loader import read_sources

    items: list[_Item] = []
    for d in read_sources(list(filenames)):
        check_namespace(ctx, d, namespace)
        res = kinds.BY_KIND.get(stored_kind(d.obj))
        if res is None:
            raise CommandError(f"error: {mapping_error(d, namespace)}")
        meta = got if isinstance(got := d.obj.get("metadata"), dict) else {}
        if not meta.get("name") or not isinstance(meta["name"], str):
            raise CommandError("error: resource name may not be empty")
        items.append((res, meta["name"], namespace_of(res, meta.get("namespace") or namespace),
                      source_name(d.source)))
    if not items:
        raise CommandError("error: no objects passed to delete")
    return items


@click.command("delete")
@click.argument("args", nargs=-1, shell_complete=complete_args)
@filename_option
@namespace_option
@click.option("-l", "--selector", default=None, help="Delete the objects matching this label selector.")
@click.option("--all", "all_", is_flag=True, help="Delete every object of the given types.")
@click.option("-A", "--all-namespaces", "all_namespaces", is_flag=True, help="With -l or --all: in every namespace.")
@click.option("--ignore-not-found", is_flag=True, help="Treat missing objects as deleted.")
@click.option("-o", "--output", "fmt", default=None, help="name: print <kind>.<group>/<name> per object.")
@click.option("--dry-run", "dry_run", default="none", flag_value="client", is_flag=False,
              help="none, client or server: say what would be deleted and keep it.")
@click.option("--cascade", default="background", flag_value="background", is_flag=False,
              help='background, foreground or orphan: what happens to the objects it owns.')
@click.option("--wait", "wait", default="true", flag_value="true", is_flag=False,
              help="Wait for the objects to be gone (finalizers included) before returning (default true).")
@click.option("--timeout", default="0s", help="How long --wait waits (a Go duration; 0: a week).")
@click.option("--grace-period", "grace_period", type=int, default=-1,
              help="Seconds given to the object to terminate gracefully; negative: not sent.")
@click.option("--now", is_flag=True, help="Same as --grace-period=1.")
@click.option("--force", is_flag=True, help="With --grace-period=0: delete without the grace period.")
@click.pass_context
@reports_errors
def delete_cmd(ctx, args, filenames, namespace, selector, all_, all_namespaces, ignore_not_found, fmt, dry_run,
               cascade, wait, timeout, grace_period, now, force):
    """Delete objects by TYPE NAME, TYPE/NAME, -f FILE or -l SELECTOR (kubectl delete)."""
    suffix = DRY_RUN_SUFFIX[dry_run_mode(dry_run)]
    options = delete_options(cascade, wait, timeout, grace_period, now, force)
    if fmt not in (None, "", "name"):
        raise CommandError(f"error: unexpected -o output mode: {fmt}. We only support '-o name'")
    if all_ and selector:
        raise CommandError("error: cannot set --all and --selector at the same time")
    if filenames and args:
        raise CommandError("error: there is no need to specify a resource type as a separate argument when "
                           "passing arguments in resource/name form")
    items: list[_Item] = []
    selects: list[tuple[kinds.Resource, str | None]] = []
    if filenames:
        items = _items_from_files(ctx, filenames, namespace)
    else:
        targets = parse_targets(args, verb="delete")
        check_all_namespaces(targets, all_namespaces)
        for t in targets:
            if t.names:
                if selector or all_:
                    raise CommandError("error: name cannot be provided when a selector is specified")
                items.extend((t.resource, n, namespace_of(t.resource, namespace), None) for n in t.names)
            elif selector or all_:
                selects.append((t.resource, None if all_namespaces else namespace_of(t.resource, namespace)))
            else:
                raise CommandError("error: resource(s) were provided, but no name was specified")
    failures: list[Failure] = []
    with cluster_of(ctx) as cluster:
        for res, ns in selects:
            for o in list(cluster.list(res.kind, ns, label_selector=selector or None)):
                m = o.get("metadata") or {}
                items.append((res, m.get("name", ""), m.get("namespace"), None))
        deleted = _delete(cluster, items, failures, ignore_not_found, fmt == "name", suffix, options)
        if deleted and not failures and not suffix and options.wait:
            failures += wait_gone(cluster, deleted, options.timeout)
    if selects and not deleted and not failures:
        sys.stdout.write("No resources found\n")
    return report(failures)


def _delete(cluster, items: list[_Item], failures: list[Failure], ignore_not_found: bool, as_name: bool,
            suffix: str, options: DeleteOptions) -> list[Deleted]:
    from instancetype.errors import StoreError
    from instancetype.store.base import NotFound, StateFileError

    deleted: list[Deleted] = []
    done = "force deleted" if options.grace_period == 0 else "deleted"
    for res, name, ns, source in items:
        bad = names.path_segment_errors(name)
        if bad:    # client-go refuses such a name before it goes into a request's path
            text = f"invalid resource name {quote(name)}: [{' '.join(bad)}]"
            failures.append(Failure(f"error: {text}", text))
            continue
        try:
            if suffix:
                answer = cluster.get(res.kind, name, ns)        # a dry run only checks that it is there
            else:
                answer = cluster.delete(res.kind, name, ns, propagation=options.propagation,
                                        grace_period=options.grace_period if options.grace_period >= 0 else None)
        except NotFound as e:
            if not ignore_not_found:
                failures.append(api_failure(e, verb="deleting", source=source))
            continue
        except StateFileError:
            raise
        except StoreError as e:
            failures.append(api_failure(e, verb="deleting", source=source))
            continue
        deleted.append(Deleted(res, name, ns, ((answer or {}).get("metadata") or {}).get("uid")))
        if as_name:
            sys.stdout.write(f"{res.qualified_singular}/{name}\n")
        else:
            # kubectl 1.36 names the namespace of a namespaced object, before a dry run's suffix.
            where = f" from {ns} namespace" if res.namespaced and ns else ""
            sys.stdout.write(f'{res.qualified_singular} "{name}" {done}{where}{suffix}\n')
        sys.stdout.flush()
    return deleted
