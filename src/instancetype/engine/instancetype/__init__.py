"""Instancetype handlers (pkg/instancetype/apply/*.go), one module per field group.

Each handler has the signature

    apply(it, spec, metadata, root, preference=None) -> list[str]

`it` is a normalised instancetype spec (engine/spec.py), `spec` the target VMI spec
(mutated in place), `metadata` the target object metadata (only annotations are touched),
`root` the field-path root ("spec.template.spec" or "spec"). It returns its own conflicts
(field paths), and applies nothing it conflicts on. `preference` (a preference spec) is
read only by the CPU handler, for the preferred topology. `_TABLE` lists them in KubeVirt's
order (vmi.go): the conflicts of all of them are concatenated in that order.
`handlers_for(it)` is that list without the handlers whose instancetype field is absent
(they could neither apply nor conflict); an optional field's module is imported, and its handler
resolved, once, the first time an instancetype has that field.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any, cast

from instancetype.engine.spec import Handler

from .cpu import apply as _cpu
from .memory import apply as _memory

# (handler, the instancetype key it reads; None = always runs), in KubeVirt's order. The handler of
# an optional field is named by (module, function) and imported the first time an instancetype has
# that field: most instancetypes have none of them, and a command line pays for every module it
# loads. (`from . import annotations` would pick up the __future__ feature of the same name.)
_TABLE: tuple[tuple[Handler | tuple[str, str], str | None], ...] = (
    (("nodeselector", "apply"), "nodeSelector"),
    (("scheduler", "apply"), "schedulerName"),
    (_cpu, None),
    (_memory, None),
    (("iothreads", "apply_supplemental_pool"), "ioThreads"),
    (("iothreads", "apply_policy"), "ioThreadsPolicy"),
    (("launchsecurity", "apply"), "launchSecurity"),
    (("gpus", "apply"), "gpus"),
    (("hostdevices", "apply"), "hostDevices"),
    (("annotations", "apply"), "annotations"),
)


# The handler of each `_TABLE` row, filled the first time an instancetype needs that row (each
# optional module is imported once; a handler is the same function whoever asked first).
_RESOLVED: list[Handler | None] = [None if isinstance(h, tuple) else h for h, _ in _TABLE]


def _handler(i: int) -> Handler:
    handler = _RESOLVED[i]
    if handler is None:
        module, name = cast(tuple[str, str], _TABLE[i][0])
        handler = _RESOLVED[i] = cast(Handler, getattr(import_module(f"{__name__}.{module}"), name))
    return handler


def handlers_for(it: dict[str, Any]) -> tuple[Handler, ...]:
    """The handlers that can do anything for this instancetype spec, in KubeVirt's order.

    A handler whose instancetype field is absent neither applies nor conflicts, so skipping
    it changes nothing (engine/apply.py memoises the answer on the normalised spec).
    """
    return tuple(_handler(i) for i, (_, key) in enumerate(_TABLE) if key is None or it.get(key) is not None)
