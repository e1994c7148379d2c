"""`convert`: v1alpha1, v1alpha2 and flavor.kubevirt.io objects of `-f` sources printed as v1beta1,
with no store and no cluster (its own module: see `validate_cmd`)."""
from __future__ import annotations

import click

from instancetype.errors import LoadError

from . import output
from .loader import read_sources
from .manifests import check_known_kind
from .offline import _filename, _output_option, _print


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
