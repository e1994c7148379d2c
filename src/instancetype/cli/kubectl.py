"""What the kubectl-style commands share: the cluster, resource arguments, and kubectl's error texts.

kubectl prints an API error as `Error from server (<Reason>): <message>` (cmdutil
`StandardErrorMessage`), anything else as `error: <message>`; every error exits 1.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import click

from instancetype.api.kinds import Resource, resource_for

STDIN_SOURCE = "STDIN"   # kubectl's name for `-f -` in its messages


class CommandError(Exception):
    """A failure already worded for the user (printed as is, exit 1)."""


def open_cluster(ctx: click.Context):
    """The embedded cluster at `--state` / `$INSTANCETYPE_STATE` / the default path."""
    from instancetype.controller.cluster import Cluster

    state = (ctx.find_root().obj or {}).get("state") if ctx is not None else None
    return Cluster.open(state)


def api_error_text(e: Any) -> str:
    """An API error as kubectl prints it (cmdutil `StandardErrorMessage`)."""
    reason = getattr(e, "reason", "")
    if reason == "Invalid":
        return f"The {e}" if ' is invalid' in str(e) else f"The request is invalid: {e}"
    if reason:
        return f"Error from server ({reason}): {e}"
    return f"error: {e}"


def fail(message: str) -> None:
    sys.stderr.write(message if message.endswith("\n") else message + "\n")


def resource_or_error(word: str) -> Resource:
    res = resource_for(word)
    if res is None:
        raise CommandError(f'error: the server doesn\'t have a resource type "{word}"')
    return res


@dataclass
class Target:
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
            if not name:
                raise CommandError(f"error: arguments in resource/name form must have a single resource and name")
            res = resource_or_error(word)
            if targets and targets[-1].resource is res:
                targets[-1].names.append(name)
            else:
                targets.append(Target(res, [name]))
        return targets
    words = [w for w in args[0].split(",") if w]
    names = list(args[1:])
    resources = [resource_or_error(w) for w in words]
    if names and len(resources) > 1:
        return [Target(r, list(names)) for r in resources]
    return [Target(r, list(names)) for r in resources]


def namespace_of(res: Resource, namespace: str | None) -> str | None:
    """The namespace a request goes to: none for cluster-scoped kinds, `-n` or `default` otherwise."""
    if not res.namespaced:
        return None
    return namespace or "default"


