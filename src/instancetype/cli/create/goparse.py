"""Go standard-library parsing and quoting, reproduced for exact error texts.

virtctl's flag values go through Go's `strconv` (ParseBool, ParseInt, ParseUint),
`encoding/csv` (StringSlice flags) and `fmt`'s `%q`; their errors are part of
what the user sees, so they are rebuilt here character for character.
"""
from __future__ import annotations

from instancetype.api.gotext import escape_rune as _escape_rune  # noqa: F401 (re-exported)
from instancetype.api.gotext import quote


class NumError(ValueError):
    """strconv.NumError: `strconv.<Func>: parsing "<num>": <err>`."""

    def __init__(self, func: str, num: str, err: str):
        super().__init__(f"strconv.{func}: parsing {quote(num)}: {err}")
        self.func, self.num, self.err = func, num, err


SYNTAX = "invalid syntax"
RANGE = "value out of range"


def first_byte(c: str) -> str:
    """The first byte of `c`'s UTF-8 encoding (surrogateescape'd bytes included), as a rune."""
    if c.isascii():
        return c
    return chr(c.encode("utf-8", "surrogateescape")[0])


def quote_byte(b: str) -> str:
    """Go's `%q` of a byte (a quoted character literal, e.g. `'m'`)."""
    return "'" + _escape_rune(b, "'") + "'"


def to_lower(s: str) -> str:
    """strings.ToLower: rune by rune simple lowercase mapping.

    Python's str.lower differs for U+0130 (Go maps it to a plain `i`, Python adds a combining
    dot), and Go's strings.Map turns every invalid UTF-8 byte (a surrogateescape'd one here)
    into U+FFFD.
    """
    if s.isascii():
        return s.lower()
    return "".join("i" if c == "\u0130" else "\ufffd" if "\udc80" <= c <= "\udcff" else c.lower() for c in s)


# Unicode's simple case folding puts these non-ASCII runes in the orbit of an ASCII letter
# (unicode.SimpleFold's caseOrbit): KELVIN SIGN with k/K, LATIN SMALL LETTER LONG S with s/S.
_ASCII_FOLD = {"\u212a": "k", "\u017f": "s"}


def equal_fold_ascii(s: str, ascii_word: str) -> bool:
    """strings.EqualFold(s, ascii_word) for an ASCII `ascii_word` (all KubeVirt compares with).

    Equal rune by rune under simple case folding: ASCII letters regardless of case, plus the
    two non-ASCII runes whose fold orbit holds an ASCII letter (so `Alwayſ` is `Always`).
    """
    if len(s) != len(ascii_word):
        return False
    for c, w in zip(s, ascii_word):
        if c == w:
            continue
        c = _ASCII_FOLD.get(c, c)
        if not c.isascii() or c.lower() != w.lower():
            return False
    return True


_TRUE = frozenset(("1", "t", "T", "TRUE", "true", "True"))
_FALSE = frozenset(("0", "f", "F", "FALSE", "false", "False"))


def parse_bool(s: str) -> bool:
    """strconv.ParseBool."""
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise NumError("ParseBool", s, SYNTAX)


def _underscore_ok(s: str) -> bool:
    # strconv.underscoreOK: underscores only between digits (base prefix counts as a digit).
    saw = "^"
    i = 0
    if s[:1] in ("-", "+"):
        s = s[1:]
    hexa = False
    if len(s) >= 2 and s[0] == "0" and s[1].lower() in "box":
        i, saw, hexa = 2, "0", s[1].lower() == "x"
    while i < len(s):
        c = s[i]
        if "0" <= c <= "9" or (hexa and "a" <= c.lower() <= "f"):
            saw = "0"
        elif c == "_":
            if saw != "0":
                return False
            saw = "_"
        else:
            if saw == "_":
                return False
            saw = "!"
        i += 1
    return saw != "_"


def parse_uint(s: str, base: int, bits: int, func: str = "ParseUint") -> int:
    """strconv.ParseUint (base 0 = Go literal syntax: 0x, 0o, 0b, leading 0, underscores)."""
    if s == "":
        raise NumError(func, s, SYNTAX)
    s0 = s
    base0 = base == 0
    if base0:
        base = 10
        if s[0] == "0":
            if len(s) >= 3 and s[1].lower() == "b":
                base, s = 2, s[2:]
            elif len(s) >= 3 and s[1].lower() == "o":
                base, s = 8, s[2:]
            elif len(s) >= 3 and s[1].lower() == "x":
                base, s = 16, s[2:]
            else:
                base, s = 8, s[1:]
    max_u64 = (1 << 64) - 1
    cutoff = max_u64 // base + 1
    max_val = (1 << bits) - 1
    underscores = False
    n = 0
    for c in s:
        if c == "_" and base0:
            underscores = True
            continue
        if "0" <= c <= "9":
            d = ord(c) - 48
        elif "a" <= c.lower() <= "z" and c.isascii():
            d = ord(c.lower()) - ord("a") + 10
        else:
            raise NumError(func, s0, SYNTAX)
        if d >= base:
            raise NumError(func, s0, SYNTAX)
        if n >= cutoff:
            raise NumError(func, s0, RANGE)
        n = n * base + d
        if n > max_val:
            raise NumError(func, s0, RANGE)
    if underscores and not _underscore_ok(s0):
        raise NumError(func, s0, SYNTAX)
    return n


def parse_int(s: str, base: int, bits: int) -> int:
    """strconv.ParseInt."""
    if s == "":
        raise NumError("ParseInt", s, SYNTAX)
    s0 = s
    neg = False
    if s[0] == "+":
        s = s[1:]
    elif s[0] == "-":
        neg, s = True, s[1:]
    try:
        un = parse_uint(s, base, bits)
    except NumError as e:
        if e.err != RANGE:
            raise NumError("ParseInt", s0, e.err) from None
        un = (1 << bits) - 1
    cutoff = 1 << (bits - 1)
    if not neg and un >= cutoff:
        raise NumError("ParseInt", s0, RANGE)
    if neg and un > cutoff:
        raise NumError("ParseInt", s0, RANGE)
    return -un if neg else un


class CSVError(ValueError):
    pass


def _csv_read_line(data: bytes, pos: int) -> tuple[bytes, int, bool]:
    """encoding/csv readLine: (line incl. '\\n', new pos, eof). Trailing '\\r\\n' -> '\\n'."""
    if pos >= len(data):
        return b"", pos, True
    j = data.find(b"\n", pos)
    if j < 0:
        line = data[pos:]
        if line.endswith(b"\r"):
            line = line[:-1]
        return line, len(data), False
    line = data[pos:j + 1]
    if len(line) >= 2 and line[-2:] == b"\r\n":
        line = line[:-2] + b"\n"
    return line, j + 1, False


def read_csv_record(text: str) -> list[str]:
    """Go's csv.NewReader(strings.NewReader(text)).Read(): the first record only.

    Raises CSVError with Go's ParseError text (`parse error on line 1, column 2: bare " in
    non-quoted-field`) or `EOF` when there is no record.
    """
    data = text.encode("utf-8", "surrogateescape")
    pos = 0
    num_line = 0
    # skip empty lines
    while True:
        line, pos, eof = _csv_read_line(data, pos)
        if eof:
            raise CSVError("EOF")
        num_line += 1
        if line == b"\n":
            continue
        break
    rec_line = num_line
    fields: list[bytes] = []
    col = 1

    def nl(b: bytes) -> int:
        return 1 if b.endswith(b"\n") else 0

    def err(line_no: int, column: int, what: str) -> CSVError:
        if rec_line != line_no:
            return CSVError(f"record on line {rec_line}; parse error on line {line_no}, column {column}: {what}")
        return CSVError(f"parse error on line {line_no}, column {column}: {what}")

    bare = 'bare " in non-quoted-field'
    extraneous = 'extraneous or missing " in quoted-field'
    while True:
        if not line or line[:1] != b'"':
            i = line.find(b",")
            field = line[:i] if i >= 0 else line[:len(line) - nl(line)]
            j = field.find(b'"')
            if j >= 0:
                raise err(num_line, col + j, bare)
            fields.append(field)
            if i >= 0:
                line = line[i + 1:]
                col += i + 1
                continue
            break
        # quoted field
        buf = bytearray()
        line = line[1:]
        col += 1
        line_no = num_line
        done = False
        while not done:
            i = line.find(b'"')
            if i >= 0:
                buf += line[:i]
                line = line[i + 1:]
                col += i + 1
                nxt = line[:1]
                if nxt == b'"':
                    buf += b'"'
                    line = line[1:]
                    col += 1
                elif nxt == b",":
                    line = line[1:]
                    col += 1
                    fields.append(bytes(buf))
                    done = True  # continue with the next field
                elif nl(line) == len(line):
                    fields.append(bytes(buf))
                    return [f.decode("utf-8", "surrogateescape") for f in fields]
                else:
                    raise err(num_line, col - 1, extraneous)
            elif line:
                buf += line
                col += len(line)
                line, pos, eof = _csv_read_line(data, pos)
                if eof:
                    # abrupt end inside a quoted field
                    raise err(line_no, col, extraneous)
                num_line += 1
                line_no = num_line
                col = 1
            else:
                raise err(line_no, col, extraneous)
    return [f.decode("utf-8", "surrogateescape") for f in fields]
