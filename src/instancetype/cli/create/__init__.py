"""`instancetype create vm|instancetype|preference`: KubeVirt v1.9's `virtctl create`.

    run(argv) -> exit status

`argv` is the words after `create`. The manifest is printed as YAML on
stdout; an error is printed on stderr as virtctl prints it (the bare message,
no `Error: ` prefix) with exit status 1. The flags are parsed exactly as
pflag/cobra do (see `flags.py` and `command.py`). Only PyYAML is imported
beyond this package, to keep the command fast.
"""
from __future__ import annotations

import sys

from instancetype.errors import CLIError

from .command import HELP_PROGRAM, Command, flag_usages, global_flags
from .flags import BOOL, Flag, FlagError, FlagSet, has_no_opt_default, short_has_no_opt_default

SUBCOMMANDS = {
    "instancetype": "instancetype.cli.create.instancetype",
    "preference": "instancetype.cli.create.preference",
    "vm": "instancetype.cli.create.vm",
}
_SHORT = {
    "instancetype": "Create VirtualMachineInstancetype or VirtualMachineClusterInstancetype manifest.",
    "preference": "Create a VirtualMachinePreference or VirtualMachineClusterPreference manifest.",
    "vm": "Create a VirtualMachine manifest.",
}


def _create_flags() -> FlagSet:
    fs = FlagSet()
    fs.add(Flag("help", BOOL, shorthand="h", usage="help for create"))
    for f in global_flags():
        fs.add(f)
    return fs


def _find(argv: list[str], fs: FlagSet) -> tuple[str | None, list[str]]:
    """cobra's Find: the first word that is not a flag or a flag's value names the subcommand."""
    pos = 0
    while pos < len(argv):
        s = argv[pos]
        if s == "--":
            break
        if (s.startswith("--") and "=" not in s and not has_no_opt_default(fs, s[2:])) or \
                (s.startswith("-") and "=" not in s and len(s) == 2 and not short_has_no_opt_default(fs, s[1:])):
            if len(argv) - pos - 1 <= 1:  # cobra's stripFlags stops here
                break
            pos += 2
            continue
        if s and not s.startswith("-"):
            if s in SUBCOMMANDS:
                return s, argv[:pos] + argv[pos + 1:]
            break
        pos += 1
    return None, argv


def _create_help() -> str:
    lines = ["Create a manifest for the specified Kind, or objects from files (-f) or a namespace.", "", "Usage:",
             f"  {HELP_PROGRAM} create [command]", f"  {HELP_PROGRAM} create -f FILENAME", "",
             "Available Commands:"]
    # kubectl's half (cli/create_cmd.py) is listed too: `create namespace` and `create -f`.
    shorts = dict(_SHORT, namespace="Create a namespace with the specified name (kubectl create namespace).")
    lines += [f"  {name:<13}{shorts[name]}" for name in sorted(shorts)]
    lines += ["", "Flags:", flag_usages([
        Flag("filename", BOOL, shorthand="f", usage="Create the objects in a file, a directory or - (stdin), as "
                                                     "kubectl create -f"),
        Flag("help", BOOL, shorthand="h", usage="help for create")]), "",
              f'Use "{HELP_PROGRAM} create [command] --help" for more information about a command.']
    return "\n".join(lines) + "\n"


def _command(name: str) -> Command:
    import importlib

    return importlib.import_module(SUBCOMMANDS[name]).COMMAND


def _write(stream, text: str) -> None:
    """Write text; arguments that were not valid UTF-8 go out as the bytes they were (as Go does)."""
    buffer = getattr(stream, "buffer", None)
    if buffer is not None and not text.isascii():
        stream.flush()
        buffer.write(text.encode("utf-8", "surrogateescape"))
        buffer.flush()
    else:
        stream.write(text)


def run(argv: list[str]) -> int:
    """Run `create <argv...>`; returns the exit status (0, or 1 on any error)."""
    argv = list(argv)
    try:
        name, rest = _find(argv, _create_flags())
        if name is None:
            # `create` itself is not runnable: after its flags parse, cobra shows its help
            fs = _create_flags()
            fs.parse(argv)
            sys.stdout.write(_create_help())
            return 0
        obj = _command(name).execute(rest)
        if obj is not None:
            from .output import dump

            _write(sys.stdout, dump(obj))
            sys.stdout.flush()
        return 0
    except (FlagError, CLIError) as exc:
        _write(sys.stderr, f"{exc}\n")
        return 1
    except BrokenPipeError:
        return 1
