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


_IT_HEADERS = ["NAME", "KIND", "CLASS", "CPUS", "MEMORY", "FEATURES"]
# A preference gives no CPUs or memory: it requires them of the instancetype or the VM.
_PREF_HEADERS = ["NAME", "KIND", "OS", "REQUIRED CPUS", "REQUIRED MEMORY", "FEATURES"]


def natural_order(instancetypes: list[dict]) -> list[dict]:
    """Instancetypes by class, then size as the guest sees it (u1.small before u1.2xlarge)."""
    from instancetype.catalog.fit import describe, natural_key

    return [o for _, o in sorted(((natural_key(describe(o)), o) for o in instancetypes), key=lambda p: p[0])]


@catalog.command("list")
@click.option("-l", "--selector", default=None, metavar="SELECTOR",
              help="Label selector, as kubectl get -l (e.g. instancetype.kubevirt.io/cpu=4).")
@click.option("--class", "classes", multiple=True, metavar="CLASS",
              help="Only instancetypes of this class: a class label (general.purpose) or a series (u, u1).")
@click.option("--instancetypes", "only_instancetypes", is_flag=True, help="Only instancetypes.")
@click.option("--preferences", "only_preferences", is_flag=True, help="Only preferences.")
@click.option("--namespaced", is_flag=True, help="The namespaced kinds instead of the cluster kinds.")
@click.option("-o", "--output", default="table", metavar="FORMAT",
              help="table, matrix (class x size, instancetypes), yaml, json or name.")
def list_cmd(selector, classes, only_instancetypes, only_preferences, namespaced, output) -> None:
    """Every instancetype and preference of the built-in catalogue, sizes in natural order."""
    from instancetype import catalog as cat
    from instancetype.api import selectors as sel

    matrix = (output or "").lower() == "matrix"
    fmt = "table" if matrix else _output(output)
    reqs = sel.parse_label_selector(selector)
    both = only_instancetypes == only_preferences
    its: list[dict] = []
    prefs: list[dict] = []
    if both or only_instancetypes or matrix:
        its = natural_order(cat.instancetypes(namespaced))
        if classes:
            from instancetype.catalog.fit import describe, resolve_classes

            infos = [describe(o) for o in its]
            named = resolve_classes(tuple(classes), infos)
            its = [o for o, t in zip(its, infos) if t.series in named]
    if (both or only_preferences) and not classes and not matrix:
        prefs = cat.preferences(namespaced)
    its = [o for o in its if sel.labels_match(o["metadata"].get("labels"), reqs)]
    prefs = [o for o in prefs if sel.labels_match(o["metadata"].get("labels"), reqs)]
    objs = its + prefs
    if matrix:
        if not its:
            sys.stderr.write("No resources found\n")
            return
        _write(matrix_text(its))
    elif fmt == "name":
        _write("".join(_resource_name(o) + "\n" for o in objs))
    elif fmt == "table":
        if not objs:
            sys.stderr.write("No resources found\n")
            return
        tables = []
        if its:
            tables.append(_table(_IT_HEADERS, [_row(o) for o in its]))
        if prefs:
            tables.append(_table(_PREF_HEADERS, [_row(o) for o in prefs]))
        _write("\n".join(tables))
    else:
        _print_objects(objs, fmt)


def matrix_text(instancetypes: list[dict]) -> str:
    """The class x size table (what KubeVirt's UI offers as series and size): a row per series
    (a variant such as the 1Gi-hugepages types its own row), a column per size in natural order,
    each cell `vCPUs/memory`; then each series' display name and the first sentence of its
    description, from the catalogue's annotations."""
    from instancetype.catalog.fit import describe
    from instancetype.catalog.sizes import size_rank, split_size

    rows: dict[str, dict[str, str]] = {}
    legend: dict[str, tuple[str, str]] = {}
    sizes: set[str] = set()
    for obj in instancetypes:
        t = describe(obj)
        size, variant = split_size(t.name.partition(".")[2] or t.name)
        row = t.series + (f" ({variant})" if variant else "")
        rows.setdefault(row, {})[size] = f"{t.cpu}/{t.memory}"
        sizes.add(size)
        notes = obj["metadata"].get("annotations") or {}
        legend.setdefault(t.series, (notes.get(_P + "displayName", t.class_label),
                                     _first_sentence(notes.get(_P + "description", ""))))
    columns = sorted(sizes, key=size_rank)
    table = _table(["SERIES", *[c.upper() for c in columns]],
                   [[row, *[cells.get(c, "-") for c in columns]] for row, cells in rows.items()])
    notes = _table(["SERIES", "NAME", "DESCRIPTION"], [[s, n or "-", d or "-"] for s, (n, d) in legend.items()])
    return table + "\n" + notes


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    head, dot, _ = flat.partition(". ")
    return head + "." if dot else flat


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


def _memory(value: str, flag: str = "--memory") -> int:
    from instancetype.catalog.fit import memory_bytes
    from instancetype.errors import Error

    try:
        n = memory_bytes(value.strip())
    except Error as exc:
        raise CLIError(f'invalid value for {flag}: "{value}": {exc}') from None
    if n <= 0:
        raise CLIError(f'invalid value for {flag}: "{value}" (must be more than 0)')
    return n


def _range(value: str, flag: str, parse) -> tuple:
    """`N` (at least N) or `MIN-MAX`; MIN no more than MAX."""
    low, sep, high = value.strip().partition("-")
    if not sep:
        return parse(value), None
    if not low.strip() or not high.strip():
        raise CLIError(f'invalid value for {flag}: "{value}" (a range is MIN-MAX, e.g. 2-4 or 4Gi-8Gi)')
    lo, hi = parse(low), parse(high)
    if lo > hi:
        raise CLIError(f'invalid value for {flag}: "{value}" (the minimum is more than the maximum)')
    return lo, hi


def _kind_name(value: str, flag: str, cluster_kind: str, kind: str) -> tuple[str, str]:
    """`NAME` (the cluster kind) or `KIND/NAME` as `create vm` takes them."""
    from instancetype.api.kinds import resource_for

    if "/" not in value:
        return cluster_kind, value
    word, _, name = value.partition("/")
    res = resource_for(word)
    found = res.kind if res is not None else None
    if found not in (cluster_kind, kind) or not name:
        raise CLIError(f'invalid value for {flag}: "{value}" (NAME, or {cluster_kind.lower()}/NAME or '
                       f"{kind.lower()}/NAME)")
    return found, name


_FIT_OUTPUTS = ("table", "wide", "yaml", "json", "name")


@catalog.command("fit", epilog="""\b
Examples:
  instancetype catalog fit --cpu 3 --memory 6Gi
  instancetype catalog fit --cpu 2-4 --memory-per-cpu 4Gi --all
  instancetype catalog fit --cpu 4 --memory 8Gi --dedicated-cpu
  instancetype catalog fit --memory 4Gi --preference fedora --arch amd64
  instancetype catalog fit --for vm/vm1 --cpu 2
  instancetype create vm --name vm1 \\
    --instancetype $(instancetype catalog fit --cpu 3 --memory 6Gi -o name | head -n 1)""")
@click.option("--cpu", default=None, metavar="N|MIN-MAX", help="vCPUs the VM needs: at least N, or a range (default 1).")
@click.option("--memory", default=None, metavar="Q|MIN-MAX", help="Guest memory: at least Q (e.g. 6Gi), or a range (4Gi-8Gi).")
@click.option("--memory-per-cpu", default=None, metavar="Q|MIN-MAX",
              help="Guest memory per vCPU: at least Q, or a range (e.g. 2Gi-4Gi).")
@click.option("--arch", default=None, metavar="ARCH", help="The VM's architecture (amd64, arm64, s390x).")
@click.option("--preference", default=None, metavar="[KIND/]NAME",
              help="A preference whose requirements the type must meet (as the VM webhook checks them).")
@click.option("--exclude", multiple=True, metavar="PATTERN",
              help="Never offer types whose name matches (shell-style, e.g. 'o1.*'); repeatable, comma-separated.")
@click.option("--for", "for_vm", default=None, metavar="vm/NAME",
              help="The types this VM can move to: admitted with its template and preference.")
@click.option("--all", "every", is_flag=True, help="Every type that fits, not only the smallest of each class.")
@click.option("--builtin", is_flag=True, help="The built-in catalogue instead of the store's or cluster's types.")
@click.option("--class", "classes", multiple=True, metavar="CLASS",
              help="Only this class: a class label (general.purpose) or a series (u, u1); offers its "
                   "special and deprecated types too.")
@click.option("--dedicated-cpu", is_flag=True, help="Dedicated CPUs (offers cx1, d1, n1, rt1).")
@click.option("--hugepages", is_flag=True, help="Hugepages-backed memory.")
@click.option("--overcommit", is_flag=True, help="Overcommitted memory (o1).")
@click.option("--gpus", default=None, metavar="N", help="At least N GPUs.")
@click.option("-n", "--namespace", default=None, metavar="NS",
              help="The namespace of namespaced instancetypes, preferences and the --for VM.")
@click.option("-o", "--output", default="table", metavar="FORMAT", help="table, wide, json, yaml or name.")
@click.pass_context
def fit_cmd(ctx, cpu, memory, memory_per_cpu, arch, preference, exclude, for_vm, every, builtin, classes,
            dedicated_cpu, hugepages, overcommit, gpus, namespace, output) -> None:
    """The smallest instancetype of each class with the vCPUs and memory asked for, among the
    instancetypes the store or cluster holds (both kinds, the catalogue among them)."""
    from instancetype.catalog.fit import Request, engine_check, fit

    fmt = (output or "table").lower()
    if fmt not in _FIT_OUTPUTS:
        raise CLIError(f'invalid value for -o/--output: "{output}" (allowed: {", ".join(_FIT_OUTPUTS)})')
    cpu_lo, cpu_hi = (1, None) if cpu is None else _range(cpu, "--cpu", lambda v: _positive_int("--cpu", v))
    mem_lo, mem_hi = (0, None) if memory is None else _range(memory, "--memory", _memory)
    per_cpu = None if memory_per_cpu is None else _range(
        memory_per_cpu, "--memory-per-cpu", lambda v: _memory(v, "--memory-per-cpu"))
    patterns = tuple(p.strip() for raw in exclude for p in raw.split(",") if p.strip())
    if for_vm is not None and builtin:
        raise CLIError("--for reads a VM from the store or cluster: it cannot be used with --builtin")
    base = dict(cpu=cpu_lo, cpu_max=cpu_hi,
                memory=None if memory is None else memory.strip().partition("-")[0].strip(),
                memory_bytes=mem_lo, memory_max_bytes=mem_hi, memory_per_cpu=per_cpu,
                classes=tuple(classes), dedicated_cpu=dedicated_cpu, hugepages=hugepages, overcommit=overcommit,
                gpus=0 if gpus is None else _positive_int("--gpus", gpus, allow_zero=True),
                exclude=patterns, every=every or for_vm is not None)
    if builtin:
        from instancetype import catalog as cat

        if preference is not None:
            kind, name = _kind_name(preference, "--preference", "VirtualMachineClusterPreference",
                                    "VirtualMachinePreference")
            pref = next((o for o in cat.preferences() if o["metadata"]["name"] == name), None)
            if pref is None:
                raise CLIError(f'invalid value for --preference: the built-in catalogue has no preference "{name}"')
        else:
            pref = None
        check = engine_check(preference=pref, arch=arch) if (pref is not None or arch is not None) else None
        fits = fit(Request(**base, check=check), cat.instancetypes())
    else:
        fits = _fit_in_store(ctx, base, namespace, preference, arch, for_vm)
    _print_fits(fits, fmt)


def _fit_in_store(ctx, base: dict, namespace: str | None, preference: str | None, arch: str | None,
                  for_vm: str | None) -> list:
    from instancetype.catalog.fit import Request, engine_check, fit
    from instancetype.errors import Error

    from .cluster_options import default_namespace
    from .kubectl import cluster_of

    ns = namespace or default_namespace(ctx)
    try:
        with cluster_of(ctx) as cluster:
            objs = list(cluster.list("VirtualMachineClusterInstancetype", None))
            objs += list(cluster.list("VirtualMachineInstancetype", ns))
            if not objs:
                raise CLIError("no instancetypes in the store or cluster (instancetype catalog sync deploys "
                               "the catalogue; --builtin fits against it without a store)")
            pref = None
            if preference is not None:
                kind, name = _kind_name(preference, "--preference", "VirtualMachineClusterPreference",
                                        "VirtualMachinePreference")
                pref = cluster.get(kind, name, None if kind.startswith("VirtualMachineCluster") else ns)
            vm = None
            if for_vm is not None:
                word, _, name = for_vm.partition("/")
                if word.lower() not in ("vm", "vms", "virtualmachine", "virtualmachines") or not name:
                    raise CLIError(f'invalid value for --for: "{for_vm}" (vm/NAME)')
                vm = cluster.get("VirtualMachine", name, ns)
                if pref is None:
                    pref = _vm_preference(cluster, vm)
            config = cluster.config()
            check = None
            if pref is not None or arch is not None or vm is not None:
                check = engine_check(preference=pref, arch=arch, vm=vm, config=config)
            fits = fit(Request(**base, check=check), objs)
            if vm is not None:
                from .set_cmd import predicted_outcome

                current = (vm.get("spec") or {}).get("instancetype") or {}
                for f in fits:
                    if f.type.name == current.get("name") and f.type.kind == (
                            current.get("kind") or "VirtualMachineClusterInstancetype"):
                        f.reasons.insert(0, "current")
                        continue
                    # what `set instancetype` would say: the controller's steps on an overlay
                    f.reasons.insert(0, predicted_outcome(cluster, vm, "instancetype", f.type.name, f.type.kind,
                                                          config))
            return fits
    except CLIError:
        raise
    except Error as e:
        raise CLIError(str(e)) from None


def _vm_preference(cluster, vm: dict) -> dict | None:
    """The preference the VM has (its pinned revision, else the object its matcher names), found
    by the engine's finder over the store; None when the VM names none."""
    from instancetype.engine.find import find_preference, index_for
    from instancetype.store.source import StoreObjects

    return find_preference(vm, index_for(vm, StoreObjects(cluster.store)))


def _print_fits(fits: list, fmt: str) -> None:
    from instancetype.catalog.fit import format_bytes

    if fmt == "name":
        _write("".join(f"{f.type.resource}\n" for f in fits))
    elif fmt in ("table", "wide"):
        rows = []
        for f in fits:
            t = f.type
            row = [t.name, t.class_label or "<none>", str(t.cpu), t.memory, f"+{f.extra_cpu}",
                   "+" + format_bytes(f.extra_memory)]
            if fmt == "wide":
                row[1:1] = [t.kind]
            rows.append(row + [", ".join(f.reasons)])
        headers = ["NAME", "CLASS", "CPUS", "MEMORY", "EXTRA CPUS", "EXTRA MEMORY", "WHY"]
        if fmt == "wide":
            headers[1:1] = ["KIND"]
        _write(_table(headers, rows))
    else:
        from instancetype.cli import output as out

        data = [f.to_dict(f.type.kind) for f in fits]
        _write(out.yaml_text(data) if fmt == "yaml" else out.json_text(data))


# --- volumes -----------------------------------------------------------------------------------
_VOLUME_KINDS = ("DataSource", "PersistentVolumeClaim", "VolumeSnapshot")
_ARCH_LABEL = "template.kubevirt.io/architecture"


@catalog.command("volumes")
@click.option("-n", "--namespace", default=None, metavar="NS", help="The namespace to look in.")
@click.option("-A", "--all-namespaces", is_flag=True, help="Every namespace.")
@click.option("-o", "--output", default="table", metavar="FORMAT", help="table, yaml, json or name.")
@click.pass_context
def volumes_cmd(ctx, namespace, all_namespaces, output) -> None:
    """The bootable volumes of the store or cluster: DataSources, PVCs and VolumeSnapshots labelled
    with a default instancetype or preference (what KubeVirt's UI lists), with the OS and
    architecture their preference names."""
    from instancetype.api.kinds import LABEL_DEFAULT_INSTANCETYPE, LABEL_DEFAULT_PREFERENCE
    from instancetype.errors import Error
    from instancetype.store.base import NotFound

    from .cluster_options import default_namespace
    from .kubectl import cluster_of

    fmt = _output(output)
    ns = None if all_namespaces else (namespace or default_namespace(ctx))
    found: list[dict] = []
    rows: list[list[str]] = []
    try:
        with cluster_of(ctx) as cluster:
            for kind in _VOLUME_KINDS:
                try:
                    objs = list(cluster.list(kind, ns))
                except NotFound:                 # the cluster does not serve the kind
                    continue
                for obj in objs:
                    labels = obj["metadata"].get("labels") or {}
                    if LABEL_DEFAULT_INSTANCETYPE not in labels and LABEL_DEFAULT_PREFERENCE not in labels:
                        continue
                    found.append(obj)
                    os_type, arch = _volume_os_arch(cluster, obj, labels)
                    row = [obj["metadata"]["name"], kind, os_type, arch,
                           labels.get(LABEL_DEFAULT_INSTANCETYPE, "<none>"),
                           labels.get(LABEL_DEFAULT_PREFERENCE, "<none>")]
                    if ns is None:
                        row.insert(0, obj["metadata"].get("namespace", ""))
                    rows.append(row)
    except Error as e:
        raise CLIError(str(e)) from None
    if fmt == "name":
        _write("".join(f"{o['kind'].lower()}/{o['metadata']['name']}\n" for o in found))
    elif fmt == "table":
        if not rows:
            where = "" if ns is None else f" in {ns} namespace"
            sys.stderr.write(f"No bootable volumes found{where}\n")
            return
        headers = ["NAME", "KIND", "OS", "ARCH", "INSTANCETYPE", "PREFERENCE"]
        if ns is None:
            headers.insert(0, "NAMESPACE")
        _write(_table(headers, rows))
    else:
        _print_objects(found, fmt)


def _volume_os_arch(cluster, obj: dict, labels: dict) -> tuple[str, str]:
    """The OS (the default preference's `os-type` label) and the architecture (the volume's
    `template.kubevirt.io/architecture` label, else what the preference requires or prefers)."""
    from instancetype.api.kinds import LABEL_DEFAULT_PREFERENCE, LABEL_DEFAULT_PREFERENCE_KIND, PREFERENCE_MATCHER_KINDS
    from instancetype.errors import Error

    pref: dict = {}
    name = labels.get(LABEL_DEFAULT_PREFERENCE)
    if name:
        kind = PREFERENCE_MATCHER_KINDS.get(labels.get(LABEL_DEFAULT_PREFERENCE_KIND, "").lower(),
                                            "VirtualMachineClusterPreference")
        try:
            pref = cluster.get(kind, name, None if kind.startswith("VirtualMachineCluster") else
                               obj["metadata"].get("namespace"))
        except Error:
            pref = {}
    os_type = ((pref.get("metadata") or {}).get("labels") or {}).get(_P + "os-type", "-")
    spec = pref.get("spec") or {}
    arch = (labels.get(_ARCH_LABEL) or (spec.get("requirements") or {}).get("architecture")
            or spec.get("preferredArchitecture") or "-")
    return os_type, arch


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
