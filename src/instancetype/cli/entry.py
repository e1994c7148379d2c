"""The console script: `create` goes straight to its virtctl-exact parser, without importing click;
every other command goes to the click group in `cli.main`. Both run under `streams.run_guarded`,
which turns a closed, full or vanished stdout into one line and exit status 1."""
from __future__ import annotations

import sys
from typing import NoReturn

from instancetype.cli import EMPTY_STATE
from instancetype.errors import CLIError


def _create_args(argv: list[str]) -> list[str] | None:
    """The words after `create` when the command is `create` (global `--state`, `--kubeconfig`,
    `--context` and `--cluster` may precede it).

    `--state ""` is refused here too, as the click group refuses it, though `create` writes no state."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "create":
            return argv[i + 1:]
        if a == "--state":
            if i + 1 < len(argv) and argv[i + 1] == "":
                raise CLIError(EMPTY_STATE)
            i += 2
        elif a.startswith("--state="):
            if a == "--state=":
                raise CLIError(EMPTY_STATE)
            i += 1
        elif a in ("--kubeconfig", "--context"):     # the cluster options: `create` writes to no store
            i += 2
        elif a == "--cluster" or a.startswith(("--kubeconfig=", "--context=")):
            i += 1
        else:
            return None
    return None


def _run(argv: list[str]) -> int:
    try:
        create_args = _create_args(argv)
    except CLIError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    if create_args is not None:
        from instancetype.cli.create import run

        return run(create_args)
    from instancetype.cli.main import run_click

    return run_click(argv)


def main(argv: list[str] | None = None) -> NoReturn:
    from instancetype.cli.streams import run_guarded

    argv = list(sys.argv[1:] if argv is None else argv)
    run_guarded(lambda: _run(argv))
