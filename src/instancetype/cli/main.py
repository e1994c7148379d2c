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

import click

from instancetype.cli import EMPTY_STATE
from instancetype.cli.cluster_options import cluster_options

# command name -> (module, attribute, one-line help). Modules are imported on use.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "expand": ("instancetype.cli.offline", "expand_cmd", "Expand VMs against instancetypes and preferences."),
    "validate": ("instancetype.cli.offline", "validate_cmd", "Run KubeVirt's admission on manifests."),
    "convert": ("instancetype.cli.offline", "convert_cmd", "Convert v1alpha1/v1alpha2/flavor objects to v1beta1."),
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
    "image-upload": ("instancetype.cli.image_upload", "image_upload_cmd", "Upload a disk image to a DataVolume or PVC (virtctl image-upload)."),
    "patch": ("instancetype.cli.patch_cmd", "patch_cmd", "Update fields of objects with a patch (kubectl patch)."),
    "set": ("instancetype.cli.set_cmd", "set_cmd", "Give VMs another instancetype or preference (kubectl set)."),
    "label": ("instancetype.cli.label_cmd", "label_cmd", "Set or remove labels (kubectl label)."),
    "annotate": ("instancetype.cli.label_cmd", "annotate_cmd", "Set or remove annotations (kubectl annotate)."),
    "edit": ("instancetype.cli.edit_cmd", "edit_cmd", "Edit an object in $KUBE_EDITOR / $EDITOR (kubectl edit)."),
    "api-resources": ("instancetype.cli.explain_cmd", "api_resources_cmd", "The kinds the store serves (kubectl api-resources)."),
    "explain": ("instancetype.cli.explain_cmd", "explain_cmd", "Fields of a kind, from its schema (kubectl explain)."),
    "completion": ("instancetype.cli.completion_cmd", "completion_cmd", "Shell completion for bash or zsh."),
    "serve": ("instancetype.cli.serve_cmd", "serve_cmd", "Serve KubeVirt's admission webhooks for a cluster (HTTPS)."),
    "controller": ("instancetype.cli.controller_cmd", "controller_cmd", "Run the VM controller on a cluster (virt-controller)."),
    "install": ("instancetype.cli.cluster_cmds", "install_cmd", "Install the system on a Kubernetes cluster (virt-operator)."),
    "uninstall": ("instancetype.cli.cluster_cmds", "uninstall_cmd", "Remove what install put on a cluster."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(set(COMMANDS) | {"create"} | set(self.commands))

    def get_command(self, ctx, name):
        if name in self.commands:
            return self.commands[name]
        if name == "create":
            return _create_help_stub
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


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--state", envvar="INSTANCETYPE_STATE", default=None, metavar="PATH",
              help="The embedded store's state file (default: $XDG_DATA_HOME/instancetype/state.db).")
@click.version_option(package_name="instancetype", prog_name="instancetype")
@cluster_options
@click.pass_context
def cli(ctx: click.Context, state: str | None) -> None:
    """KubeVirt instancetypes and preferences, with or without a cluster."""
    if state == "":
        raise click.ClickException(EMPTY_STATE)
    ctx.ensure_object(dict)
    ctx.obj["state"] = state


@click.command("create", context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
               add_help_option=False)
def _create_help_stub() -> None:
    """Create a VirtualMachine, an instancetype or a preference manifest (as virtctl create)."""


# The group's options that name the store (the value: whether the option takes one). As kubectl's
# global flags (cobra's persistent flags), they may also come after the verb; a command with an
# option of its own by such a name (`serve --kubeconfig`, `install --context`) keeps it.
STORE_OPTIONS = {"--state": True, "--kubeconfig": True, "--context": True, "--cluster": False}
_GROUP_VALUE_OPTIONS = ("--state", "--kubeconfig", "--context", "-n", "--namespace")


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
        argv = hoist_store_options(argv)
        rv = cli.main(args=argv, prog_name="instancetype", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
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
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        return 1
    except KeyboardInterrupt:
        return 130
    except OSError:
        raise   # the output failed, or the machine refused: run_guarded says which, in one line
    except Exception as exc:  # the last line of defence: never a traceback
        from instancetype.errors import Error

        if isinstance(exc, Error):
            click.echo(f"error: {exc}", err=True)
        elif isinstance(exc, RecursionError):
            click.echo("error: the input is nested too deeply to process", err=True)
        else:
            click.echo(f"error: internal error: this is a bug in instancetype: {type(exc).__name__}: {exc}", err=True)
        return 1
    return rv if isinstance(rv, int) else 0
