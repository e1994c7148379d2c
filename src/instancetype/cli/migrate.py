"""`instancetype migrate-vm -f legacy-vm.yaml [-o yaml|json]`.

Reads one VirtualMachine that spells out its CPU, memory and device settings and prints it
rewritten to reference a catalogue instancetype and preference (catalog/migrate.py): the new VM
on stdout, one line per field moved into the instancetype or preference on stderr. Anything
that stops the migration (a file that is not one VirtualMachine, malformed YAML, no catalogue
pair reproducing the VM) is one `error: <file>: <reason>` line and exit status 1.
"""
from __future__ import annotations

import sys

import click

from instancetype.errors import Error

from . import output
from .loader import read_sources


@click.command("migrate-vm")
@click.option("-f", "--filename", "filename", required=True, metavar="FILE",
              help="The VirtualMachine manifest (YAML or JSON), or - for stdin.")
@click.option("-o", "--output", "fmt", default="yaml", type=click.Choice(("yaml", "json")),
              help="Output format of the migrated VM.")
@click.option("--accept-nearest", is_flag=True,
              help="When no pair reproduces the VM, write the nearest one (catalog fit's type for its vCPUs "
                   "and memory); what the guest sees change is printed on stderr.")
def migrate_vm_cmd(filename: str, fmt: str, accept_nearest: bool) -> int:
    """Rewrite a VM to reference a catalogue instancetype and preference.

    The migrated VM starts exactly the VMI the original does (apart from the annotations
    naming the instancetype and preference). When no catalogue pair achieves that, the nearest
    pair is shown with the difference the guest would see, and written only with
    --accept-nearest: never a silent change.
    """
    try:
        docs = read_sources([filename])
    except Error as e:
        output.error(str(e))
        return 1
    source = "<stdin>" if filename == "-" else filename
    if not docs:
        output.error(f"{source}: no VirtualMachine in the input")
        return 1
    if len(docs) > 1:
        output.error(f"{source}: expected one VirtualMachine, found {len(docs)} objects")
        return 1
    doc = docs[0]
    if doc.kind != "VirtualMachine":
        output.error(f"{doc.where}: expected a VirtualMachine, got {doc.api_version} {doc.kind}")
        return 1

    from instancetype.catalog.migrate import MigrationError, migrate
    from instancetype.catalog.nearest import nearest

    name = f'VirtualMachine "{doc.name}"' if doc.name else "the VirtualMachine"
    try:
        result = migrate(doc.obj)
    except MigrationError as exact:
        try:
            near = nearest(doc.obj)
        except Error:
            output.error(f"{doc.where}: cannot migrate {name}: {exact}")
            return 1
        pair = near.fit.type.resource + (f" with {near.migration.preference['kind'].lower()}/"
                                         f"{near.migration.preference['metadata']['name']}"
                                         if near.migration.preference else "")
        if not accept_nearest:
            output.error(f"{doc.where}: cannot migrate {name} exactly: {exact}")
            sys.stderr.write(f"the nearest pair is {pair} (catalog fit {near.request}); the guest would see:\n"
                             f"{near.diff}rerun with --accept-nearest to write it\n")
            return 1
        result = near.migration
        output.warn(f"{doc.where}: {name} migrated to the nearest pair, {pair} (catalog fit {near.request}), "
                    "not exactly; the guest sees:")
        sys.stderr.write(near.diff)
    except Error as e:
        output.error(f"{doc.where}: cannot migrate {name}: {e}")
        return 1
    sys.stdout.write(output.objects_text([result.vm], fmt))
    for change in result.changes:
        sys.stderr.write(f"{change}\n")
    if result.preference is None:
        output.warn(f"{doc.where}: no catalogue preference reproduces {name}; "
                    "its device settings stay in the VM")
    return 0
