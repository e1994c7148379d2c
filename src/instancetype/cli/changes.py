"""What `patch`, `label`, `annotate` and `edit` share: the objects named on the command line, and
writing a changed object back through the cluster's update path (admission, optimistic
concurrency, the controller), with kubectl's texts for what is refused.

kubectl sends these changes as PATCH requests computed from the object it read; here the changed
object is written with the read object's resourceVersion as a precondition, which is what a
PATCH does on the API server (the patch is applied to the stored object, then admitted).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from instancetype.api.kinds import Resource
from instancetype.store.base import Invalid

from .kubectl import CommandError, api_error_text, check_all_namespaces, namespace_of, parse_targets


@dataclass
class Found:
    resource: Resource
    obj: dict

    @property
    def name(self) -> str:
        return (self.obj.get("metadata") or {}).get("name", "")

    @property
    def namespace(self) -> str | None:
        return (self.obj.get("metadata") or {}).get("namespace")

    def printed(self, operation: str, suffix: str = "") -> str:
        """kubectl's name printer with an operation: `virtualmachine.kubevirt.io/vm1 labeled`."""
        return f"{self.resource.qualified_singular}/{self.name} {operation}{suffix}\n"


def split_pairs(args: tuple[str, ...], verb: str) -> tuple[list[str], list[str]]:
    """cmdutil `GetResourcesAndPairs`: words with `=` or ending in `-` are changes; resources
    come first."""
    resources: list[str] = []
    pairs: list[str] = []
    first_pair = False
    for a in args:
        if "=" in a or a.endswith("-"):
            pairs.append(a)
            first_pair = True
        elif not first_pair:
            resources.append(a)
        else:
            raise CommandError(f"error: all resources must be specified before {verb} changes: {a}")
    return resources, pairs


def select(cluster: Any, words: list[str], namespace: str | None, *, all_namespaces: bool = False,
           selector: str | None = None, field_selector: str | None = None, select_all: bool = False,
           verb: str = "label") -> tuple[list[Found], list[str]]:
    """The objects `TYPE NAME...`, `TYPE/NAME...`, or `TYPE` with `-l`/`--all` name (cli-runtime's
    builder with ResourceTypeOrNameArgs); the NotFound errors are collected as kubectl goes on."""
    from instancetype.store.base import NotFound

    targets = parse_targets(words, verb=verb)
    check_all_namespaces(targets, all_namespaces)
    named = any(t.names for t in targets)
    if named and (selector or field_selector):
        raise CommandError("error: name cannot be provided when a selector is specified")
    if not named and not (selector or field_selector or select_all):
        raise CommandError("error: resource(s) were provided, but no name was specified")
    found: list[Found] = []
    errors: list[str] = []
    for t in targets:
        if t.names:
            ns = namespace_of(t.resource, namespace)
            for name in t.names:
                try:
                    found.append(Found(t.resource, cluster.get(t.resource.kind, name, ns)))
                except NotFound as e:
                    errors.append(api_error_text(e))
            continue
        ns = None if all_namespaces else namespace_of(t.resource, namespace)
        for o in cluster.list(t.resource.kind, ns, label_selector=selector or None,
                              field_selector=field_selector or None):
            found.append(Found(t.resource, o))
    return found, errors


def write_failure_text(e: Exception, obj: dict) -> str:
    """A refused write as kubectl prints the API server's answer to its PATCH."""
    from instancetype.lifecycle.admission import Refused

    if isinstance(e, Refused):
        result, webhook = e.result, e.webhook
        causes = list(result.causes or ())
        if not webhook or causes:
            from .output import refusal_text

            return refusal_text(result, webhook=webhook, obj=obj)
        return f'Error from server (BadRequest): admission webhook "{webhook}" denied the request: {result.message}'
    if isinstance(e, Invalid) and e.causes and (e.kind or e.name):
        from .apply_cmd import invalid_failure

        return invalid_failure(e.kind, e.name, e.causes, verb="patching", source="").alone
    return api_error_text(e)


def save(cluster: Any, current: dict, new: dict) -> dict:
    """Write `new` over `current` through the cluster's update path (admission included), with
    `current`'s resourceVersion as the precondition. Returns the stored object."""
    new = dict(new)
    meta = dict(new.get("metadata") or {})
    meta["resourceVersion"] = (current.get("metadata") or {}).get("resourceVersion")
    new["metadata"] = meta
    return cluster.update(new).object


def write_change(cluster: Any, old: dict, new: dict, mode: str, errors: list[str]) -> dict | None:
    """`new` written over `old` (a dry run of `mode` "client"/"server" keeps nothing): the stored
    object, or None with kubectl's line for a refusal appended to `errors`."""
    from instancetype.errors import StoreError
    from instancetype.store.base import StateFileError

    from .kubectl import undone

    try:
        if mode != "none":
            with undone(cluster.store):
                return save(cluster, old, new)
        return save(cluster, old, new)
    except CommandError:
        raise
    except StoreError as e:
        if isinstance(e, StateFileError):
            raise
        errors.append(write_failure_text(e, new))
        return None
