"""Shell completion callbacks of the resource arguments (their module loads only when the shell asks)."""
from __future__ import annotations

import click


def complete_args(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """Shell completion of `TYPE [NAME...]` / `TYPE/NAME` (loaded only when the shell asks)."""
    from .completion_cmd import complete_resource_args

    return complete_resource_args(ctx, param, incomplete)


def complete_vms(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    from .completion_cmd import complete_vm_names

    return complete_vm_names(ctx, param, incomplete)
