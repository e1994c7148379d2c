"""The console script: `create` goes straight to its virtctl-exact parser, without importing click;
every other command goes to the click group in `cli.main`. Both run under `streams.run_guarded`,
which turns a closed, full or vanished stdout into one line and exit status 1, and Ctrl-C into
status 130 with nothing printed (as kubectl, which Go's default SIGINT handling ends).

The global options in front of `create` are found with `global_options`' table, the one list
every parser of the command line reads.

While the command's modules load, the process's cyclic garbage collector is paused
(`gcpause.start`: about a tenth of `expand -f`'s instructions)."""
from __future__ import annotations

import sys
from typing import NoReturn

from instancetype import gcpause
from instancetype.cli import EMPTY_STATE
from instancetype.cli.global_options import NAMESPACE, STATE, split_option
from instancetype.errors import CLIError


def _create_args(argv: list[str]) -> list[str] | None:
    """The words after `create` when the command is `create`, behind global options only; `-n` is
    passed on (virtctl's persistent flag; a later `-n` wins, as in pflag), the others are the
    store's, which `create` does not use.

    `--state ""` is refused here too, as the click group refuses it, though `create` writes no state."""
    i = 0
    namespace: list[str] = []
    while i < len(argv):
        if argv[i] == "create":
            rest = argv[i + 1:]
            return rest[:1] + namespace + rest[1:]
        found = split_option(argv[i])
        if found is None:
            return None
        option, value = found
        if option.takes_value and value is None:
            value = argv[i + 1] if i + 1 < len(argv) else None
            i += 2
        else:
            i += 1
        if option is STATE and value == "":
            raise CLIError(EMPTY_STATE)
        if option is NAMESPACE:
            namespace = [f"--namespace={value}"] if value is not None else []
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

        gcpause.started()

        if is_kubectl_create(create_args, SUBCOMMANDS):    # `create -f`, `create namespace`: kubectl's
            from instancetype.cli.main import run_click

            return run_click(argv)

        return run(create_args)
    from instancetype.cli.main import run_click

    return run_click(argv)


def main(argv: list[str] | None = None) -> NoReturn:
    from instancetype.cli.streams import run_guarded

    if argv is None:        # this process is the command line
        gcpause.start()
    argv = list(sys.argv[1:] if argv is None else argv)
    run_guarded(lambda: _run(argv))
