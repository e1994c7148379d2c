"""kubectl `apply`, `delete`, `wait` and virtctl `start`, `stop`, `restart`, `expand --vm` on the
embedded cluster (`controller.Cluster`).

Output and errors are kubectl's and virtctl's: `apply` prints `<resource>.<group>/<name>
created|configured|unchanged` per object, goes on past a refused object and reports the
errors at the end as kubectl's `CheckErr` does (one error: its own form, e.g. `The request is
invalid: ...`; several: one `Error from server (<Reason>): ...` line each), exit 1.
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from typing import Any

import click

from instancetype.api import kinds

from .kubectl import CommandError, STDIN_SOURCE, api_error_text, fail, namespace_of, open_cluster, parse_targets


@dataclass
class Failure:
    """One failed object: `alone` is how kubectl prints it as the only error, `among` as one of several."""

    alone: str
    among: str


def report(failures: list[Failure]) -> int:
    if len(failures) == 1:
        fail(failures[0].alone)
    else:
        for f in failures:
            fail(f.among)
    return 1 if failures else 0


def _source(where: str) -> str:
    return STDIN_SOURCE if where == "<stdin>" else where


def _go_json_compact(v: Any) -> str:
    text = json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(ch, esc)
    return text


def _info(res: kinds.Resource, name: str, ns: str | None) -> str:
    """cli-runtime `resource.Info.String()`."""
    return (f'Resource: "{res.group}/{res.version}, Resource={res.plural}", '
            f'GroupVersionKind: "{res.group}/{res.version}, Kind={res.kind}"\n'
            f'Name: "{name}", Namespace: "{ns or ""}"')


def _multiline(prefix: str, messages: list[str]) -> str:
    """kubectl `MultilineError` over the (deduplicated) causes."""
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return prefix + seen[0]
    return prefix + "\n" + "\n".join(f"* {m}" for m in seen)


def refusal_failure(e: Any, *, verb: str, source: str, obj: dict) -> Failure:
    """A `webhook.admission.Refused` as kubectl reports it."""
    from .output import refusal_text

    result, webhook = e.result, getattr(e, "webhook", "")
    meta = obj.get("metadata") or {}
    if not webhook:
        # The CRD's structural schema: the API server's own Invalid error, which names the object.
        res = kinds.BY_KIND.get(obj.get("kind", ""))
        causes = [f"{c.field}: {c.message}" if c.field else c.message for c in result.causes]
        qualified = f"{res.kind}.{res.group}" if res else obj.get("kind", "")
        body = causes[0] if len(causes) == 1 else "[" + ", ".join(causes) + "]"
        message = f'error when {verb} "{source}": {qualified} "{meta.get("name", "")}" is invalid: {body}'
        return Failure(_multiline(f'The {obj.get("kind", "")} "{meta.get("name", "")}" is invalid: ', causes),
                       f"Error from server (Invalid): {message}")
    denied = f'admission webhook "{webhook}" denied the request: {result.message}'
    if result.causes:
        return Failure(refusal_text(result, verb=verb, source=source, webhook=webhook),
                       f'Error from server (Invalid): error when {verb} "{source}": {denied}')
    text = refusal_text(result, verb=verb, source=source, webhook=webhook)
    return Failure(text, text)


def api_failure(e: Any, *, verb: str, source: str) -> Failure:
    reason = getattr(e, "reason", "")
    message = f'error when {verb} "{source}": {e}'
    if reason:
        return Failure(f"Error from server ({reason}): {message}", f"Error from server ({reason}): {message}")
    return Failure(f"error: {message}", message)


# --- apply ---------------------------------------------------------------------------------------------

_filename = click.option("-f", "--filename", "filenames", multiple=True, metavar="FILE",
                         help="A file, a directory or - for stdin. Repeatable.")
_namespace = click.option("-n", "--namespace", default=None, help="The namespace (default: default).")


def _mapping_error(d: Any, ns: str | None) -> str | None:
    """kubectl's error for an object whose kind the cluster does not serve."""
    from instancetype.api.versions import needs_upgrade

    if needs_upgrade(d.obj):
        return None
    res = kinds.BY_KIND.get(d.kind)
    if res is not None and kinds.group_of(d.api_version) == res.group:
        return None
    scope_ns = "" if res is not None and not res.namespaced else (ns or "")
    return (f'resource mapping not found for name: "{d.name}" namespace: "{scope_ns}" from "{_source(d.source)}": '
            f'no matches for kind "{d.kind}" in version "{d.api_version}"\nensure CRDs are installed first')


def _check_namespace(d: Any, namespace: str | None) -> None:
    res = kinds.BY_KIND.get(d.kind)
    if res is not None and not res.namespaced:
        return
    given = (d.obj.get("metadata") or {}).get("namespace")
    if namespace and given and given != namespace:
        raise CommandError(f'error: the namespace from the provided object "{given}" does not match the namespace '
                           f'"{namespace}". You must pass \'--namespace={given}\' to perform this operation.')


@click.command("apply")
@_filename
@_namespace
@click.option("-R", "--recursive", is_flag=True, help="Accepted for kubectl compatibility (directories are always "
                                                      "read recursively).")
@click.pass_context
def apply_cmd(ctx, filenames, namespace, recursive):
    """Create or update objects from files, as kubectl apply (client-side, three-way merge)."""
    from instancetype.errors import Error, LoadError, StoreError

    from .loader import read_sources

    if not filenames:
        fail("error: must specify one of -f and -k")
        return 1
    try:
        docs = read_sources(list(filenames))
        for d in docs:
            _check_namespace(d, namespace)
        cluster = open_cluster(ctx)
    except LoadError as e:
        fail(f"error: {e}")
        return 1
    except CommandError as e:
        fail(str(e))
        return 1
    except StoreError as e:
        fail(f"error: {e}")
        return 1
    failures: list[Failure] = []
    try:
        # Objects are applied each on its own (a savepoint each: a refusal undoes only that
        # object), committed in chunks; what a chunk printed is shown once it is committed.
        for start in range(0, len(docs), APPLY_CHUNK):
            pending: list[tuple[str, str]] = []
            with cluster.store.transaction():
                for d in docs[start:start + APPLY_CHUNK]:
                    failure = _apply_one(cluster, d, namespace, pending)
                    if failure is not None:
                        failures.append(failure)
            from .output import warn

            for stream, text in pending:
                if stream == "warn":
                    warn(text)
                else:
                    sys.stdout.write(text)
            sys.stdout.flush()
    except Error as e:   # the state file failed under us: nothing more can be applied
        failures.append(Failure(f"error: {e}", str(e)))
    finally:
        cluster.close()
    if not docs:
        fail("error: no objects passed to apply")
        return 1
    return report(failures)


APPLY_CHUNK = 256


def _apply_one(cluster: Any, d: Any, namespace: str | None, pending: list[tuple[str, str]]) -> Failure | None:
    from instancetype.errors import Error, StoreError
    from instancetype.store.base import APIError, NotFound, StateFileError
    from instancetype.webhook.admission import Refused

    from .manifests import resource_name

    source = _source(d.source)
    meta = d.obj.get("metadata") if isinstance(d.obj.get("metadata"), dict) else {}
    res = kinds.BY_KIND.get(d.kind)
    ns = (meta.get("namespace") or namespace or "default") if (res is None or res.namespaced) else None
    mapping = _mapping_error(d, ns)
    if mapping is not None:
        return Failure(f"error: {mapping}", mapping)
    if not meta.get("name"):
        res_ = res or kinds.BY_KIND.get(_converted_kind(d.obj))
        text = ("error when retrieving current configuration of:\n" + (_info(res_, "", ns) if res_ else "") +
                f'\nfrom server for: "{source}": resource name may not be empty')
        return Failure(f"error: {text}", text)
    current = None
    try:
        current = cluster.get(_converted_kind(d.obj), meta["name"], ns)
    except (NotFound, StoreError):
        current = None
    verb = "creating" if current is None else _patch_verb(d.obj, current, ns)
    try:
        result = cluster.apply(d.obj, namespace=ns)
    except Refused as e:
        return refusal_failure(e, verb=verb, source=source, obj=d.obj)
    except StateFileError:
        raise
    except APIError as e:
        return api_failure(e, verb=verb, source=source)
    except Error as e:
        return Failure(f'error: error when {verb} "{source}": {e}', f'error when {verb} "{source}": {e}')
    for w in result.warnings:
        pending.append(("warn", w))
    pending.append(("out", f"{resource_name(result.object)} {result.action}\n"))
    return None


def _converted_kind(obj: dict) -> str:
    kind = obj.get("kind", "")
    if kinds.group_of(obj.get("apiVersion", "")) == kinds.FLAVOR_GROUP:
        return kinds.FLAVOR_KINDS.get(kind, kind)
    return kind


def _patch_verb(obj: dict, current: dict, ns: str | None) -> str:
    """kubectl's verb for a failed update: `applying patch:\\n<patch>\\nto:\\n<info>\\nfor:`."""
    from instancetype.controller.apply import original_of, three_way_patch, with_last_applied

    res = kinds.BY_KIND.get(current.get("kind", ""))
    try:
        patch = three_way_patch(original_of(current), with_last_applied(obj), current)
        text = _go_json_compact(patch)
    except Exception:  # a patch we cannot show must not hide the real error
        text = "{}"
    name = (current.get("metadata") or {}).get("name", "")
    info = _info(res, name, ns) if res else f'Name: "{name}", Namespace: "{ns or ""}"'
    return f"applying patch:\n{text}\nto:\n{info}\nfor:"


# --- delete --------------------------------------------------------------------------------------------

@click.command("delete")
@click.argument("args", nargs=-1)
@_filename
@_namespace
@click.option("-l", "--selector", default=None, help="Delete the objects matching this label selector.")
@click.option("--all", "all_", is_flag=True, help="Delete every object of the given types.")
@click.option("-A", "--all-namespaces", "all_namespaces", is_flag=True, help="With -l or --all: in every namespace.")
@click.option("--ignore-not-found", is_flag=True, help="Treat missing objects as deleted.")
@click.pass_context
def delete_cmd(ctx, args, filenames, namespace, selector, all_, all_namespaces, ignore_not_found):
    """Delete objects by TYPE NAME, TYPE/NAME, -f FILE or -l SELECTOR (kubectl delete)."""
    from instancetype.errors import LoadError, StoreError
    from instancetype.store.base import NotFound

    from .loader import read_sources

    try:
        if filenames and args:
            raise CommandError("error: there is no need to specify a resource type as a separate argument when "
                               "passing arguments in resource/name form")
        items: list[tuple[kinds.Resource, str, str | None, str | None]] = []   # (res, name, ns, source)
        selects: list[tuple[kinds.Resource, str | None]] = []
        if filenames:
            for d in read_sources(list(filenames)):
                _check_namespace(d, namespace)
                res = kinds.BY_KIND.get(_converted_kind(d.obj))
                if res is None:
                    raise CommandError(f"error: {_mapping_error(d, namespace)}")
                meta = d.obj.get("metadata") or {}
                items.append((res, meta.get("name", ""), namespace_of(res, meta.get("namespace") or namespace),
                              _source(d.source)))
        else:
            targets = parse_targets(args, verb="delete")
            for t in targets:
                if t.names:
                    if selector or all_:
                        raise CommandError("error: name cannot be provided when a selector is specified")
                    items.extend((t.resource, n, namespace_of(t.resource, namespace), None) for n in t.names)
                elif selector or all_:
                    selects.append((t.resource, None if all_namespaces else namespace_of(t.resource, namespace)))
                else:
                    raise CommandError("error: resource(s) were provided, but no name was specified")
        cluster = open_cluster(ctx)
    except CommandError as e:
        fail(str(e))
        return 1
    except (LoadError, StoreError) as e:
        fail(f"error: {e}")
        return 1
    failures: list[Failure] = []
    deleted = 0
    try:
        for res, ns in selects:
            for o in list(cluster.list(res.kind, ns, label_selector=selector or None)):
                m = o.get("metadata") or {}
                items.append((res, m.get("name", ""), m.get("namespace"), None))
        for res, name, ns, source in items:
            try:
                cluster.delete(res.kind, name, ns)
            except NotFound as e:
                if not ignore_not_found:
                    failures.append(api_failure(e, verb="deleting", source=source) if source else
                                    Failure(api_error_text(e), api_error_text(e)))
                continue
            except StoreError as e:
                failures.append(Failure(api_error_text(e), api_error_text(e)))
                continue
            deleted += 1
            sys.stdout.write(f'{res.qualified_singular} "{name}" deleted\n')
    finally:
        cluster.close()
    if selects and not deleted and not failures:
        fail("No resources found")
    return report(failures)


# --- wait ----------------------------------------------------------------------------------------------

def parse_go_duration(text: str) -> float:
    """Go's `time.ParseDuration` (what kubectl's --timeout takes): `30s`, `1m30s`, `500ms`, `0`."""
    import re

    s = text.strip()
    if s in ("0", "+0", "-0"):
        return 0.0
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    m = re.fullmatch(r"([-+]?)((?:[0-9]*\.?[0-9]+(?:ns|us|µs|ms|s|m|h))+)", s)
    if not m:
        raise click.BadParameter(f'time: invalid duration "{text}"', param_hint="'--timeout'")
    total = sum(float(n) * units[u] for n, u in re.findall(r"([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)", m.group(2)))
    return -total if m.group(1) == "-" else total


def _condition_met(obj: dict, ctype: str, want: str) -> bool:
    for c in (obj.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and str(c.get("type", "")).lower() == ctype.lower():
            return str(c.get("status", "")).lower() == want.lower()
    return False


def _jsonpath_met(obj: dict, path: str, want: str | None) -> bool:
    cur: Any = obj
    for part in path.strip("{}").lstrip(".").split("."):
        if not part:
            continue
        if not isinstance(cur, dict) or part not in cur:
            return False
        cur = cur[part]
    if want is None:
        return True
    text = json.dumps(cur) if isinstance(cur, (dict, list)) else ("true" if cur is True else "false" if cur is False
                                                                  else str(cur))
    return text == want


@click.command("wait")
@click.argument("args", nargs=-1)
@_namespace
@click.option("--for", "for_", required=True, metavar="CONDITION",
              help="condition=Ready[=true], delete, or jsonpath='{.status.phase}'=Running.")
@click.option("--timeout", default="30s", help="How long to wait (Go duration, default 30s).")
@click.pass_context
def wait_cmd(ctx, args, namespace, for_, timeout):
    """Wait until objects meet a condition (kubectl wait)."""
    from instancetype.errors import StoreError
    from instancetype.store.base import NotFound

    try:
        seconds = parse_go_duration(timeout)
        targets = parse_targets(args, verb="wait")
        check = _wait_check(for_)
        cluster = open_cluster(ctx)
    except CommandError as e:
        fail(str(e))
        return 1
    except StoreError as e:
        fail(f"error: {e}")
        return 1
    failures: list[Failure] = []
    deadline = time.monotonic() + max(seconds, 0)
    try:
        for t in targets:
            ns = namespace_of(t.resource, namespace)
            names = t.names or [(o.get("metadata") or {}).get("name", "") for o in cluster.list(t.resource.kind, ns)]
            if not names:
                failures.append(Failure("error: no matching resources found", "no matching resources found"))
            for name in names:
                done = False
                while True:
                    try:
                        obj = cluster.get(t.resource.kind, name, ns)
                    except NotFound as e:
                        if check is None:
                            done = True
                        else:
                            failures.append(Failure(api_error_text(e), api_error_text(e)))
                        break
                    if check is not None and check(obj):
                        done = True
                        break
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(0.1)
                if done:
                    sys.stdout.write(f"{t.resource.qualified_singular}/{name} condition met\n")
                elif not failures or failures[-1].among.find(f'"{name}"') < 0:
                    failures.append(Failure(f"error: timed out waiting for the condition on {t.resource.plural}/{name}",
                                            f"timed out waiting for the condition on {t.resource.plural}/{name}"))
    finally:
        cluster.close()
    return report(failures)


def _wait_check(for_: str):
    """The predicate of `--for` (None: wait for deletion)."""
    low = for_.lower()
    if low == "delete":
        return None
    if low.startswith("condition="):
        body = for_[len("condition="):]
        ctype, _, want = body.partition("=")
        want = want or "true"
        return lambda obj: _condition_met(obj, ctype, want)
    if low.startswith("jsonpath="):
        body = for_[len("jsonpath="):]
        if body.startswith("{"):
            end = body.find("}")
            path, rest = body[:end + 1], body[end + 1:]
        else:
            path, _, rest = body.partition("=")
            rest = "=" + rest if rest else ""
        want = rest[1:] if rest.startswith("=") else None
        return lambda obj: _jsonpath_met(obj, path, want)
    raise CommandError(f"error: unrecognized condition: \"{for_}\"")


# --- virtctl start / stop / restart ------------------------------------------------------------------

_VIRTCTL = {"start": ("starting", "start"), "stop": ("stopping", "stop"), "restart": ("restarting", "restart")}


def _vm_action(ctx: click.Context, action: str, name: str, namespace: str | None) -> int:
    from instancetype.errors import Error
    from instancetype.store.base import NotFound

    gerund, word = _VIRTCTL[action]
    try:
        cluster = open_cluster(ctx)
    except Error as e:
        fail(f"error: {e}")
        return 1
    try:
        getattr(cluster, action)(name, namespace or "default")
    except NotFound as e:
        # The subresource handler answers with the singular resource (virt-api fetchVirtualMachine).
        text = str(e)
        if getattr(e, "kind", None) in (None, "VirtualMachine"):
            text = f'virtualmachine.kubevirt.io "{name}" not found'
        fail(f"Error {gerund} VirtualMachine {text}")
        return 1
    except Error as e:
        fail(f"Error {gerund} VirtualMachine {e}")
        return 1
    finally:
        cluster.close()
    sys.stdout.write(f"VM {name} was scheduled to {word}\n")
    return 0


def _vm_command(action: str, doc: str):
    @click.command(action, help=doc)
    @click.argument("name")
    @_namespace
    @click.pass_context
    def cmd(ctx, name, namespace):
        return _vm_action(ctx, action, name, namespace)

    return cmd


start_cmd = _vm_command("start", "Start a VirtualMachine (virtctl start).")
stop_cmd = _vm_command("stop", "Stop a VirtualMachine (virtctl stop).")
restart_cmd = _vm_command("restart", "Restart a VirtualMachine (virtctl restart).")


# --- virtctl expand --vm -------------------------------------------------------------------------------

def expand_stored(ctx: click.Context, name: str, namespace: str | None, fmt: str) -> int:
    """virtctl `expand --vm NAME`: the stored VM expanded against the stored objects, printed as
    `expand -f` prints (YAML or JSON); errors as virtctl words them."""
    from instancetype.errors import Error

    from .output import json_text, yaml_docs

    ns = namespace or "default"
    if fmt not in ("yaml", "json"):
        fail(f"error not supported output format defined: {fmt}")
        return 1
    try:
        cluster = open_cluster(ctx)
    except Error as e:
        fail(f"error: {e}")
        return 1
    try:
        expanded = cluster.expand_vm(name, ns)
    except Error as e:
        fail(f"error expanding VirtualMachine - {name} in namespace - {ns}: {e}")
        return 1
    finally:
        cluster.close()
    sys.stdout.write(json_text(expanded) if fmt == "json" else yaml_docs([expanded]))
    return 0
