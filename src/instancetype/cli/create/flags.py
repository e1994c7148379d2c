"""A pflag-compatible flag set (github.com/spf13/pflag as cobra drives it).

Same syntax and the same error texts as virtctl: `--flag value`, `--flag=value`,
bools only as `--flag` or `--flag=value` (strconv.ParseBool), shorthands
(`-n ns`, `-nns`, `-n=ns`, grouped `-hn ns`), `--` ends the flags, a repeated
single-value flag keeps its last value, StringArray flags collect every value
as given, StringSlice flags read each value as one CSV record.
"""
from __future__ import annotations

from typing import Any

from . import goparse

STRING, BOOL, INT64, UINT32, GOINT, STRING_ARRAY, STRING_SLICE = (
    "string", "bool", "int64", "uint32", "goint", "stringArray", "stringSlice")


class FlagError(Exception):
    """A flag parse error; str() is pflag's message."""


class Flag:
    """One flag: its kind, default, usage text, current value and whether it was set."""

    __slots__ = ("name", "kind", "default", "usage", "shorthand", "hidden", "value", "changed")

    def __init__(self, name: str, kind: str, default: object = None, usage: str = "",
                 shorthand: str = "", hidden: bool = False):
        if default is None:
            default = {BOOL: False, INT64: 0, UINT32: 0, GOINT: 0, STRING: ""}.get(kind)
        self.name, self.kind, self.default, self.usage = name, kind, default, usage
        self.shorthand, self.hidden = shorthand, hidden
        self.reset()

    def reset(self) -> None:
        # a Go flag's value: bool, int, str or list[str], by `kind`
        self.value: Any = list(self.default) if isinstance(self.default, list) else self.default
        self.changed = False

    @property
    def no_opt_default(self) -> str:
        # pflag's NoOptDefVal: only bool flags may be given without a value.
        return "true" if self.kind == BOOL else ""

    def set(self, raw: str) -> None:
        """pflag's FlagSet.Set: parse into the value and mark the flag changed."""
        try:
            self._set_value(raw)
        except (goparse.NumError, goparse.CSVError, ValueError) as exc:
            who = f"-{self.shorthand}, --{self.name}" if self.shorthand else f"--{self.name}"
            raise FlagError(f"invalid argument {goparse.quote(raw)} for {goparse.quote(who)} flag: {exc}") from None
        self.changed = True

    def _set_value(self, raw: str) -> None:
        k = self.kind
        if k == STRING:
            self.value = raw
        elif k == BOOL:
            self.value = goparse.parse_bool(raw)
        elif k == INT64:
            self.value = goparse.parse_int(raw, 0, 64)
        elif k == UINT32:
            self.value = goparse.parse_uint(raw, 0, 32)
        elif k == GOINT:
            # a Go `flag` package int (klog's -v): its own terse errors
            try:
                self.value = goparse.parse_int(raw, 0, 64)
            except goparse.NumError as e:
                raise ValueError("value out of range" if e.err == goparse.RANGE else "parse error") from None
        elif k == STRING_ARRAY:
            self.value = [raw] if not self.changed else self.value + [raw]
        elif k == STRING_SLICE:
            items = [] if raw == "" else goparse.read_csv_record(raw)
            self.value = items if not self.changed else self.value + items
        else:  # pragma: no cover - programming error
            raise AssertionError(k)

    def type_name(self) -> str:
        return {STRING: "string", BOOL: "", INT64: "int", UINT32: "uint32", GOINT: "int",
                STRING_ARRAY: "stringArray", STRING_SLICE: "strings"}[self.kind]


class FlagSet:
    """The flags of one command (its own and its parents' persistent ones) and the positionals."""

    def __init__(self) -> None:
        self.flags: dict[str, Flag] = {}
        self.shorthands: dict[str, Flag] = {}
        self.args: list[str] = []

    def add(self, flag: Flag) -> Flag:
        # cobra merges parents' persistent flags without replacing a local flag of the same name
        if flag.name in self.flags:
            return self.flags[flag.name]
        self.flags[flag.name] = flag
        if flag.shorthand and flag.shorthand not in self.shorthands:
            self.shorthands[flag.shorthand] = flag
        return flag

    def lookup(self, name: str) -> Flag | None:
        return self.flags.get(name)

    def changed(self, name: str) -> bool:
        f = self.flags.get(name)
        return bool(f and f.changed)

    def value(self, name: str) -> Any:
        return self.flags[name].value

    def set(self, name: str, raw: str) -> None:
        self.flags[name].set(raw)

    # -- parsing (pflag's parseArgs / parseLongArg / parseShortArg) --------------------

    def parse(self, argv: list[str]) -> None:
        args = list(argv)
        while args:
            s = args.pop(0)
            if len(s) == 0 or s[0] != "-" or len(s) == 1:
                self.args.append(s)
                continue
            if s[1] == "-":
                if len(s) == 2:  # "--" terminates the flags
                    self.args.extend(args)
                    return
                args = self._parse_long(s, args)
            else:
                args = self._parse_short(s, args)

    def _parse_long(self, s: str, args: list[str]) -> list[str]:
        name = s[2:]
        if not name or name[0] in "-=":
            raise FlagError(f"bad flag syntax: {s}")
        name, eq, val = name.partition("=")
        flag = self.flags.get(name)
        if flag is None:
            raise FlagError(f"unknown flag: --{name}")
        if eq:
            value = val
        elif flag.no_opt_default:
            value = flag.no_opt_default
        elif args:
            value = args.pop(0)
        else:
            raise FlagError(f"flag needs an argument: {s}")
        flag.set(value)
        return args

    def _parse_short(self, s: str, args: list[str]) -> list[str]:
        shorthands = s[1:]
        out_args = args
        while shorthands:
            # pflag hands every letter the arguments as they were before this word
            shorthands, out_args = self._parse_single_short(shorthands, args)
        return out_args

    def _parse_single_short(self, shorthands: str, args: list[str]) -> tuple[str, list[str]]:
        if shorthands.startswith("test."):
            return "", args
        c = shorthands[0]
        rest = shorthands[1:]
        flag = self.shorthands.get(c)
        if flag is None:
            # pflag looks at one byte and prints it with %q: a non-ASCII first character shows
            # as the rune of its first UTF-8 byte (`-é` -> 'Ã')
            raise FlagError(f"unknown shorthand flag: {goparse.quote_byte(goparse.first_byte(c))} in -{shorthands}")
        out_args = args
        if len(shorthands) > 2 and shorthands[1] == "=":
            value, rest = shorthands[2:], ""
        elif flag.no_opt_default:
            value = flag.no_opt_default
        elif len(shorthands) > 1:
            value, rest = shorthands[1:], ""
        elif args:
            value, out_args = args[0], args[1:]
        else:
            raise FlagError(f"flag needs an argument: {goparse.quote_byte(c)} in -{shorthands}")
        flag.set(value)
        return rest, out_args


def has_no_opt_default(flags: FlagSet, name: str) -> bool:
    f = flags.flags.get(name)
    return bool(f and f.no_opt_default)


def short_has_no_opt_default(flags: FlagSet, name: str) -> bool:
    if not name:
        return False
    f = flags.shorthands.get(name[0])
    return bool(f and f.no_opt_default)
