"""The `instancetype` command: a click group whose subcommands load lazily.

`create` is dispatched before click, because it parses its flags exactly as
virtctl (cobra/pflag) does, which click cannot. Every other command is a click
command in its own module, imported only when it is invoked, so that a
command pays only for its own imports.

Exit status follows kubectl and virtctl: 0 on success, 1 on every error
(usage errors included; click's default of 2 is overridden). No traceback ever
reaches a user.
"""
from __future__ import annotations

import importlib
import os

import click

from instancetype import gcpause
from instancetype.cli import EMPTY_STATE
from instancetype.cli.cluster_options import global_options
from instancetype.cli.global_options import GLOBAL_OPTIONS

# command name -> (module, attribute, one-line help). Modules are imported on use.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "expand": ("instancetype.cli.offline", "expand_cmd", "Expand VMs against instancetypes and preferences."),
    "validate": ("instancetype.cli.validate_cmd", "validate_cmd", "Run KubeVirt's admission on manifests."),
    "convert": ("instancetype.cli.convert_cmd", "convert_cmd", "Convert v1alpha1/v1alpha2/flavor objects to v1beta1."),
    "catalog": ("instancetype.cli.catalog", "catalog", "The common-instancetypes catalogue."),
    "migrate-vm": ("instancetype.cli.migrate", "migrate_vm_cmd", "Rewrite a VM to use a catalogue instancetype and preference."),
    "apply": ("instancetype.cli.apply_cmd", "apply_cmd", "Create or update objects in the embedded cluster (kubectl apply)."),
    "get": ("instancetype.cli.get", "get_cmd", "Print objects of the embedded cluster (kubectl get)."),
    "describe": ("instancetype.cli.get", "describe_cmd", "Show objects in detail (kubectl describe)."),
    "delete": ("instancetype.cli.delete_cmd", "delete_cmd", "Delete objects (kubectl delete)."),
    "wait": ("instancetype.cli.wait", "wait_cmd", "Wait for a condition on objects (kubectl wait)."),
    "start": ("instancetype.cli.vm_cmds", "start_cmd", "Start a VirtualMachine (virtctl start)."),
    "stop": ("instancetype.cli.vm_cmds", "stop_cmd", "Stop a VirtualMachine (virtctl stop)."),
    "restart": ("instancetype.cli.vm_cmds", "restart_cmd", "Restart a VirtualMachine (virtctl restart)."),
    "pause": ("instancetype.cli.lifecycle_cmds", "pause_cmd", "Pause a VM's or VMI's guest (virtctl pause)."),
    "unpause": ("instancetype.cli.lifecycle_cmds", "unpause_cmd", "Resume a paused guest (virtctl unpause)."),
    "soft-reboot": ("instancetype.cli.lifecycle_cmds", "soft_reboot_cmd", "Soft reboot a VMI (virtctl soft-reboot)."),
    "addvolume": ("instancetype.cli.volume_cmds", "addvolume_cmd", "Add a volume to a running VM (virtctl addvolume)."),
    "removevolume": ("instancetype.cli.volume_cmds", "removevolume_cmd", "Remove a hotplugged volume (virtctl removevolume)."),
    "image-upload": ("instancetype.cli.image_upload", "image_upload_cmd", "Upload a disk image to a DataVolume or PVC (virtctl image-upload)."),
    "patch": ("instancetype.cli.patch_cmd", "patch_cmd", "Update fields of objects with a patch (kubectl patch)."),
    "set": ("instancetype.cli.set_cmd", "set_cmd", "Give VMs another instancetype or preference (kubectl set)."),
    "label": ("instancetype.cli.label_cmd", "label_cmd", "Set or remove labels (kubectl label)."),
    "annotate": ("instancetype.cli.label_cmd", "annotate_cmd", "Set or remove annotations (kubectl annotate)."),
    "edit": ("instancetype.cli.edit_cmd", "edit_cmd", "Edit an object in $KUBE_EDITOR / $EDITOR (kubectl edit)."),
    "api-resources": ("instancetype.cli.explain_cmd", "api_resources_cmd", "The kinds the store serves (kubectl api-resources)."),
    "explain": ("instancetype.cli.explain_cmd", "explain_cmd", "Fields of a kind, from its schema (kubectl explain)."),
    "completion": ("instancetype.cli.completion_cmd", "completion_cmd", "Shell completion for bash or zsh."),
    "version": ("instancetype.cli.version_cmd", "version_cmd", "The client and server versions (kubectl version)."),
    "serve": ("instancetype.cli.serve_cmd", "serve_cmd", "Serve KubeVirt's admission webhooks for a cluster (HTTPS)."),
    "controller": ("instancetype.cli.controller_cmd", "controller_cmd", "Run the VM controller on a cluster (virt-controller)."),
    "install": ("instancetype.cli.cluster_cmds", "install_cmd", "Install the system on a Kubernetes cluster (virt-operator)."),
    "uninstall": ("instancetype.cli.cluster_cmds", "uninstall_cmd", "Remove what install put on a cluster."),
}


class Interrupted(BaseException):
    """Ctrl-C inside a command: a BaseException click does not catch (it would print a newline and
    `Aborted!`), so that `run_click` can end with status 130 and nothing printed."""


class UnknownCommand(click.UsageError):
    """A command name the group does not have: kubectl prints its text alone (no usage line)."""


class LazyGroup(click.Group):
    def _main_shell_completion(self, ctx_args, prog_name, complete_var=None):
        # The shells' scripts and protocol are ours (file names, -o values, virtctl's create flags),
        # registered when the shell asks (click's variable, `_INSTANCETYPE_COMPLETE`), not on every
        # command line: the module imports click's shell_completion.
        if os.environ.get(complete_var or f"_{prog_name.replace('-', '_').replace('.', '_')}_COMPLETE".upper()):
            import instancetype.cli.completion_cmd  # noqa: F401 (registers them)

        return super()._main_shell_completion(ctx_args, prog_name, complete_var)

    def list_commands(self, ctx):
        return sorted(set(COMMANDS) | {"create", "help"} | set(self.commands))

    def get_command(self, ctx, name):
        if name in self.commands:
            return self.commands[name]
        if name == "create":    # reached for kubectl's `create -f` / `create namespace` and the help listing
            from instancetype.cli.create_cmd import create_cmd

            return create_cmd
        if name == "help":
            return help_cmd
        entry = COMMANDS.get(name)
        if entry is None:
            return None
        try:
            module = importlib.import_module(entry[0])
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("instancetype"):
                return None
            raise
        return getattr(module, entry[1], None)

    def resolve_command(self, ctx, args):
        """cobra's unknown command, with its suggestions (`legacyArgs` of the root command)."""
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            raise UnknownCommand(unknown_command_text(args[0], self.list_commands(ctx)), ctx)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted() from None


def _levenshtein(a: str, b: str) -> int:
    """cobra's `ld(s, t, ignoreCase=true)`."""
    a, b = a.lower(), b.lower()
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[len(b)]


def suggestions(typed: str, names: list[str]) -> list[str]:
    """cobra's `SuggestionsFor` (SuggestionsMinimumDistance 2): commands within two edits of what was
    typed, or that start with it, in the commands' order."""
    return [n for n in names if _levenshtein(typed, n) <= 2 or n.lower().startswith(typed.lower())]


def unknown_command_text(typed: str, names: list[str]) -> str:
    """cobra's `unknown command "gte" for "instancetype"`, then `Did you mean this?` and a tab before
    each suggestion, as kubectl prints it (after `error: `)."""
    text = f'unknown command "{typed}" for "instancetype"'
    found = suggestions(typed, [n for n in names if n != "help"])
    if found:
        text += "\n\nDid you mean this?\n" + "".join(f"\t{n}\n" for n in found)
    return text.rstrip("\n")


@click.group(cls=LazyGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="instancetype", prog_name="instancetype")
@global_options
@click.pass_context
def cli(ctx: click.Context, state: str | None, v: str | None) -> None:
    """KubeVirt instancetypes and preferences, with or without a cluster."""
    if state == "":
        raise click.ClickException(EMPTY_STATE)
    if v is not None:
        from instancetype.cli import request_log

        request_log.enable(request_log.verbosity(v))
        ctx.call_on_close(request_log.disable)
    ctx.ensure_object(dict)
    ctx.obj["state"] = state
    if ctx.invoked_subcommand is None:      # bare `instancetype` (global options only): help, as kubectl
        click.echo(ctx.get_help())


@click.command("help", context_settings={"ignore_unknown_options": True})
@click.argument("words", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def help_cmd(ctx: click.Context, words: tuple[str, ...]) -> int:
    """Help about any command (cobra's `help [command]`)."""
    root = ctx.find_root()
    if not words:
        click.echo(root.get_help())
        return 0
    if words[0] == "create":
        from instancetype.cli.create import run

        return run([*words[1:2], "--help"])
    command: click.Command | None = root.command
    sub = root
    for i, word in enumerate(words):
        found = command.get_command(sub, word) if isinstance(command, click.Group) else None
        if found is None:
            if i == 0 or isinstance(command, click.Group):
                # cobra: `Unknown help topic [`foo`]`, then the root command's usage; status 0
                click.echo("Unknown help topic [" + " ".join(f"`{w}`" for w in words) + "]")
                click.echo(root.get_help())
                return 0
            break
        command = found
        sub = click.Context(found, info_name=word, parent=sub)
    click.echo(sub.get_help())
    return 0


# The group's options that name the store (the value: whether the option takes one). As kubectl's
# global flags (cobra's persistent flags), they may also come after the verb; a command with an
# option of its own by such a name (`serve --kubeconfig`, `install --context`) keeps it.
STORE_OPTIONS = {name: o.takes_value for o in GLOBAL_OPTIONS if o.names_store for name in o.names}
_GROUP_VALUE_OPTIONS = tuple(name for o in GLOBAL_OPTIONS if o.takes_value for name in o.names)


def _next_word(argv: list[str], i: int, value_options) -> int:
    """The index of the first word from `i` on that is neither an option nor an option's value."""
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
        i += 2 if argv[i] in value_options else 1
    return i


def hoist_store_options(argv: list[str]) -> list[str]:
    """`argv` with the store options found after the verb (and a subgroup's verb) moved before it,
    so that `get vm --kubeconfig K` is `--kubeconfig K get vm`. The command's own options are
    known, so an option's value is never taken for a store option; nothing after `--` moves."""
    i = _next_word(argv, 0, _GROUP_VALUE_OPTIONS)
    if i >= len(argv):
        return argv
    command, own, values, end = cli.get_command(None, argv[i]), set(), set(), i + 1
    while command is not None:
        for p in command.params:
            opts = [*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ())]
            own.update(opts)
            if isinstance(p, click.Option) and not p.is_flag and not p.count:
                values.update(opts)
        if not isinstance(command, click.Group):
            break
        end = _next_word(argv, end, values)
        if end >= len(argv):
            break
        # (click's Group.get_command reads no context)
        command, end = command.get_command(None, argv[end]), end + 1  # type: ignore[arg-type]
    if command is None:
        return argv
    moved: list[str] = []
    rest: list[str] = []
    j = i + 1
    while j < len(argv):
        word = argv[j]
        if word == "--":
            rest.extend(argv[j:])
            break
        name, eq, _ = word.partition("=")
        if name in STORE_OPTIONS and name not in own and (eq == "" or STORE_OPTIONS[name]):
            width = 2 if STORE_OPTIONS[name] and not eq else 1
            if j + width <= len(argv):
                moved.extend(argv[j:j + width])
                j += width
                continue
        width = 2 if word in values else 1
        rest.extend(argv[j:j + width])
        j += width
    return argv[:i] + moved + [argv[i]] + rest


def run_click(argv: list[str]) -> int:
    """Run one command line other than `create`; returns the exit status. Errors are printed here,
    one line each."""
    try:
        argv = hoist_store_options(argv)      # (imports the command's module)
        gcpause.started()
        rv = cli.main(args=argv, prog_name="instancetype", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except UnknownCommand as exc:
        click.echo(f"error: {exc.format_message()}", err=True)
        return 1
    except click.UsageError as exc:
        # kubectl's two lines, not click's usage block: what is wrong, and where help is.
        command = exc.ctx.command_path if exc.ctx is not None else "instancetype"
        message = exc.format_message()
        if isinstance(exc, click.NoSuchOption):
            message = f"unknown flag: {exc.option_name}"   # as kubectl and virtctl (pflag) say it
        click.echo(f"error: {message}", err=True)
        click.echo(f"See '{command} --help' for usage.", err=True)
        return 1
    except click.ClickException as exc:
        click.echo(f"error: {exc.format_message()}", err=True)
        return 1
    except click.exceptions.Abort as exc:
        # a prompt's end of input or Ctrl-C (click wraps both): the status says which, nothing printed
        return 130 if isinstance(exc.__context__, KeyboardInterrupt) else 1
    except (KeyboardInterrupt, Interrupted):
        return 130
    except OSError:
        raise   # the output failed, or the machine refused: run_guarded says which, in one line
    except Exception as exc:  # the last line of defence: never a traceback
        from instancetype.errors import Error

        if isinstance(exc, Error):
            from instancetype.cli.kubectl import error_line

            click.echo(error_line(str(exc)), err=True)
        elif isinstance(exc, RecursionError):
            click.echo("error: the input is nested too deeply to process", err=True)
        else:
            click.echo(f"error: internal error: this is a bug in instancetype: {type(exc).__name__}: {exc}", err=True)
        return 1
    return rv if isinstance(rv, int) else 0
