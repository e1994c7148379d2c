"""Instancetype handlers (pkg/instancetype/apply/*.go), one module per field group.

Each handler has the signature

    apply(it, spec, metadata, root, preference=None) -> list[str]

`it` is a normalised instancetype spec (engine/spec.py), `spec` the target VMI spec
(mutated in place), `metadata` the target object metadata (only annotations are touched),
`root` the field-path root ("spec.template.spec" or "spec"). It returns its own conflicts
(field paths), and applies nothing it conflicts on. `preference` (a preference spec) is
read only by the CPU handler, for the preferred topology. HANDLERS lists them in KubeVirt's
order (vmi.go): the conflicts of all of them are concatenated in that order.
`handlers_for(it)` is that list without the handlers whose instancetype field is absent
(they could neither apply nor conflict).
"""
from __future__ import annotations

from typing import Any

from instancetype.engine.spec import Handler

from .annotations import apply as _annotations
from .cpu import apply as _cpu
from .gpus import apply as _gpus
from .hostdevices import apply as _hostdevices
from .iothreads import apply_policy as _iothreads_policy
from .iothreads import apply_supplemental_pool as _iothreads_pool
from .launchsecurity import apply as _launchsecurity
from .memory import apply as _memory
from .nodeselector import apply as _nodeselector
from .scheduler import apply as _scheduler

# (`from . import annotations` would pick up the __future__ feature of the same name.)
# (handler, the instancetype key it reads; None = always runs)
_TABLE = (
    (_nodeselector, "nodeSelector"),
    (_scheduler, "schedulerName"),
    (_cpu, None),
    (_memory, None),
    (_iothreads_pool, "ioThreads"),
    (_iothreads_policy, "ioThreadsPolicy"),
    (_launchsecurity, "launchSecurity"),
    (_gpus, "gpus"),
    (_hostdevices, "hostDevices"),
    (_annotations, "annotations"),
)
HANDLERS = tuple(h for h, _ in _TABLE)


def handlers_for(it: dict[str, Any]) -> tuple[Handler, ...]:
    """The handlers that can do anything for this instancetype spec, in KubeVirt's order.

    A handler whose instancetype field is absent neither applies nor conflicts, so skipping
    it changes nothing.
    """
    return tuple(h for h, key in _TABLE if key is None or it.get(key) is not None)
