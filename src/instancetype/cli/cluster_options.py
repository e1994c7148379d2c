"""The group's `--kubeconfig`, `--cluster` and `--context`: which cluster a command talks to; and
the one rule for the namespace of a command without `-n` (`default_namespace`).

A cluster is never chosen silently: without these options every command uses the embedded store
(`--state`), so no one writes to a production cluster by accident. On a cluster, the namespace is
kubectl's: `-n`, else that of the kubeconfig's context (lightkube's loader reads it), else
`default`. Light on imports: the group loads this module on every command, and the kubeconfig is
read only when a cluster is named (once per command: the store reuses it).
"""
from __future__ import annotations

from typing import Any

import click

from instancetype.api.kinds import DEFAULT_NAMESPACE


def remember_option(ctx: Any, param: Any, value: Any) -> Any:
    """click callback of the group's global options: kept in `ctx.meta` (`instancetype.<name>`) for
    `cluster_of`, `resolve_namespace` and the state file's path."""
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




def kube_config(ctx: Any) -> Any:
    """The lightkube config (`SingleConfig`) of the cluster the command line names, loaded once per
    command (the namespace resolution and the store share it); None on the embedded store."""
    choice = cluster_choice(ctx)
    if choice is None:
        return None
    root = ctx.find_root()
    if root.meta.get("instancetype.state") and \
            root.get_parameter_source("state") == click.core.ParameterSource.COMMANDLINE:
        raise click.ClickException("--state is the embedded store's; it cannot be used with a cluster "
                                   "(--kubeconfig, --cluster, --context)")
    meta = root.meta
    if "instancetype.kube_config" not in meta:
        from instancetype.gcpause import gc_paused

        with gc_paused(keep=True):       # the Kubernetes client's imports (lightkube, httpx2, PyYAML)
            from instancetype.store.kube.client import load_config

            meta["instancetype.kube_config"] = load_config(*choice)
    return meta["instancetype.kube_config"]


def default_namespace(ctx: Any) -> str:
    """The namespace of a command without `-n`, as kubectl picks it (clientcmd
    `DirectClientConfig.Namespace`): on a cluster, the namespace of the kubeconfig's context
    (`--context`, else its current one), else `default`; on the embedded store, `default`."""
    config = kube_config(ctx)
    return DEFAULT_NAMESPACE if config is None else (config.namespace or DEFAULT_NAMESPACE)


def resolve_namespace(ctx: Any, param: Any, value: Any) -> str:
    """click callback of every command's `-n/--namespace`: the namespace the command acts in, never
    None. Whether `-n` was given (kubectl's `enforceNamespace`) is kept for `namespace_given`;
    `-n ""` counts as not given, as in kubectl."""
    if not (isinstance(value, str) and value):
        value = ctx.meta.get("instancetype.namespace")      # the group's `-n`, before the verb
    given = isinstance(value, str) and value != ""
    ctx.meta["instancetype.namespace_given"] = given
    return value if given else default_namespace(ctx)


def namespace_given(ctx: Any) -> bool:
    """True when the command line has `-n NS` (a manifest's own namespace must then be NS)."""
    return bool(ctx is not None and ctx.meta.get("instancetype.namespace_given"))


def global_options(fn: Any) -> Any:
    """The global options of `global_options.GLOBAL_OPTIONS` as options of the `instancetype` group
    (kubectl's global flags of the same names: `instancetype -n NS get vm` is `instancetype get vm
    -n NS`). Each value is kept in `ctx.meta` by `remember_option`; only `--state` reaches the group's function."""
    from .global_options import GLOBAL_OPTIONS

    for o in reversed(GLOBAL_OPTIONS):
        if o.takes_value:
            opt = click.option(*o.names, o.dest, default=None, metavar=o.metavar, envvar=o.envvar,
                               expose_value=o.exposed, callback=remember_option, help=o.help)
        else:
            opt = click.option(*o.names, o.dest, is_flag=True, default=False, envvar=o.envvar,
                               expose_value=o.exposed, callback=remember_option, help=o.help)
        fn = opt(fn)
    return fn
