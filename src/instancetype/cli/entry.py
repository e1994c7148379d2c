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
    `--context`, `--cluster` and `-n` may precede it; `-n` is passed on, virtctl's persistent flag).

    `--state ""` is refused here too, as the click group refuses it, though `create` writes no state."""
    i = 0
    namespace: list[str] = []
    while i < len(argv):
        a = argv[i]
        if a == "create":
            rest = argv[i + 1:]
            return rest[:1] + namespace + rest[1:]      # a later `-n` wins, as in pflag
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
        elif a in ("-n", "--namespace"):
            namespace = [f"--namespace={argv[i + 1]}"] if i + 1 < len(argv) else []
            i += 2
        elif a.startswith(("--namespace=", "-n=")):
            namespace = ["--namespace=" + a.partition("=")[2]]
            i += 1
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
        from instancetype.cli.create import SUBCOMMANDS, run
        from instancetype.cli.create_cmd import is_kubectl_create

        if is_kubectl_create(create_args, SUBCOMMANDS):    # `create -f`, `create namespace`: kubectl's
            from instancetype.cli.main import run_click

            return run_click(argv)

        return run(create_args)
    from instancetype.cli.main import run_click

    return run_click(argv)


def main(argv: list[str] | None = None) -> NoReturn:
    from instancetype.cli.streams import run_guarded

    argv = list(sys.argv[1:] if argv is None else argv)
    run_guarded(lambda: _run(argv))
