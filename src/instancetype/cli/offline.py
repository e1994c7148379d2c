"""The offline commands: `expand`, `validate`, `convert` on files, with no store and no cluster.
`expand` and what the three share (the `-f` loading, the options, the catalogue's lookups) are
here; `validate` and `convert` are in their own modules (`validate_cmd`, `convert_cmd`), so that
`expand` builds no option of theirs.

Each reads `-f` sources (files, directories, `-`), sorts the objects
(`manifests.sort_documents`), and runs the engine's public API on them. A
refused object is reported on stderr naming its file and document, the others
go on, and the exit status is 1 if anything was refused.
"""
from __future__ import annotations

import sys

import click

from instancetype.api import kinds
from instancetype.errors import Error, LoadError

from . import output
from .cluster_options import namespace_given, resolve_namespace
from .loader import read_sources
from .manifests import Manifests, read_config, resource_name, sort_documents

_filename = click.option("-f", "--filename", "filenames", multiple=True, metavar="FILE",
                         help="A file, a directory (read recursively) or - for stdin. Repeatable.")
_namespace = click.option("-n", "--namespace", default=None, callback=resolve_namespace,
                          help="The namespace of objects that name none (default: the kubeconfig context's with "
                               "--kubeconfig/--cluster/--context, else default).")
_catalogue = click.option("--builtin-catalog/--no-builtin-catalog", "builtin_catalog", default=True,
                          help="Look up cluster instancetypes and preferences the files do not define in the "
                               "built-in catalogue (default on).")
_config = click.option("--kubevirt-config", "kubevirt_config", default=None, metavar="FILE",
                       help="A KubeVirt CR, or just its spec.configuration: the cluster settings.")


def _output_option(choices: tuple[str, ...] = ("yaml", "json")):
    return click.option("-o", "--output", "fmt", default="yaml", type=click.Choice(choices),
                        help="Output format.")


def load(filenames: tuple[str, ...], namespace: str, kubevirt_config: str | None = None
         ) -> tuple[Manifests, dict | None]:
    """The sorted manifests and the cluster settings; notes on what is skipped go to stderr."""
    if not filenames:
        raise click.UsageError("must specify -f")
    m = sort_documents(read_sources(list(filenames)), namespace,
                       enforce=namespace_given(click.get_current_context(silent=True)))
    config = read_config(kubevirt_config, m)
    for w in m.warnings:
        output.warn(w)
    _note_skipped(m)
    return m, config


def _note_skipped(m: Manifests) -> None:
    for d in m.others:
        sys.stderr.write(f"note: {d.where}: skipping {d.api_version} {d.kind} "
                         f"{d.name!r}: not an object this command reads\n")


def _print(objs: list[dict], fmt: str) -> None:
    sys.stdout.write(output.objects_text(objs, fmt))


@click.command("expand")
@_filename
@click.option("--vm", "vm_name", default=None, metavar="NAME",
              help="Expand a VirtualMachine stored in the embedded store (virtctl's spelling).")
@click.option("--file", "vm_file", default=None, metavar="FILE",
              help="Expand the VirtualMachine in FILE, not stored, against the store's objects (virtctl's "
                   "`expand --file`).")
@_namespace
@_output_option()
@_config
@_catalogue
@click.pass_context
def expand_cmd(ctx, filenames, vm_name, vm_file, namespace, fmt, kubevirt_config, builtin_catalog):
    """Print each VirtualMachine expanded with its instancetype and preference.

    With -f, the instancetypes, preferences, ControllerRevisions and volumes a VM
    refers to are looked up among the other objects given, by KubeVirt's rules, and
    no store is opened. With --vm, the stored VM is expanded against the store.
    """
    import instancetype

    if vm_name is not None and vm_file is not None:   # cobra MarkFlagsMutuallyExclusive
        output.error("if any flags in the group [file vm] are set none of the others can be; [file vm] were all set")
        return 1
    if vm_name is not None or vm_file is not None:
        if filenames:
            output.error(f"{'--vm' if vm_name is not None else '--file'} and -f cannot be used together")
            return 1
        from .vm_cmds import expand_posted, expand_stored

        if vm_file is not None:
            return expand_posted(ctx, vm_file, namespace, fmt)
        return expand_stored(ctx, vm_name, namespace, fmt)
    if not filenames:
        output.error("invalid arguments - VirtualMachine name or file must be provided")
        return 1
    try:
        m, config = load(filenames, namespace, kubevirt_config)
    except LoadError as e:
        output.error(str(e))
        return 1
    if not m.vms:
        output.error("no VirtualMachine found in the input")
        return 1
    objects = _lookup_objects(m.objects(), m, builtin_catalog)
    expanded, failed = [], False
    for d in m.vms:
        try:
            expanded.append(instancetype.expand(d.obj, objects=objects, config=config))
        except Error as e:
            output.error(f"{d.where}: {resource_name(d.obj)}: {e}")
            failed = True
    if expanded:
        sys.stdout.write(output.objects_text(expanded, fmt, as_get=True))
    return 1 if failed else 0


def _lookup_objects(objects: list[dict], m: Manifests, builtin_catalog: bool) -> list[dict]:
    """The objects VMs' matchers are looked up in: the files', then the built-in catalogue's, built
    only when a VM may need it (building it is most of a small `expand -f`'s start-up)."""
    if builtin_catalog and m.vms and _may_need_catalogue([d.obj for d in m.vms], objects):
        from .builtin_objects import with_builtin_catalogue

        objects = with_builtin_catalogue(objects)
    return objects


_MATCHERS = (("instancetype", kinds.CLUSTER_INSTANCETYPE, kinds.INSTANCETYPE),
             ("preference", kinds.CLUSTER_PREFERENCE, kinds.PREFERENCE))


def _may_need_catalogue(vms: list[dict], objects: list[dict]) -> bool:
    """False only when every VM's matchers name a namespaced kind or a cluster object the files
    define (then the catalogue, whose objects the files' override, cannot change the answer);
    inference, a revision or any matcher out of the ordinary takes the catalogue, to be sure."""
    given = {(o.get("kind"), (o.get("metadata") or {}).get("name")) for o in objects if isinstance(o, dict)}
    for vm in vms:
        spec = vm.get("spec") if isinstance(vm, dict) else None
        if not isinstance(spec, dict):
            continue
        for key, cluster_kind, namespaced_kind in _MATCHERS:
            matcher = spec.get(key)
            if matcher is None:
                continue
            if not isinstance(matcher, dict) or matcher.get("inferFromVolume") or matcher.get("revisionName") \
                    or not isinstance(matcher.get("name"), str):
                return True
            kind = matcher.get("kind") or ""
            if not isinstance(kind, str):
                return True
            if kind.lower() in ("", cluster_kind.lower()):
                if (cluster_kind, matcher["name"]) not in given:
                    return True
            elif kind.lower() != namespaced_kind.lower():
                return True
    return False
