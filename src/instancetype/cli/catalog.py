"""`instancetype catalog list|bundle|fit`: the built-in common-instancetypes catalogue, read-only.

None of these opens the store or imports the engine: the catalogue is generated on use
(`instancetype.catalog`). Bad input is one `error: ...` line naming the flag, exit status 1.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from instancetype.cli.remote import RemoteCluster
    from instancetype.controller.cluster import Cluster

import sys

import click

from instancetype.errors import CLIError

OUTPUTS = ("table", "yaml", "json", "name")


def _output(value: str | None) -> str:
    v = (value or "table").lower()
    if v == "wide":
        v = "table"
    if v not in OUTPUTS:
        raise CLIError(f'invalid value for -o/--output: "{value}" (allowed: {", ".join(OUTPUTS)})')
    return v


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """kubectl's column layout: left-aligned, three spaces between columns."""
    widths = [max(len(str(r[i])) for r in [headers] + rows) for i in range(len(headers))]
    lines = []
    for r in [headers] + rows:
        cells = [str(c).ljust(w) for c, w in zip(r, widths)]
        lines.append("   ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _resource_name(obj: dict) -> str:
    """`virtualmachineclusterinstancetype/u1.medium`: what `create vm --instancetype` accepts."""
    return f"{obj['kind'].lower()}/{obj['metadata']['name']}"


def _write(text: str) -> None:
    sys.stdout.write(text)


def _print_objects(objs: list[dict], output: str) -> None:
    from instancetype.cli import output as out

    if output == "yaml":
        _write(out.yaml_text(out.as_list(objs)))
    else:
        _write(out.json_text(out.as_list(objs)))


@click.group("catalog")
def catalog() -> None:
    """The built-in common-instancetypes catalogue (v1.7.0 plus deprecated legacy types)."""


# --- list --------------------------------------------------------------------------------------
_FEATURE_LABELS = ("dedicatedCPUPlacement", "isolateEmulatorThread", "numa", "realtime", "gpus")
_P = "instancetype.kubevirt.io/"


def _features(obj: dict) -> str:
    labels = obj["metadata"].get("labels") or {}
    spec = obj.get("spec") or {}
    out = [f for f in _FEATURE_LABELS if labels.get(_P + f) == "true"]
    if _P + "hugepages" in labels:
        out.append(f"hugepages={labels[_P + 'hugepages']}")
    over = (spec.get("memory") or {}).get("overcommitPercent") if "Instancetype" in obj["kind"] else None
    if over is not None:
        out.append(f"overcommitPercent={over}")
    if _P + "arch" in labels:
        out.append(f"arch={labels[_P + 'arch']}")
    if labels.get(_P + "deprecated") == "true":
        out.append("deprecated")
    return ",".join(out) or "<none>"


def _row(obj: dict) -> list[str]:
    labels = obj["metadata"].get("labels") or {}
    if "Instancetype" in obj["kind"]:
        return [obj["metadata"]["name"], "instancetype", labels.get(_P + "class", "<none>"),
                str(obj["spec"]["cpu"]["guest"]), str(obj["spec"]["memory"]["guest"]), _features(obj)]
    req = (obj.get("spec") or {}).get("requirements") or {}
    cpu = (req.get("cpu") or {}).get("guest")
    mem = (req.get("memory") or {}).get("guest")
    return [obj["metadata"]["name"], "preference", labels.get(_P + "os-type", "<none>"),
            "-" if cpu is None else str(cpu), "-" if mem is None else str(mem), _features(obj)]


@catalog.command("list")
@click.option("-l", "--selector", default=None, metavar="SELECTOR",
              help="Label selector, as kubectl get -l (e.g. instancetype.kubevirt.io/cpu=4).")
@click.option("--class", "classes", multiple=True, metavar="CLASS",
              help="Only instancetypes of this class: a class label (general.purpose) or a series (u, u1).")
@click.option("--instancetypes", "only_instancetypes", is_flag=True, help="Only instancetypes.")
@click.option("--preferences", "only_preferences", is_flag=True, help="Only preferences.")
@click.option("--namespaced", is_flag=True, help="The namespaced kinds instead of the cluster kinds.")
@click.option("-o", "--output", default="table", metavar="FORMAT", help="table, yaml, json or name.")
def list_cmd(selector, classes, only_instancetypes, only_preferences, namespaced, output) -> None:
    """Every instancetype and preference of the built-in catalogue."""
    from instancetype import catalog as cat
    from instancetype.api import selectors as sel

    fmt = _output(output)
    reqs = sel.parse_label_selector(selector)
    both = only_instancetypes == only_preferences
    objs: list[dict] = []
    if both or only_instancetypes:
        its = cat.instancetypes(namespaced)
        if classes:
            from instancetype.catalog.fit import describe, resolve_classes

            infos = [describe(o) for o in its]
            named = resolve_classes(tuple(classes), infos)
            its = [o for o, t in zip(its, infos) if t.series in named]
        objs += its
    if (both or only_preferences) and not classes:
        objs += cat.preferences(namespaced)
    objs = [o for o in objs if sel.labels_match(o["metadata"].get("labels"), reqs)]
    if fmt == "name":
        _write("".join(_resource_name(o) + "\n" for o in objs))
    elif fmt == "table":
        if not objs:
            sys.stderr.write("No resources found\n")
            return
        _write(_table(["NAME", "KIND", "CLASS/OS", "CPUS", "MEMORY", "FEATURES"], [_row(o) for o in objs]))
    else:
        _print_objects(objs, fmt)


# --- bundle ------------------------------------------------------------------------------------
@catalog.command("bundle")
@click.option("--namespaced", is_flag=True,
              help="VirtualMachineInstancetype/VirtualMachinePreference instead of the cluster kinds.")
@click.option("--instancetypes", "only_instancetypes", is_flag=True, help="Only the instancetypes bundle.")
@click.option("--preferences", "only_preferences", is_flag=True, help="Only the preferences bundle.")
@click.option("--without-deprecated", is_flag=True,
              help="Leave out the deprecated types (gn1, server, highperformance): exactly v1.7.0.")
def bundle_cmd(namespaced, only_instancetypes, only_preferences, without_deprecated) -> None:
    """The catalogue as multi-document YAML, as common-instancetypes' release bundles."""
    from instancetype import catalog as cat

    both = only_instancetypes == only_preferences
    objs: list[dict] = []
    if both or only_instancetypes:
        objs += cat.instancetypes(namespaced, deprecated=not without_deprecated)
    if both or only_preferences:
        objs += cat.preferences(namespaced, deprecated=not without_deprecated)
    _write(bundle_text(objs))


def bundle_text(objs: list[dict]) -> str:
    """Multi-document YAML, each document starting with `---` (upstream's bundles, for yamllint)."""
    from .output import yaml_text

    return "".join("---\n" + yaml_text(o) for o in objs)


# --- fit ---------------------------------------------------------------------------------------
def _positive_int(flag: str, value: str, *, allow_zero: bool = False) -> int:
    try:
        n = int(value.strip())
    except ValueError:
        raise CLIError(f'invalid value for {flag}: "{value}" is not a whole number') from None
    if n < 0 or (n == 0 and not allow_zero):
        least = "0 or more" if allow_zero else "at least 1"
        raise CLIError(f"invalid value for {flag}: {n} (must be {least})")
    return n


def _memory(value: str) -> int:
    from instancetype.catalog.fit import memory_bytes
    from instancetype.errors import Error

    try:
        n = memory_bytes(value.strip())
    except Error as exc:
        raise CLIError(f'invalid value for --memory: "{value}": {exc}') from None
    if n <= 0:
        raise CLIError(f'invalid value for --memory: "{value}" (must be more than 0)')
    return n


@catalog.command("fit", epilog="""\b
Examples:
  instancetype catalog fit --cpu 3 --memory 6Gi
  instancetype catalog fit --cpu 4 --memory 8Gi --dedicated-cpu
  instancetype create vm --name vm1 \\
    --instancetype $(instancetype catalog fit --cpu 3 --memory 6Gi -o name | head -n 1)""")
@click.option("--cpu", default=None, metavar="N", help="vCPUs the VM needs (default 1).")
@click.option("--memory", default=None, metavar="QUANTITY", help="Guest memory the VM needs (e.g. 6Gi).")
@click.option("--class", "classes", multiple=True, metavar="CLASS",
              help="Only this class: a class label (general.purpose) or a series (u, u1); offers its "
                   "special and deprecated types too.")
@click.option("--dedicated-cpu", is_flag=True, help="Dedicated CPUs (offers cx1, d1, n1, rt1).")
@click.option("--hugepages", is_flag=True, help="Hugepages-backed memory.")
@click.option("--overcommit", is_flag=True, help="Overcommitted memory (o1).")
@click.option("--gpus", default=None, metavar="N", help="At least N GPUs.")
@click.option("-o", "--output", default="table", metavar="FORMAT", help="table, json, yaml or name.")
def fit_cmd(cpu, memory, classes, dedicated_cpu, hugepages, overcommit, gpus, output) -> None:
    """The smallest instancetype of each class with at least the vCPUs and memory asked for."""
    from instancetype import catalog as cat
    from instancetype.catalog.fit import Request, fit, format_bytes

    fmt = _output(output)
    req = Request(
        cpu=1 if cpu is None else _positive_int("--cpu", cpu),
        memory=None if memory is None else memory.strip(),
        memory_bytes=0 if memory is None else _memory(memory),
        classes=tuple(classes), dedicated_cpu=dedicated_cpu, hugepages=hugepages, overcommit=overcommit,
        gpus=0 if gpus is None else _positive_int("--gpus", gpus, allow_zero=True),
    )
    objs = cat.instancetypes()
    kind = objs[0]["kind"]
    fits = fit(req, objs)
    if fmt == "name":
        _write("".join(f"{kind.lower()}/{f.type.name}\n" for f in fits))
    elif fmt == "table":
        rows = [[f.type.name, f.type.class_label, str(f.type.cpu), f.type.memory, f"+{f.extra_cpu}",
                 "+" + format_bytes(f.extra_memory), ", ".join(f.reasons)] for f in fits]
        _write(_table(["NAME", "CLASS", "CPUS", "MEMORY", "EXTRA CPUS", "EXTRA MEMORY", "WHY"], rows))
    else:
        from instancetype.cli import output as out

        data = [f.to_dict(kind) for f in fits]
        _write(out.yaml_text(data) if fmt == "yaml" else out.json_text(data))


@catalog.command("sync")
@click.option("--dry-run", is_flag=True, help="Say what would change, change nothing.")
@click.pass_context
def sync_cmd(ctx: click.Context, dry_run: bool) -> int:
    """Deploy the catalogue into the embedded store as virt-operator does.

    Creates missing objects, restores edited ones, deletes managed objects no longer in the
    catalogue, and removes them all when the KubeVirt object sets
    spec.configuration.commonInstancetypesDeployment.enabled to false.
    """
    from instancetype.controller import Cluster
    from instancetype.errors import Error

    from .cluster_options import cluster_choice

    state = (ctx.find_root().obj or {}).get("state")
    choice = cluster_choice(ctx)
    try:
        if choice is not None:
            from .remote import RemoteCluster

            opened: Cluster | RemoteCluster = RemoteCluster.open(*choice)
        else:
            opened = Cluster.open(state, catalog=False)
        with opened as cluster:
            changes = cluster.sync_catalog(dry_run=dry_run)
    except Error as e:
        click.echo(f"error: {e}", err=True)
        return 1
    suffix = " (dry run)" if dry_run else ""
    for change in changes:
        click.echo(f"{change}{suffix}")
    if not changes:
        click.echo("catalogue up to date")
    return 0
