"""Go's `strconv.Quote` (what `%q` prints for a string): Kubernetes quotes names and values with it."""
from __future__ import annotations

_SIMPLE_ESCAPES = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}


def escape_rune(ch: str, q: str) -> str:
    """One character as Go's quoting writes it inside quotes `q`."""
    if ch == q or ch == "\\":
        return "\\" + ch
    if ch.isprintable() or ch == " ":
        return ch
    o = ord(ch)
    if o in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[o]
    if 0xDC80 <= o <= 0xDCFF:  # an invalid UTF-8 byte smuggled in by surrogateescape
        return f"\\x{o - 0xDC00:02x}"
    if o < 0x80:
        return f"\\x{o:02x}"
    if o < 0x10000:
        return f"\\u{o:04x}"
    return f"\\U{o:08x}"


def quote(s: str) -> str:
    """Go's strconv.Quote."""
    return '"' + "".join(escape_rune(c, '"') for c in s) + '"'
