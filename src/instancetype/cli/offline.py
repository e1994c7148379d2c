"""The offline commands: `expand`, `validate`, `convert` on files, with no store and no cluster.

Each reads `-f` sources (files, directories, `-`), sorts the objects
(`manifests.sort_documents`), and runs the engine's public API on them. A
refused object is reported on stderr naming its file and document, the others
go on, and the exit status is 1 if anything was refused.
"""
from __future__ import annotations

import sys

import click

from instancetype.api import kinds
from instancetype.errors import Error, LoadError, NotFoundError, UnexpectedKindError

from . import output
from .cluster_options import DEFAULT_NAMESPACE, namespace_given, resolve_namespace
from .loader import read_sources
from .manifests import Manifests, check_known_kind, read_config, resource_name, sort_documents

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


@click.command("validate")
@_filename
@_namespace
@_config
@_catalogue
def validate_cmd(filenames, namespace, kubevirt_config, builtin_catalog):
    """Run KubeVirt's admission on every object, as the API server and its webhooks would.

    Instancetypes and preferences get the CRD schema checks and the validating
    webhook; VirtualMachines the VM webhooks against the other objects given.
    """
    import instancetype

    try:
        m, config = load(filenames, namespace, kubevirt_config)
    except LoadError as e:
        output.error(str(e))
        return 1
    failed = False
    refused = {}
    for d in m.types + m.lookups + m.vms:
        text = _api_server_refusal(d, namespace)
        if text is not None:
            refused[id(d)] = text
    # What the API server refuses never reaches the cluster: no other object is checked against it.
    objects = _lookup_objects([d.obj for d in m.types + m.lookups if id(d) not in refused], m, builtin_catalog)
    vm_ids = {id(d) for d in m.vms}
    for d in m.in_order(m.types + m.vms):
        name = resource_name(d.obj)
        is_vm = id(d) in vm_ids
        if id(d) in refused:
            output.error(f"{d.where}: {name}: {refused[id(d)]}")
            failed = True
            continue
        try:
            if is_vm:
                result = instancetype.admit_vm(d.obj, objects=objects, config=config)
                missing = _missing_references(d.obj, objects) if result.allowed else []
            else:
                from instancetype.engine.validation import review

                result = review(d.obj)[0]
                missing = []
        except Error as e:
            output.error(f"{d.where}: {name}: {e}")
            failed = True
            continue
        for w in result.warnings:
            output.warn(w)
        for w in missing:
            output.warn(f"{name}: {w}")
        if result.allowed:
            sys.stdout.write(f"{name} valid\n")
        else:
            failed = True
            webhook = (kinds.WEBHOOK_VM_MUTATOR if result.stage == "mutate"
                       else kinds.WEBHOOK_VM_VALIDATOR if is_vm else kinds.type_validator_webhook(d.kind))
            text = output.refusal_text(result, source=d.source, webhook=webhook, obj=d.obj)
            output.error(f"{d.where}: {name}: {text}")
    return 1 if failed else 0


def _api_server_refusal(d, namespace: str | None) -> str | None:
    """The API server's own refusal of a document before any webhook (metadata Go cannot decode,
    a name or namespace it does not accept), as kubectl prints it; None when it passes."""
    from instancetype.store.base import APIError, Invalid, check_create

    from .apply_cmd import invalid_failure
    from .kubectl import api_error_text, source_name

    try:
        check_create(d.obj, namespace, json_shape=False)
    except Invalid as e:
        if e.causes:
            return invalid_failure(e.kind, e.name, e.causes, verb="creating", source=source_name(d.source)).alone
        return api_error_text(e)
    except APIError as e:
        return api_error_text(e)
    return None


def _lookup_objects(objects: list[dict], m: Manifests, builtin_catalog: bool) -> list[dict]:
    """The objects VMs' matchers are looked up in: the files', then the built-in catalogue's."""
    if builtin_catalog and m.vms:
        from .builtin_objects import with_builtin_catalogue

        objects = with_builtin_catalogue(objects)
    return objects


def _missing_references(vm: dict, objects: list[dict]) -> list[str]:
    """Why an admitted VM would not start here: its instancetype or preference is not among the objects."""
    from instancetype.engine import find
    from instancetype.engine.objects import ObjectIndex

    ns = (vm.get("metadata") or {}).get("namespace") or DEFAULT_NAMESPACE
    index = ObjectIndex(objects, ns)
    out = []
    for fn in (find.find_instancetype, find.find_preference):
        try:
            fn(vm, index)
        except (NotFoundError, UnexpectedKindError) as e:
            out.append(f"{e} (admitted, as KubeVirt admits it, but it cannot start until it exists)")
        except Error:
            pass
    return out


@click.command("convert")
@_filename
@_output_option()
def convert_cmd(filenames, fmt):
    """Print the objects with v1alpha1, v1alpha2 and flavor.kubevirt.io objects as v1beta1.

    VirtualMachines' `spec.flavor` becomes `spec.instancetype`; everything else
    is printed unchanged.
    """
    try:
        if not filenames:
            raise click.UsageError("must specify -f")
        docs = read_sources(list(filenames))
        from instancetype.api.versions import needs_upgrade, upgrade

        objs = []
        for d in docs:
            check_known_kind(d)
            if needs_upgrade(d.obj):
                try:
                    obj, warnings = upgrade(d.obj)
                except LoadError as e:
                    raise LoadError(f"{d.where}: {e}") from None
                for w in warnings:
                    output.warn(w)
                objs.append(obj)
            else:
                objs.append(d.obj)
    except LoadError as e:
        output.error(str(e))
        return 1
    if objs:
        _print(objs, fmt)
    return 0
