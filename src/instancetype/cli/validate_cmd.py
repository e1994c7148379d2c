"""`validate`: KubeVirt's admission on the objects of `-f` sources, with no store and no cluster
(the offline commands' loading and lookups are `offline`'s). Its own module, so that `expand`, the
command line most often run, does not build this command's options."""
from __future__ import annotations

import sys

import click

from instancetype.api import kinds
from instancetype.errors import Error, LoadError, NotFoundError, UnexpectedKindError

from . import output
from .cluster_options import DEFAULT_NAMESPACE
from .manifests import resource_name
from .offline import _catalogue, _config, _filename, _lookup_objects, _namespace, load


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
