"""kubectl's half of `create`: `create -f FILE|-` and `create namespace NAME`.

`create vm|instancetype|preference` is virtctl's manifest generator (`cli/create/`); everything
else after `create` comes here (`is_kubectl_create` decides, before any parsing). kubectl create
(k8s.io/kubectl/pkg/cmd/create) writes each object as given, without apply's last-applied
annotation, goes on past a refused one and reports as `apply` does; an existing object is the
API server's `AlreadyExists`. A word that names no kind is kubectl's `Unexpected args`, exit 1,
so a pipeline stops there instead of failing later on the help text.
"""
from __future__ import annotations

import click

from .apply_cmd import dry_run_option, validate_option
from .kubectl import (
    DRY_RUN_SUFFIX,
    CommandError,
    api_error_text,
    cluster_of,
    dry_run_mode,
    filename_option,
    namespace_option,
    reports_errors,
    undone,
)

NAMESPACE_WORDS = ("namespace", "ns")
_FILENAME_FLAGS = ("-f", "--filename")


def is_kubectl_create(argv: list[str], virtctl_kinds) -> bool:
    """Whether the words after `create` are kubectl's (`-f`, `namespace`, or a word that names no
    virtctl kind) rather than virtctl's (`vm`, `instancetype`, `preference`, or `create` alone,
    which prints the help)."""
    value_flags = {"-n", "--namespace", "--kubeconfig", "--context", "--state", "--dry-run", "--validate",
                   "-o", "--output", *_FILENAME_FLAGS}
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return False
        if word in _FILENAME_FLAGS or word.startswith(("--filename=", "-f")):
            return True
        if not word.startswith("-"):
            return word not in virtctl_kinds
        i += 2 if word in value_flags else 1
    return False


_HELP = """Create a resource from a file or from stdin, or a manifest for the specified kind.

 JSON and YAML formats are accepted. `vm`, `instancetype` and `preference` print a manifest
(virtctl create); `-f` and `namespace` create objects in the store (kubectl create).

Examples:
  # Create the objects in a file
  instancetype create -f instancetype.yaml

  # A generated manifest, created from stdin
  instancetype create instancetype --cpu 2 --memory 256Mi --name small | instancetype create -f -

  # Create a namespace
  instancetype create namespace team-a

Available Commands:
  instancetype  Create VirtualMachineInstancetype or VirtualMachineClusterInstancetype manifest.
  namespace     Create a namespace with the specified name (kubectl create namespace).
  preference    Create a VirtualMachinePreference or VirtualMachineClusterPreference manifest.
  vm            Create a VirtualMachine manifest.
"""


class _CreateCommand(click.Command):
    """kubectl's create, which also completes virtctl's `create vm|instancetype|preference` flags
    (that parser is not click's: while completing, its words are taken as arguments)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.resilient_parsing:
            ctx.ignore_unknown_options = ctx.allow_extra_args = True
        return super().parse_args(ctx, args)

    def shell_complete(self, ctx: click.Context, incomplete: str):
        from click.shell_completion import CompletionItem

        from instancetype.cli.create import SUBCOMMANDS, _command

        words = [w for w in ctx.params.get("args") or () if not w.startswith("-")]
        if words and words[0] in SUBCOMMANDS:
            if not incomplete.startswith("-"):
                return []
            flags = _command(words[0]).flagset().flags.values()
            return [CompletionItem(f"--{f.name}", help=f.usage.splitlines()[0] if f.usage else None)
                    for f in flags if not f.hidden and f"--{f.name}".startswith(incomplete)]
        return super().shell_complete(ctx, incomplete)


def _complete_kind(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """The first word: virtctl's kinds and `namespace`."""
    from click.shell_completion import CompletionItem

    from instancetype.cli.create import SUBCOMMANDS

    if ctx.params.get("args"):
        return []
    return [CompletionItem(w) for w in (*SUBCOMMANDS, "namespace") if w.startswith(incomplete)]


@click.command("create", cls=_CreateCommand, help=_HELP, short_help="Create objects from files, a namespace, or a VM, instancetype or "
                                                "preference manifest (kubectl/virtctl create).")
@click.argument("args", nargs=-1, shell_complete=_complete_kind)
@filename_option
@namespace_option
@dry_run_option
@validate_option
@click.pass_context
@reports_errors
def create_cmd(ctx, args, filenames, namespace, dry_run, validate):
    mode = dry_run_mode(dry_run)
    if args and args[0] in NAMESPACE_WORDS and not filenames:
        return _create_namespace(ctx, list(args[1:]), mode)
    if args:
        raise CommandError(f"error: Unexpected args: [{' '.join(args)}]\nSee 'instancetype create -h' for help "
                           "and examples")
    if not filenames:
        raise CommandError("error: must specify one of -f and -k")
    return _create_from_files(ctx, list(filenames), namespace, mode, validate)


def _create_from_files(ctx, filenames: list[str], namespace: str, mode: str, validate: str) -> int:
    from .apply_cmd import write_files

    return write_files(ctx, filenames, namespace, mode, validate, verb="create")


def _create_namespace(ctx, names: list[str], mode: str) -> int:
    """kubectl create namespace NAME: `namespace/NAME created`."""
    import sys

    from instancetype.store.base import APIError

    if len(names) != 1:
        raise CommandError(f"error: exactly one NAME is required, got {len(names)}\n"
                           "See 'instancetype create namespace -h' for help and examples")
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": names[0]}, "spec": {}, "status": {}}
    with cluster_of(ctx) as cluster:
        try:
            if mode != "none":
                with undone(cluster.store):
                    cluster.create(obj)
            else:
                cluster.create(obj)
        except APIError as e:
            raise CommandError(api_error_text(e)) from None
    sys.stdout.write(f"namespace/{names[0]} created{DRY_RUN_SUFFIX[mode]}\n")
    return 0
