"""kubectl `wait --for=condition=X[=value] | --for=jsonpath='{...}'[=value] | --for=delete [--timeout]`.

As kubectl (`pkg/cmd/wait`): the timeout is a Go duration shared by all the objects (default
30s; `0` checks once and fails with `condition not met for <resource>/<name>`; negative waits a
week); a met object prints `<kind>.<group>/<name> condition met`; a timeout is `timed out
waiting for the condition on <resource>/<name>`; a condition is not met while its
`observedGeneration` (or the status's) is behind `metadata.generation`. `--for=delete` on an
object that is already gone is a silent success. The embedded store changes only when a command
runs, so the loop re-reads the object rather than watching.
"""
from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from typing import Any

import click

from .completers import complete_args
from .kubectl import (
    CommandError,
    Failure,
    api_failure,
    check_all_namespaces,
    cluster_of,
    namespace_of,
    namespace_option,
    parse_targets,
    report,
    reports_errors,
)

POLL_SECONDS = 0.1
WEEK_SECONDS = 168 * 3600
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"([-+]?)((?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+)")
_PART = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """Go's `time.ParseDuration` in seconds: `30s`, `1m30s`, `500ms`, `-1s`, `0`."""
    if text in ("0", "+0", "-0"):
        return 0.0
    m = _DURATION.fullmatch(text)
    if not m:
        raise CommandError(f'error: invalid argument "{text}" for "--timeout" flag: time: invalid duration "{text}"')
    total = sum(float(n) * _UNITS[u] for n, u in _PART.findall(m.group(2)))
    return -total if m.group(1) == "-" else total


# --- conditions -------------------------------------------------------------------------------------

Check = Callable[[dict], bool]


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def condition_check(name: str, want: str) -> Check:
    """kubectl `ConditionalWait.checkCondition`: the first condition of that type (any case) with a
    status decides, unless its observedGeneration lags behind the object's generation."""
    def check(obj: dict) -> bool:
        status = got if isinstance(got := obj.get("status"), dict) else {}
        for c in status.get("conditions") or ():
            if not isinstance(c, dict) or not isinstance(c.get("type"), str) or c["type"].lower() != name.lower():
                continue
            if not isinstance(c.get("status"), str):
                continue
            generation = _int((obj.get("metadata") or {}).get("generation"))
            observed = _int(c.get("observedGeneration"))
            if observed is None:
                observed = _int(status.get("observedGeneration"))
            if generation is not None and observed is not None and observed < generation:
                return False
            return c["status"].lower() == want.lower()
        return False
    return check


_RELAXED = re.compile(r"^\{\.?([^{}]+)\}$|^\.?([^{}]+)$")      # kubectl get's jsonRegexp
_STEP = re.compile(r"\.([^.\[\]]+)|\[(-?[0-9]+)\]")


def _relaxed_jsonpath(expr: str) -> list[str | int]:
    """kubectl `RelaxedJSONPathExpression` (`{.a.b}`, `.a.b`, `a.b`), for field paths with `[N]`
    indexes: the forms `wait` is used with (filters and wildcards are not supported here)."""
    m = _RELAXED.match(expr)
    if m is None:
        raise CommandError("error: unexpected path string, expected a 'name1.name2' or '.name1.name2' or "
                           "'{name1.name2}' or '{.name1.name2}'")
    body = "." + (m.group(1) or m.group(2))
    steps: list[str | int] = []
    pos = 0
    for step in _STEP.finditer(body):
        if step.start() != pos:
            break
        steps.append(step.group(1) if step.group(1) is not None else int(step.group(2)))
        pos = step.end()
    if pos != len(body):
        raise CommandError(f"error: unsupported jsonpath expression {expr!r}: only field names and [N] indexes")
    return steps


def jsonpath_check(spec: str) -> Check:
    """kubectl `JSONPathWait`: `{.path}` present (any value), or `{.path}=value` compared as text."""
    parts = spec.split("=")
    if len(parts) > 2:
        raise CommandError("error: jsonpath wait format must be --for=jsonpath='{.status.readyReplicas}'=3 or "
                           "--for=jsonpath='{.status.readyReplicas}'")
    if not parts[0]:
        raise CommandError("error: jsonpath expression cannot be empty")
    steps = _relaxed_jsonpath(parts[0])
    if len(parts) == 2 and parts[1] == "":
        raise CommandError("error: jsonpath wait value cannot be empty")
    want = parts[1].strip("'\"") if len(parts) == 2 else None

    def check(obj: dict) -> bool:
        cur: Any = obj
        for s in steps:
            if isinstance(s, int) and isinstance(cur, list) and -len(cur) <= s < len(cur):
                cur = cur[s]
            elif isinstance(s, str) and isinstance(cur, dict) and s in cur:
                cur = cur[s]
            else:
                return False
        if want is None:
            return True
        if isinstance(cur, (dict, list)):
            raise CommandError("error: jsonpath leads to a nested object or list which is not supported")
        text = "true" if cur is True else "false" if cur is False else "<nil>" if cur is None else str(cur)
        return text.strip() == want.strip()
    return check


def check_for(for_: str | None) -> Check | None:
    """The predicate of `--for` (None: wait for deletion); kubectl `conditionFuncFor`."""
    for_ = for_ or ""
    if for_.lower() == "delete":
        return None
    if for_.startswith("condition="):
        name, _, want = for_[len("condition="):].partition("=")
        return condition_check(name, want if "=" in for_[len("condition="):] else "true")
    if for_.startswith("jsonpath="):
        return jsonpath_check(for_[len("jsonpath="):])
    raise CommandError(f'error: unrecognized condition: "{for_}"')


# --- the command ------------------------------------------------------------------------------------

@click.command("wait")
@click.argument("args", nargs=-1, shell_complete=complete_args)
@namespace_option
@click.option("-A", "--all-namespaces", "all_namespaces", is_flag=True, help="Without names: in every namespace.")
@click.option("--for", "for_", default=None, metavar="CONDITION",
              help="condition=Ready[=true], delete, or jsonpath='{.status.phase}'=Running.")
@click.option("--timeout", default="30s", help="How long to wait (Go duration, default 30s; 0: check once).")
@click.option("-l", "--selector", default=None, help="Only the objects with these labels (a=b,c!=d,e in (f,g),!h).")
@click.option("--field-selector", default=None, help="Only the objects whose fields match (metadata.name=x).")
@click.option("--all", "select_all", is_flag=True, help="Every object of the type in the namespace.")
@click.pass_context
@reports_errors
def wait_cmd(ctx, args, namespace, all_namespaces, for_, timeout, selector, field_selector, select_all):
    """Wait until objects meet a condition (kubectl wait)."""
    from instancetype.store.base import NotFound

    seconds = parse_go_duration(timeout)
    if seconds < 0:
        seconds = WEEK_SECONDS
    check = check_for(for_)
    targets = parse_targets(args, verb="wait")
    check_all_namespaces(targets, all_namespaces)
    named_args = any(t.names for t in targets)
    if named_args and (selector or field_selector):
        raise CommandError("error: name cannot be provided when a selector is specified")
    if named_args and select_all:
        raise CommandError("error: --all cannot be used with names")
    failures: list[Failure] = []
    deadline = time.monotonic() + seconds
    with cluster_of(ctx) as cluster:
        for t in targets:
            ns = namespace_of(t.resource, namespace)
            if t.names:
                named = [(name, ns) for name in t.names]
            else:
                metas = [o.get("metadata") or {} for o in
                         cluster.list(t.resource.kind, None if all_namespaces else ns, label_selector=selector or None,
                                      field_selector=field_selector or None)]
                named = [(m.get("name", ""), m.get("namespace")) for m in metas]
            if not named and check is not None:
                failures.append(Failure("error: no matching resources found", "no matching resources found"))
            for name, ns in named:
                where = f"{t.resource.plural}/{name}"
                try:
                    met = _wait_one(cluster, t.resource.kind, name, ns, check, deadline, seconds == 0)
                except NotFound as e:
                    if check is not None:
                        failures.append(api_failure(e))
                    continue          # --for=delete: already gone
                if met:
                    sys.stdout.write(f"{t.resource.qualified_singular}/{name} condition met\n")
                elif seconds == 0:
                    failures.append(Failure(f"error: condition not met for {where}", f"condition not met for {where}"))
                else:
                    failures.append(Failure(f"error: timed out waiting for the condition on {where}",
                                            f"timed out waiting for the condition on {where}"))
    return report(failures)


def _wait_one(cluster: Any, kind: str, name: str, ns: str | None, check: Check | None, deadline: float,
              once: bool) -> bool:
    """True once the object meets `check` (with `check` None: once it is gone)."""
    from instancetype.store.base import NotFound

    first = True
    while True:
        try:
            obj = cluster.get(kind, name, ns)
        except NotFound:
            if check is None and not first:     # deleted while we waited
                return True
            raise                               # missing from the start: the caller's case
        first = False
        if check is not None and check(obj):
            return True
        if once or time.monotonic() >= deadline:
            return False
        time.sleep(POLL_SECONDS)
