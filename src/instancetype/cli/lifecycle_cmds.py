"""virtctl `pause vm|vmi NAME`, `unpause vm|vmi NAME` and `soft-reboot NAME`
(pkg/virtctl/pause, unpause, softreboot), on the embedded store or a cluster.

Lines as virtctl prints them: `VMI <name> was scheduled to pause|unpause|soft-reboot` on stdout;
errors raw, exit 1 (`Error pausing VirtualMachineInstance <name>: <err>`, ...). For `vm`, the VM
is read first (`Error getting VirtualMachine <name>: <err>`) and the VMI of its name is the one
acted on; pause words a missing VMI by the VM's run strategy (handleNotFoundError).
`--dry-run` (pause, unpause) prints `Dry Run execution` first (virtctl's `cmd.Println`, on stdout).
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from .completers import complete_vms
from .kubectl import CommandError, cluster_of, namespace_option, reports_errors, undone

if TYPE_CHECKING:
    from instancetype.store.base import NotFound

_KINDS = {"virtualmachine": "vm", "virtualmachines": "vm", "vm": "vm", "vms": "vm",
          "virtualmachineinstance": "vmi", "virtualmachineinstances": "vmi", "vmi": "vmi", "vmis": "vmi"}
_VERB = {"pause": "pausing", "unpause": "unpausing"}


def _not_found(e: NotFound, resource: str, name: str) -> str:
    """The subresource handler's wording of a missing object (virt-api's singular resource)."""
    return f'{resource} "{name}" not found' if e.kind in (
        "", "VirtualMachine", "VirtualMachineInstance", "virtualmachineinstance") else str(e)


def _run(ctx: click.Context, action: str, name: str, namespace: str, dry_run: bool, *, vm: bool) -> None:
    from instancetype.controller.vmsync.state import run_strategy
    from instancetype.errors import Error
    from instancetype.store.base import NotFound

    verb = _VERB.get(action, "soft rebooting")
    with cluster_of(ctx) as cluster:
        if vm:
            try:
                stored = cluster.get("VirtualMachine", name, namespace)
            except Error as e:
                raise CommandError(f"Error getting VirtualMachine {name}: {e}") from None
        try:
            with undone(cluster.store) if dry_run else cluster.store.transaction():
                {"pause": cluster.pause, "unpause": cluster.unpause,
                 "soft-reboot": cluster.soft_reboot}[action](name, namespace)
        except NotFound as e:
            if vm and action == "pause":
                if run_strategy(stored) == "Halted":
                    raise CommandError(f"Error pausing VirtualMachineInstance {name}. "
                                       f"VirtualMachine {name} is not set to run") from None
                raise CommandError(f"Error pausing VirtualMachineInstance {name}, it was not found") from None
            raise CommandError(f"Error {verb} VirtualMachineInstance {name}: "
                               f"{_not_found(e, 'virtualmachineinstance.kubevirt.io', name)}") from None
        except Error as e:
            raise CommandError(f"Error {verb} VirtualMachineInstance {name}: {e}") from None


def _pause_command(action: str, doc: str):
    def cmd(ctx, args, namespace, dry_run):
        if len(args) != 2:     # cobra.ExactArgs(2)
            raise CommandError(f"accepts 2 arg(s), received {len(args)}")
        kind, name = _KINDS.get(args[0].lower()), args[1]
        if dry_run:
            sys.stdout.write("Dry Run execution\n")
        if kind is not None:    # virtctl's switch has no default: any other type does nothing
            _run(ctx, action, name, namespace, dry_run, vm=kind == "vm")
        sys.stdout.write(f"VMI {name} was scheduled to {action}\n")
        return 0

    cmd.__doc__ = doc
    cmd = click.option("--dry-run", is_flag=True, help="Check the request, change nothing.")(cmd)
    cmd = namespace_option(cmd)
    cmd = click.argument("args", nargs=-1, shell_complete=complete_vms)(cmd)
    return click.command(action)(click.pass_context(reports_errors(cmd)))


pause_cmd = _pause_command("pause", "Pause a VM's or VMI's guest: pause vm|vmi NAME (virtctl pause).")
unpause_cmd = _pause_command("unpause", "Resume a paused guest: unpause vm|vmi NAME (virtctl unpause).")


@click.command("soft-reboot")
@click.argument("args", nargs=-1, shell_complete=complete_vms)
@namespace_option
@click.pass_context
@reports_errors
def soft_reboot_cmd(ctx: click.Context, args: tuple[str, ...], namespace: str) -> int:
    """Soft reboot a VirtualMachineInstance (virtctl soft-reboot)."""
    if len(args) != 1:         # cobra.ExactArgs(1)
        raise CommandError(f"accepts 1 arg(s), received {len(args)}")
    _run(ctx, "soft-reboot", args[0], namespace, False, vm=False)
    sys.stdout.write(f"VMI {args[0]} was scheduled to soft-reboot\n")
    return 0
