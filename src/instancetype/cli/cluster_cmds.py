"""The kubectl/virtctl commands on the embedded cluster, by the names `cli.main.COMMANDS` and
`cli.offline` import them; each lives in its own module and is imported only when asked for.

    apply_cmd                        -> cli.apply_cmd
    delete_cmd                       -> cli.delete_cmd
    wait_cmd                         -> cli.wait
    start_cmd, stop_cmd, restart_cmd,
    expand_stored                    -> cli.vm_cmds
"""
from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "apply_cmd": "apply_cmd", "delete_cmd": "delete_cmd", "wait_cmd": "wait",
    "start_cmd": "vm_cmds", "stop_cmd": "vm_cmds", "restart_cmd": "vm_cmds", "expand_stored": "vm_cmds",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__package__}.{home}"), name)


def __dir__() -> list[str]:
    return sorted(_HOMES)
