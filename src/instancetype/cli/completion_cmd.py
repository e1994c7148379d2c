"""`instancetype completion bash|zsh`: click's shell completion script for the whole command table
(the lazily loaded commands included: the group lists them all without importing them).

Resource arguments complete as kubectl's do: the first word to a resource type, the next ones to
the names of the objects of that type in the embedded store (read only; nothing when there is no
state file yet, or the file cannot be read), or on the cluster `--kubeconfig`/`--cluster`/`--context`
names, in the namespace the command would use. As kubectl's scripts also do: the options that
take files complete to file names (`-f`, `--image-path`, `--kubeconfig`, ...; directories for
`--cert-dir`), `-o` to the command's output formats, `-n` to namespaces, and `create vm|
instancetype|preference` to virtctl's flags. The bash script is click's with file names
completed by `compgen -f` (so `compgen`-driven tests and plain bash see them), zsh's is click's.
"""
from __future__ import annotations

import os
import sys

import click

SHELLS = ("bash", "zsh")


@click.command("completion")
@click.argument("shell", required=False)
def completion_cmd(shell):
    """Print the shell completion script: `source <(instancetype completion bash)`."""
    from click.shell_completion import get_completion_class

    from .kubectl import CommandError, reports_errors

    @reports_errors
    def run() -> int:
        if not shell:
            raise CommandError("error: Shell not specified.\nSee 'instancetype completion -h' for help and examples")
        if shell not in SHELLS:
            raise CommandError(f'error: Unsupported shell type "{shell}".')
        cli = click.get_current_context().find_root().command     # the group (not imported: main imports us)
        cls = get_completion_class(shell)      # ours (registered below), as kubectl's scripts complete
        assert cls is not None      # every shell of SHELLS has one
        comp = cls(cli, {}, "instancetype", "_INSTANCETYPE_COMPLETE")
        sys.stdout.write(comp.source())
        return 0

    return run()


def _resource_words() -> list[str]:
    from instancetype.api import kinds

    words: set[str] = set()
    for r in kinds.RESOURCES:
        words.update({r.plural, r.singular, *r.short_names})
    return sorted(words)


def _state_option(ctx: click.Context) -> str | None:
    root = ctx.find_root()
    return (root.params or {}).get("state") or os.environ.get("INSTANCETYPE_STATE")


COMPLETION_TIMEOUT_S = 5.0     # a cluster that does not answer must not hang the shell


def _names(ctx: click.Context, kind: str, namespace: str | None) -> list[str]:
    """The object names of a kind in the embedded store, or on the cluster the command line names
    (as kubectl's completion asks its API server); [] when there is nothing cheap to read."""
    from .cluster_options import cluster_choice

    if cluster_choice(ctx) is not None:
        return _cluster_names(ctx, kind, namespace)
    from instancetype.store.base import default_state_path

    path = default_state_path(_state_option(ctx))
    if not path.exists():
        return []
    try:
        from instancetype.store.sqlite import SqliteStore

        with SqliteStore(path) as store:
            return [(o.get("metadata") or {}).get("name", "") for o in store.list(kind, namespace)]
    except Exception:  # noqa: BLE001 - completion must never print a traceback into the shell
        return []


def _cluster_names(ctx: click.Context, kind: str, namespace: str | None) -> list[str]:
    try:
        from instancetype.store.kube.store import KubeStore

        from .cluster_options import kube_config

        store = KubeStore(config=kube_config(ctx), timeout=COMPLETION_TIMEOUT_S)
        try:
            return [(o.get("metadata") or {}).get("name", "") for o in store.list(kind, namespace)]
        finally:
            store.close()
    except Exception:  # noqa: BLE001 - completion must never print a traceback into the shell
        return []


def _namespace(ctx: click.Context, res) -> str | None:
    """The namespace a resource's names are completed in: the command's (`-n`, else the kubeconfig
    context's on a cluster, else default); None for cluster-scoped kinds."""
    if not res.namespaced:
        return None
    namespace = ctx.params.get("namespace")
    if namespace:
        return namespace
    from .cluster_options import DEFAULT_NAMESPACE, default_namespace

    try:
        return default_namespace(ctx)
    except Exception:  # noqa: BLE001 - an unreadable kubeconfig completes nothing, silently
        return DEFAULT_NAMESPACE


def complete_resource_args(ctx: click.Context, param: click.Parameter, incomplete: str):
    """`TYPE` then `NAME...`, or `TYPE/NAME`."""
    from click.shell_completion import CompletionItem

    from instancetype.api.kinds import resource_for

    before = [a for a in (ctx.params.get(param.name) or ()) if a]
    if "/" in incomplete:
        word, _, prefix = incomplete.partition("/")
        res = resource_for(word)
        if res is None:
            return []
        ns = _namespace(ctx, res)
        return [CompletionItem(f"{word}/{n}") for n in _names(ctx, res.kind, ns) if n.startswith(prefix)]
    if not before:
        return [CompletionItem(w) for w in _resource_words() if w.startswith(incomplete)]
    res = resource_for(before[0].split(",")[0])
    if res is None or "/" in before[0]:
        return []
    ns = _namespace(ctx, res)
    return [CompletionItem(n) for n in _names(ctx, res.kind, ns) if n.startswith(incomplete) and n not in before]


def complete_vm_names(ctx: click.Context, param: click.Parameter, incomplete: str):
    """The VirtualMachines of the namespace (virtctl start/stop/restart)."""
    from click.shell_completion import CompletionItem

    from instancetype.api.kinds import BY_KIND

    ns = _namespace(ctx, BY_KIND["VirtualMachine"])
    return [CompletionItem(n) for n in _names(ctx, "VirtualMachine", ns) if n.startswith(incomplete)]


# --- the shells: click's protocol, with the values of options click cannot know ---------------------

_FILE_OPTIONS = {"-f", "--filename", "--file", "--image-path", "--archive-path", "--kubeconfig", "--state",
                 "--ca-bundle", "--tls-cert-file", "--tls-private-key-file", "--kubevirt-config", "--template"}
_DIR_OPTIONS = {"--cert-dir"}
# `-o` per command where its help does not list them (else the formats its help names).
OUTPUTS = {
    "get": ("json", "yaml", "name", "wide", "jsonpath=", "jsonpath-file=", "custom-columns=",
            "custom-columns-file="),
    "api-resources": ("wide", "name"),
    "edit": ("yaml", "json"),
    "delete": ("name",),
    "version": ("yaml", "json"),
}
_DEFAULT_OUTPUTS = ("json", "yaml", "name")


_FORMATS = ("table", "wide", "matrix", "yaml", "json", "name")


def _outputs_in_help(text: str) -> tuple[str, ...]:
    import re

    found = tuple(f for f in _FORMATS if re.search(rf"\b{f}\b", text))
    return found or _DEFAULT_OUTPUTS


def _value_completions(ctx: click.Context, obj, incomplete: str):
    """The values of an option whose type says nothing (None: leave it to click)."""
    from click.shell_completion import CompletionItem

    if not isinstance(obj, click.Option) or obj.is_flag or obj._custom_shell_complete is not None:
        return None
    if not isinstance(obj.type, click.types.StringParamType):
        return None
    names = set(obj.opts) | set(obj.secondary_opts)
    if names & _FILE_OPTIONS:
        return [CompletionItem(incomplete, type="file")]
    if names & _DIR_OPTIONS:
        return [CompletionItem(incomplete, type="dir")]
    if "--output" in names:
        values = OUTPUTS.get(ctx.info_name or "") or _outputs_in_help(obj.help or "")
        return [CompletionItem(v) for v in values if v.startswith(incomplete)]
    if "--namespace" in names:
        return [CompletionItem(n) for n in _names(ctx, "Namespace", None) if n.startswith(incomplete)]
    return None


def _completions(self, args: list[str], incomplete: str):
    from click.shell_completion import _resolve_context, _resolve_incomplete

    ctx = _resolve_context(self.cli, self.ctx_args, self.prog_name, args)
    obj, incomplete = _resolve_incomplete(ctx, args, incomplete)
    found = _value_completions(ctx, obj, incomplete)
    return found if found is not None else obj.shell_complete(ctx, incomplete)


def _register() -> None:
    from click.shell_completion import BashComplete, ZshComplete, add_completion_class

    class Bash(BashComplete):
        """click's bash protocol; file and directory names by `compgen` in the script itself."""

        source_template = BashComplete.source_template.replace(
            """            COMPREPLY=()
            compopt -o dirnames""",
            """            COMPREPLY+=($(compgen -d -- "$value"))
            compopt -o filenames 2>/dev/null""").replace(
            """            COMPREPLY=()
            compopt -o default""",
            """            COMPREPLY+=($(compgen -f -- "$value"))
            compopt -o filenames 2>/dev/null""")
        get_completions = _completions

    class Zsh(ZshComplete):
        get_completions = _completions

    add_completion_class(Bash, "bash")
    add_completion_class(Zsh, "zsh")


_register()
