"""The console script: `create` goes straight to its virtctl-exact parser, without importing click;
every other command goes to the click group in `cli.main`."""
from __future__ import annotations

import sys


def _create_args(argv: list[str]) -> list[str] | None:
    """The words after `create` when the command is `create` (global `--state` may precede it)."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "create":
            return argv[i + 1:]
        if a == "--state":
            i += 2
        elif a.startswith("--state="):
            i += 1
        else:
            return None
    return None


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    create_args = _create_args(argv)
    if create_args is not None:
        from instancetype.cli.create import run

        sys.exit(run(create_args))
    from instancetype.cli.main import main as click_main

    click_main(argv)
