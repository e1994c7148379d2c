"""virtctl `start`, `stop`, `restart` and `expand --vm` on the embedded cluster.

Messages are virtctl's (`pkg/virtctl/vm`): `VM <name> was scheduled to <verb>` on stdout; errors
printed raw as virtctl's `Execute` prints them (`Error starting VirtualMachine <err>`, `error
stopping VirtualMachine <err>`, `error restarting VirtualMachine: <err>`, the `force` variants
with `--force --grace-period=0`), exit 1. `--dry-run` runs the request and keeps nothing.
"""
from __future__ import annotations

import sys

import click

from .completers import complete_vms
from .kubectl import CommandError, cluster_of, namespace_option, reports_errors, undone

# action -> (error format, error format with --force); `{}` is the API error.
_ERRORS = {
    "start": ("Error starting VirtualMachine {}", None),
    "stop": ("error stopping VirtualMachine {}", "error force stopping VirtualMachine: {}"),
    "restart": ("error restarting VirtualMachine: {}", "error force restarting VirtualMachine: {}"),
}


def _vm_action(ctx: click.Context, action: str, args: tuple[str, ...], namespace: str, *,
               dry_run: bool = False, force: bool = False, grace_period: int | None = None,
               paused: bool = False) -> int:
    from instancetype.errors import Error
    from instancetype.store.base import NotFound

    if len(args) != 1:     # cobra.ExactArgs(1)
        raise CommandError(f"accepts 1 arg(s), received {len(args)}")
    if (grace_period is not None) != force:
        raise CommandError("Must both use --force=true and set --grace-period.")
    name = args[0]
    template = _ERRORS[action][1 if force else 0]
    assert template is not None     # start has no --force
    with cluster_of(ctx) as cluster:
        try:
            with undone(cluster.store) if dry_run else cluster.store.transaction():
                if action == "start":
                    cluster.start(name, namespace, paused=paused)
                else:       # StopOptions.gracePeriod / RestartOptions.gracePeriodSeconds with --force
                    getattr(cluster, action)(name, namespace, grace_period=grace_period if force else None)
        except NotFound as e:
            # The subresource handler answers with the singular resource (virt-api fetchVirtualMachine).
            text = f'virtualmachine.kubevirt.io "{name}" not found' if getattr(e, "kind", None) in (
                None, "VirtualMachine") else str(e)
            raise CommandError(template.format(text)) from None
        except Error as e:
            raise CommandError(template.format(e)) from None
    sys.stdout.write(f"VM {name} was scheduled to {action}\n")
    return 0


def _vm_command(action: str, doc: str, *, force_flags: bool):
    """virtctl's `start` (`--paused`) / `stop` / `restart` (these two take `--force --grace-period`)."""
    def cmd(ctx, args, namespace, dry_run, force=False, grace_period=None, paused=False):
        return _vm_action(ctx, action, args, namespace, dry_run=dry_run, force=force, grace_period=grace_period,
                          paused=paused)

    cmd.__doc__ = doc
    if not force_flags:
        cmd = click.option("--paused", is_flag=True, help="Start the virtual machine in paused state.")(cmd)
    if force_flags:
        cmd = click.option("--grace-period", type=int, default=None, help="With --force: only 0 is supported.")(cmd)
        cmd = click.option("--force", is_flag=True, help="With --grace-period=0: stop the VMI at once.")(cmd)
    cmd = click.option("--dry-run", is_flag=True, help="Send the request, keep nothing.")(cmd)
    cmd = namespace_option(cmd)
    cmd = click.argument("args", nargs=-1, shell_complete=complete_vms)(cmd)
    return click.command(action)(click.pass_context(reports_errors(cmd)))


start_cmd = _vm_command("start", "Start a VirtualMachine (virtctl start).", force_flags=False)
stop_cmd = _vm_command("stop", "Stop a VirtualMachine (virtctl stop).", force_flags=True)
restart_cmd = _vm_command("restart", "Restart a VirtualMachine (virtctl restart).", force_flags=True)


def _print_expanded(ctx: click.Context, name: str, ns: str, fmt: str, expand) -> int:
    """`expand(cluster)` printed as `expand -f` prints (YAML or JSON); its error as virtctl words it."""
    from instancetype.errors import Error

    from .output import objects_text

    with cluster_of(ctx) as cluster:
        try:
            expanded = expand(cluster)
        except Error as e:
            raise CommandError(f"error expanding VirtualMachine - {name} in namespace - {ns}: {e}") from None
    sys.stdout.write(objects_text([expanded], fmt, as_get=True))
    return 0


def _check_expand_format(fmt: str) -> None:
    if fmt not in ("yaml", "json"):
        raise CommandError(f"error not supported output format defined: {fmt}")


@reports_errors
def expand_stored(ctx: click.Context, name: str, namespace: str, fmt: str) -> int:
    """virtctl `expand --vm NAME`: the stored VM expanded against the stored objects."""
    _check_expand_format(fmt)
    return _print_expanded(ctx, name, namespace, fmt, lambda cluster: cluster.expand_vm(name, namespace))


@reports_errors
def expand_posted(ctx: click.Context, path: str, namespace: str, fmt: str) -> int:
    """virtctl `expand --file FILE`: the VM in the file, not stored, expanded in the namespace
    against the stored objects (KubeVirt's `expand-vm-spec`)."""
    import yaml

    _check_expand_format(fmt)
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as e:
        raise CommandError(f"error reading file open {path}: {(e.strerror or str(e)).lower()}") from None
    try:
        vm = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise CommandError(f"error decoding VirtualMachine {e}") from None
    if not isinstance(vm, dict):
        raise CommandError("error decoding VirtualMachine: not a YAML or JSON object")
    meta = vm.get("metadata")
    name = meta.get("name", "") if isinstance(meta, dict) else ""
    return _print_expanded(ctx, name, namespace, fmt, lambda cluster: cluster.expand_spec(vm, namespace))
