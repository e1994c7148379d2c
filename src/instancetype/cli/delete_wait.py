"""kubectl delete's options and its wait (k8s.io/kubectl pkg/cmd/delete: DeleteFlags.ToOptions,
DeleteOptions.Complete / Validate / DeleteResult; pkg/cmd/wait IsDeleted).

`--cascade` (parseCascadingFlag): background, foreground, orphan, or the deprecated booleans
with their warning. `--grace-period` -1 (not sent), 0 without `--force` becomes 1, `--now` is 1,
`--force` alone is 0 (warned). `--wait` (a Go bool, default true): once every object was
deleted, each is waited for until it is gone or another object (another uid) holds its name,
within one `--timeout` shared by all (0: a week). The embedded store changes only when a command
runs (its own, or another process's), so the wait re-reads rather than watches, as `wait` does.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any

from instancetype.api import kinds

from .kubectl import CommandError, Failure, api_failure
from .output import warn
from .wait import POLL_SECONDS, WEEK_SECONDS, parse_go_duration

CASCADES = {"background": "Background", "foreground": "Foreground", "orphan": "Orphan"}
_TRUE, _FALSE = ("1", "t", "T", "TRUE", "true", "True"), ("0", "f", "F", "FALSE", "false", "False")
FORCE_WARNING = ("Immediate deletion does not wait for confirmation that the running resource has been "
                 "terminated. The resource may continue to run on the cluster indefinitely.")


@dataclass(frozen=True)
class DeleteOptions:
    propagation: str          # DeleteOptions.propagationPolicy
    grace_period: int         # -1: not sent
    wait: bool
    timeout: float            # seconds


@dataclass(frozen=True)
class Deleted:
    """One object the API server accepted the deletion of (`uid`: as its answer named it)."""

    resource: kinds.Resource
    name: str
    namespace: str | None
    uid: str | None


def _go_bool(flag: str, text: str) -> bool:
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise CommandError(f'error: invalid argument "{text}" for "--{flag}" flag: strconv.ParseBool: parsing '
                       f'"{text}": invalid syntax')


def _propagation(cascade: str) -> str:
    """parseCascadingFlag."""
    if cascade in _TRUE or cascade in _FALSE:
        replacement = "background" if cascade in _TRUE else "orphan"
        sys.stderr.write(f"warning: --cascade={cascade} is deprecated (boolean value) and can be replaced with "
                         f"--cascade={replacement}.\n")
        return CASCADES[replacement]
    if cascade not in CASCADES:
        raise CommandError(f'error: invalid cascade value ({cascade}). Must be "background", "foreground", or "orphan"')
    return CASCADES[cascade]


def delete_options(cascade: str, wait: str, timeout: str, grace_period: int, now: bool, force: bool) -> DeleteOptions:
    """DeleteFlags.ToOptions, then Complete and Validate, in kubectl's order."""
    propagation = _propagation(cascade)
    waits = _go_bool("wait", wait)
    seconds = parse_go_duration(timeout)
    if now:
        if grace_period != -1:
            raise CommandError("error: --now and --grace-period cannot be specified together")
        grace_period = 1
    if grace_period == 0 and not force:
        # kubectl: --grace-period=0 is turned into 1 to prevent accidental data loss; --force bypasses it
        grace_period = 1
    if force and grace_period < 0:
        grace_period = 0
    if grace_period == 0 and force:
        warn(FORCE_WARNING)
    elif grace_period > 0 and force:
        raise CommandError("error: --force and --grace-period greater than 0 cannot be specified together")
    return DeleteOptions(propagation, grace_period, waits, WEEK_SECONDS if seconds == 0 else seconds)


def wait_gone(cluster: Any, deleted: list[Deleted], timeout: float) -> list[Failure]:
    """IsDeleted for each object, within one deadline: gone, or its name taken by another uid."""
    from instancetype.store.base import NotFound

    failures: list[Failure] = []
    deadline = time.monotonic() + max(0.0, timeout)
    for d in deleted:
        while True:
            try:
                obj = cluster.get(d.resource.kind, d.name, d.namespace)
            except NotFound:
                break
            except Exception as e:   # noqa: BLE001 -- kubectl's wait fails on any read error
                failures.append(api_failure(e))
                break
            if d.uid and ((obj.get("metadata") or {}).get("uid")) != d.uid:
                break
            if time.monotonic() >= deadline:
                where = f"{d.resource.plural}/{d.name}"
                failures.append(Failure(f"error: timed out waiting for the condition on {where}",
                                        f"timed out waiting for the condition on {where}"))
                break
            time.sleep(POLL_SECONDS)
    return failures
