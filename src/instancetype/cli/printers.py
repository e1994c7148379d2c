"""kubectl's template printers for `get -o`: `jsonpath=`, `jsonpath-file=`, `custom-columns=` and
`custom-columns-file=` (cli-runtime JSONPathPrintFlags / CustomColumnsPrintFlags)."""
from __future__ import annotations

import sys
from typing import Any

from .kubectl import CommandError


def _read(path: str, what: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise CommandError(f"error: error reading --{what}, {e}") from None


def output_printer(fmt: str | None) -> JSONPathPrinter | CustomColumnsPrinter | None:
    """The template printer `-o` asks for (None: another format)."""
    if fmt is None:
        return None
    name, eq, arg = fmt.partition("=")
    if name in ("jsonpath", "jsonpath-file"):
        if not arg:
            raise CommandError("error: template format specified but no template given")
        return JSONPathPrinter(_read(arg, "template") if name == "jsonpath-file" else arg)
    if name == "custom-columns":
        if not arg:
            raise CommandError("error: custom-columns format specified but no custom columns given")
        return CustomColumnsPrinter.from_spec(arg)
    if name == "custom-columns-file":
        if not arg:
            raise CommandError("error: custom-columns-file format specified but no custom columns file given")
        return CustomColumnsPrinter.from_template(_read(arg, "template"))
    return None


class JSONPathPrinter:
    def __init__(self, template: str):
        from .jsonpath import JSONPath, JSONPathError

        self.template = template
        try:
            self.path = JSONPath(template)
        except JSONPathError as e:
            raise CommandError(f"error: {e}") from None

    def text(self, obj: Any) -> str:
        from .jsonpath import JSONPathError

        try:
            return self.path.text(obj)
        except JSONPathError as e:
            raise CommandError(f'error: error executing jsonpath "{self.template}": Error executing template: '
                               f"{e}.") from None

    def print_objects(self, gathered: tuple[Any, bool], *, no_headers: bool = False) -> None:
        doc, _single = gathered
        if doc is None:
            return
        sys.stdout.write(self.text(doc))
        sys.stdout.flush()

    def print_event(self, obj: dict, writer: Any = None) -> None:
        sys.stdout.write(self.text(obj))
        sys.stdout.flush()


class CustomColumnsPrinter:
    def __init__(self, headers: list[str], paths: list[str]):
        from .jsonpath import JSONPath, JSONPathError

        self.headers = headers
        try:
            self.paths = [JSONPath(p) for p in paths]
        except JSONPathError as e:
            raise CommandError(f"error: {e}") from None

    @classmethod
    def from_spec(cls, spec: str) -> CustomColumnsPrinter:
        headers, paths = [], []
        for part in spec.split(","):
            header, colon, path = part.partition(":")
            if not colon:
                raise CommandError(f"error: unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>")
            headers.append(header)
            paths.append(relaxed_path(path))
        return cls(headers, paths)

    @classmethod
    def from_template(cls, text: str) -> CustomColumnsPrinter:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) != 2:
            raise CommandError(f"error: invalid template, expected two lines: {lines}")
        headers, specs = lines[0].split(), lines[1].split()
        if len(headers) != len(specs):
            raise CommandError(f"error: number of headers ({len(headers)}) and field specifications ({len(specs)}) "
                               "don't match")
        return cls(headers, [relaxed_path(s) for s in specs])

    def row(self, obj: dict) -> list[str]:
        from .jsonpath import JSONPathError, go_value

        cells = []
        for p in self.paths:
            try:
                values = p.values(obj)
            except JSONPathError as e:
                raise CommandError(f"error: {e}") from None
            cells.append(",".join(go_value(v) for v in values) if values else "<none>")
        return cells

    def print_objects(self, gathered: tuple[Any, bool], *, no_headers: bool = False) -> None:
        from . import tables

        doc, single = gathered
        if doc is None:
            return
        items = [doc] if single else doc.get("items", [])
        tables.print_table(sys.stdout, (self.row(o) for o in items), None if no_headers else self.headers)

    def print_event(self, obj: dict, writer: Any) -> None:
        writer.row(self.row(obj))
        writer.flush()


def relaxed_path(path: str) -> str:
    """cmd/get `RelaxedJSONPathExpression`: `a.b`, `.a.b`, `{a.b}` and `{.a.b}` all mean `{.a.b}`."""
    import re

    if not path:
        return path
    m = re.fullmatch(r"\{\.?([^{}]+)\}|\.?([^{}]+)", path)
    if m is None:
        raise CommandError("error: unexpected path string, expected a 'name1.name2' or '.name1.name2' or "
                           "'{name1.name2}' or '{.name1.name2}'")
    return "{." + (m.group(1) or m.group(2)) + "}"
