"""What the kubectl-style commands share: the cluster, resource arguments, and kubectl's error texts.

kubectl prints an API error as `Error from server (<Reason>): <message>` (cmdutil
`StandardErrorMessage`), anything else as `error: <message>`; every error exits 1.
A command body is wrapped in `reports_errors`, so a failure it raises becomes one line on
stderr and exit status 1, never a traceback.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from instancetype.cli.remote import RemoteCluster
    from instancetype.controller.cluster import Cluster

import functools
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import click

from instancetype.api import kinds
from instancetype.api.kinds import Resource, resource_for
from instancetype.errors import CommandError  # noqa: F401  (re-exported: the commands import it from here)

from .cluster_options import namespace_given, resolve_namespace

STDIN_SOURCE = "STDIN"   # kubectl's name for `-f -` in its messages




def fail(message: str) -> None:
    sys.stderr.write(message if message.endswith("\n") else message + "\n")


# What kubectl prints an error as, when not as `error: <message>` (cmdutil `StandardErrorMessage`):
# the API server's refusals and the connection's failures.
_KUBECTL_ERROR_FORMS = re.compile(r"^(error: |Error from server|The .* is invalid|Unable to connect to the server"
                                  r"|The connection to the server )", re.M)


def error_line(message: str) -> str:
    """An error as this command line prints it: `error: <message>`, the one prefix of every error,
    unless a line of the message is already in one of kubectl's own forms (`Error from server
    (NotFound): ...`, `The VirtualMachine "x" is invalid: ...`, edit's note then `error: ...`). virtctl's commands print theirs bare; here they get
    the prefix too, so that every error reads alike."""
    return message if _KUBECTL_ERROR_FORMS.search(message) else f"error: {message}"


def reports_errors(fn: Callable[..., int]) -> Callable[..., int]:
    """A command body whose `instancetype.Error` (a `CommandError` worded for the user, a file that
    cannot be read, a damaged state file, ...) is printed as `error_line` prints it; exit 1."""
    from instancetype.errors import Error

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> int:
        try:
            return fn(*args, **kwargs)
        except Error as e:
            fail(error_line(str(e)))
        return 1

    return wrapper


@contextmanager
def cluster_of(ctx: click.Context) -> Iterator[Any]:
    """The embedded cluster at `--state` / `$INSTANCETYPE_STATE` / the default path, or the
    Kubernetes cluster `--kubeconfig` / `--cluster` / `--context` names; closed on exit."""
    from .cluster_options import cluster_choice

    state = (ctx.find_root().obj or {}).get("state") if ctx is not None else None
    choice = cluster_choice(ctx)
    if choice is not None:
        from .cluster_options import kube_config
        from .remote import RemoteCluster

        cluster: Cluster | RemoteCluster = RemoteCluster.open(*choice, config=kube_config(ctx))  # refuses --state with a cluster
    else:
        from instancetype.controller.cluster import Cluster

        cluster = Cluster.open(state)
    try:
        yield cluster
    finally:
        cluster.close()


def api_error_text(e: BaseException) -> str:
    """An API error as kubectl prints it (cmdutil `StandardErrorMessage`)."""
    from instancetype.errors import Error
    from instancetype.store.base import Invalid

    if isinstance(e, Invalid):
        if e.causes and not (e.kind or e.name):
            # A Status naming no object (an admission webhook's): "The request is invalid: <causes>".
            parts = [f"{c.field}: {c.message}" if c.field else c.message for c in e.causes]
            return "The request is invalid: " + (parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]")
        return f"The {e}" if ' is invalid' in str(e) else f"The request is invalid: {e}"
    reason = e.reason if isinstance(e, Error) else ""
    if reason:
        return f"Error from server ({reason}): {e}"
    return f"error: {e}"


from instancetype.api.gotext import go_json  # noqa: E402,F401 (re-exported: the commands import it from here)

# --- errors collected while going on (kubectl's ContinueOnError + CheckErr) ------------------------

class Failure(NamedTuple):
    """One failed object: `alone` is how kubectl prints it as the only error, `among` as one of several."""

    alone: str
    among: str


def report(failures: list[Failure]) -> int:
    """cmdutil `CheckErr` of an aggregate: one error in its own form, several one line each."""
    if len(failures) == 1:
        fail(failures[0].alone)
    else:
        for f in failures:
            fail(f.among)
    return 1 if failures else 0


def api_failure(e: BaseException, *, verb: str | None = None, source: str | None = None) -> Failure:
    """An API error, with cli-runtime's `error when <verb> "<file>": ` when it came from a file."""
    from instancetype.errors import Error

    if source is None:
        text = api_error_text(e)
        return Failure(text, text)
    reason = e.reason if isinstance(e, Error) else ""
    message = f'error when {verb} "{source}": {e}'
    if reason:
        return Failure(f"Error from server ({reason}): {message}", f"Error from server ({reason}): {message}")
    return Failure(f"error: {message}", message)


# --- dry runs -----------------------------------------------------------------------------------

DRY_RUN_SUFFIX = {"none": "", "client": " (dry run)", "server": " (server dry run)"}


def dry_run_mode(value: str) -> str:
    """kubectl's `--dry-run` values (a bare `--dry-run` is the deprecated `client`)."""
    if value not in DRY_RUN_SUFFIX:
        raise CommandError(f'error: Invalid dry-run value ({value}). Must be "none", "server", or "client".')
    return value


class _Undo(Exception):
    """Raised at the end of a dry run's transaction so that nothing is kept."""


@contextmanager
def undone(store: Any) -> Iterator[None]:
    """A transaction that is always rolled back: the writes run (admission and all), nothing stays.
    On a cluster (no transactions), the API server's own dry run."""
    scope = store.dry_run_scope()
    if scope is not None:
        with scope:
            yield
        return
    try:
        with store.transaction():
            yield
            raise _Undo
    except _Undo:
        pass


# --- resources named on the command line ---------------------------------------------------------

def resource_or_error(word: str) -> Resource:
    res = resource_for(word)
    if res is None:
        raise CommandError(f'error: the server doesn\'t have a resource type "{word}"')
    return res


class Target(NamedTuple):
    resource: Resource
    names: list[str]          # empty: all of the type


def parse_targets(args: tuple[str, ...] | list[str], *, verb: str = "get") -> list[Target]:
    """kubectl's argument forms: `TYPE[,TYPE...] [NAME...]` or `TYPE/NAME [TYPE/NAME...]`."""
    args = [a for a in args if a != ""]
    if not args:
        raise CommandError(
            "You must specify the type of resource to get. Use \"instancetype api-resources\" for a complete "
            "list of supported resources.\n\nerror: Required resource not specified.\n"
            f"See 'instancetype {verb} -h' for help and examples"
            if verb == "get" else "error: You must provide one or more resources by argument or filename.")
    if any("/" in a for a in args):
        if not all("/" in a for a in args):
            raise CommandError(
                "error: there is no need to specify a resource type as a separate argument when passing "
                f"arguments in resource/name form (e.g. 'instancetype {verb} resource/<resource_name>' instead "
                f"of 'instancetype {verb} resource resource/<resource_name>'")
        targets: list[Target] = []
        for a in args:
            word, _, name = a.partition("/")
            if not word or not name or "/" in name:
                raise CommandError("error: arguments in resource/name form must have a single resource and name")
            res = resource_or_error(word)
            if targets and targets[-1].resource is res:
                targets[-1].names.append(name)
            else:
                targets.append(Target(res, [name]))
        return targets
    resources = [resource_or_error(w) for w in args[0].split(",")]
    return [Target(r, list(args[1:])) for r in resources]


def check_all_namespaces(targets: list[Target], all_namespaces: bool) -> None:
    """cli-runtime's builder refuses names with `-A` (`visitByName`), for every verb that has it."""
    if all_namespaces and any(t.names for t in targets):
        raise CommandError("error: a resource cannot be retrieved by name across all namespaces")


def namespace_of(res: Resource, namespace: str | None) -> str | None:
    """The namespace a request goes to: none for cluster-scoped kinds, else `namespace` (the
    command's, resolved by `namespace_option`: `-n`, else the kubeconfig context's, else `default`)."""
    return namespace if res.namespaced else None


# --- objects read from files (apply -f, delete -f) ----------------------------------------------

def source_name(where: str) -> str:
    """A document's source as kubectl names it in messages (`-f -` is `STDIN`)."""
    return STDIN_SOURCE if where == "<stdin>" else where


def stored_kind(obj: dict) -> str:
    """The kind an object is stored as (flavor.kubevirt.io kinds are stored as instancetypes)."""
    kind = obj.get("kind", "")
    if kinds.group_of(obj.get("apiVersion", "")) == kinds.FLAVOR_GROUP:
        return kinds.FLAVOR_KINDS.get(kind, kind)
    return kind


def mapping_error(d: Any, ns: str | None) -> str | None:
    """kubectl's error for a document whose kind the cluster does not serve (None: served)."""
    from instancetype.api.versions import needs_upgrade

    if needs_upgrade(d.obj):
        return None
    res = kinds.BY_KIND.get(d.kind)
    if res is not None and kinds.group_of(d.api_version) == res.group:
        return None
    scope_ns = "" if res is not None and not res.namespaced else (ns or "")
    return (f'resource mapping not found for name: "{d.name}" namespace: "{scope_ns}" from '
            f'"{source_name(d.source)}": no matches for kind "{d.kind}" in version "{d.api_version}"\n'
            "ensure CRDs are installed first")


def check_namespace(ctx: Any, d: Any, namespace: str) -> None:
    """kubectl refuses a document whose own namespace differs from `-n` (cli-runtime's
    `RequireNamespace`, only when `-n` is given: the context's namespace does not enforce)."""
    if not namespace_given(ctx):
        return
    res = kinds.BY_KIND.get(stored_kind(d.obj))
    if res is not None and not res.namespaced:
        return
    meta = d.obj.get("metadata")
    given = meta.get("namespace") if isinstance(meta, dict) else None
    if given and given != namespace:
        raise CommandError(f'error: the namespace from the provided object "{given}" does not match the namespace '
                           f'"{namespace}". You must pass \'--namespace={given}\' to perform this operation.')


# --- shared options ------------------------------------------------------------------------------

filename_option = click.option("-f", "--filename", "filenames", multiple=True, metavar="FILE",
                               help="A file, a directory or - for stdin. Repeatable.")
namespace_option = click.option("-n", "--namespace", default=None, callback=resolve_namespace,
                                help="The namespace (default: the kubeconfig context's on a cluster, else default).")

