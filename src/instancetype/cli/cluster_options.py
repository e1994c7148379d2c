"""The group's `--kubeconfig`, `--cluster` and `--context`: which cluster a command talks to.

A cluster is never chosen silently: without these options every command uses the embedded store
(`--state`), so no one writes to a production cluster by accident. Light on imports: the group
loads this module on every command.
"""
from __future__ import annotations

from typing import Any

import click

def remember_option(ctx: Any, param: Any, value: Any) -> Any:
    """click callback of the group's `--kubeconfig`, `--cluster` and `--context`: kept in
    `ctx.meta` for `cluster_of` (the group's own signature stays as it is)."""
    if value not in (None, False):
        ctx.meta[f"instancetype.{param.name}"] = value
    return value


def cluster_choice(ctx: Any) -> tuple[str | None, str | None] | None:
    """(kubeconfig, context) when the command line names a cluster, else None (the embedded store).
    `--cluster` and `--context` alone use kubectl's kubeconfig: $KUBECONFIG, else ~/.kube/config."""
    if ctx is None:
        return None
    meta = ctx.find_root().meta
    kubeconfig = meta.get("instancetype.kubeconfig")
    use = meta.get("instancetype.cluster")
    context = meta.get("instancetype.context")
    if kubeconfig is None and not use and context is None:
        return None
    return kubeconfig, context


def cluster_options(fn: Any) -> Any:
    """The three options, for the `instancetype` group (kubectl's flags of the same names)."""
    for opt in reversed([
        click.option("--kubeconfig", default=None, metavar="PATH", expose_value=False, callback=remember_option,
                     help="Use the Kubernetes cluster of this kubeconfig instead of the embedded store."),
        click.option("--cluster", "cluster", is_flag=True, default=False, expose_value=False,
                     callback=remember_option,
                     help="Use the cluster of kubectl's kubeconfig ($KUBECONFIG, else ~/.kube/config)."),
        click.option("--context", default=None, metavar="NAME", expose_value=False, callback=remember_option,
                     help="The kubeconfig context to use (implies a cluster)."),
    ]):
        fn = opt(fn)
    return fn
