"""Go's texts: `strconv.Quote` (what `%q` prints for a string: Kubernetes quotes names and values
with it), numbers as encoding/json and fmt's `%v` write them, Go's JSON type names, and JSON as
encoding/json writes it (`go_json`)."""
from __future__ import annotations

import re
from typing import Any

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


# --- values ---------------------------------------------------------------------------------------
# Go prints a number in two ways, and kubectl shows both: encoding/json writes a float64 in 'f'
# form between 1e-6 and 1e21 (`1000000`), while fmt's `%v` (what jsonpath, custom-columns,
# describe and the table printer print) is strconv's 'g' with the shortest digits and an exponent
# from 1e+06 on (`1e+06`). Between them stands the API server: it stores what encoding/json
# wrote, and a client decodes a whole number's text as int64 (apimachinery's `convertNumber`), so
# the float 1e6 a manifest holds reaches kubectl's `%v` as the integer 1000000.

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _digits(v: float) -> tuple[str, int]:
    """The shortest decimal digits that read back as `abs(v)` (Python's repr, Go's shortest), and
    the decimal exponent of the first digit: 1500.0 -> ("15", 3)."""
    mantissa, _, exp_text = repr(abs(v)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    if not digits.rstrip("0"):
        return "0", 0
    exp = (int(exp_text) if exp_text else 0) + len(whole) - 1
    if whole == "0":          # 0.000123: the exponent is where the first significant digit is
        exp = -(len(frac) - len(frac.lstrip("0"))) - 1
    return digits.rstrip("0"), exp


def _sign(v: float) -> str:
    return "-" if v < 0 or (v == 0 and str(v).startswith("-")) else ""


def _e_form(sign: str, digits: str, exp: int, *, min_exp_digits: int) -> str:
    body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{body}e{'-' if exp < 0 else '+'}{abs(exp):0{min_exp_digits}d}"


def _f_form(sign: str, digits: str, exp: int) -> str:
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    int_part = digits[:exp + 1].ljust(exp + 1, "0")
    frac_part = digits[exp + 1:]
    return f"{sign}{int_part}.{frac_part}" if frac_part else f"{sign}{int_part}"


def format_float(v: float) -> str:
    """fmt's `%v` of a float64 (strconv.FormatFloat(v, 'g', -1, 64)): the shortest digits, with an
    exponent when it is below -4 or at least 6 (`1e+06`, `1.5`, `1e-05`, `+Inf`)."""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "+Inf" if v > 0 else "-Inf"
    digits, exp = _digits(v)
    if exp < -4 or exp >= 6:   # shortest formatting decides with precision 6 (strconv's eprec)
        return _e_form(_sign(v), digits, exp, min_exp_digits=2)
    return _f_form(_sign(v), digits, exp)


def json_float(v: float) -> str:
    """encoding/json's text of a float64 (floatEncoder): 'f' form from 1e-6 up to 1e21, else 'e' form
    with a one-digit exponent where it has one digit (`1e-7`, `1e+21`, `1000000`, `0.000015`)."""
    if v != v or v in (float("inf"), float("-inf")):
        raise ValueError(f"json: unsupported value: {format_float(v)}")
    digits, exp = _digits(v)
    if v != 0 and (abs(v) < 1e-6 or abs(v) >= 1e21):
        return _e_form(_sign(v), digits, exp, min_exp_digits=1)
    return _f_form(_sign(v), digits, exp)


def served_number(v: int | float) -> str:
    """What kubectl prints (`%v`) for a number of an object the API server served: the value
    encoding/json wrote, decoded as apimachinery decodes it (an integer text that fits int64 is an
    int64, anything else a float64). So 1e6 prints `1000000`, 1234567.5 `1.2345675e+06`, 1e21
    `1e+21`, 2**63 `9.223372036854776e+18`. The embedded store keeps what the manifest held, so the
    command line asks this function, and prints what kubectl on a cluster would."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v) if _INT64_MIN <= v <= _INT64_MAX else format_float(float(v))
    text = json_float(v)
    if "." not in text and "e" not in text:
        whole = int(text)
        if _INT64_MIN <= whole <= _INT64_MAX:
            return str(whole)        # `-0` decodes as the integer 0
    return format_float(v)


def json_type(v: object) -> str:
    """The JSON type of a decoded value as Go's encoding/json names it in an UnmarshalTypeError
    (`json: cannot unmarshal <type> into Go value of type ...`): bool, number, string, array,
    object; `null` for None. A value no JSON document holds is named by its Python type."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "array"
    if isinstance(v, dict) or hasattr(v, "keys"):
        return "object"
    return type(v).__name__


# --- JSON as encoding/json writes it ---------------------------------------------------------------
# Go's encoding/json escapes these even in a string it prints (HTML safety, JavaScript line ends).
_GO_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))
_FLOAT_MARK = "\ue000gofloat\ue000"    # a float's Go text travels through json.dumps as this string
_FLOAT_TOKEN = f'"{_FLOAT_MARK}([^"]*)"'   # (compiled on first use, by `re`'s cache)


class _NotJSON(Exception):
    """A value `json` and msgspec write differently (a tuple, a set, bytes, a datetime...)."""


def _go_floats(v: Any, strict: bool = False) -> Any:
    """`v` with every float replaced by its encoding/json text in a marked string; `v` itself (no
    copy) when it holds no float, the common case (a Kubernetes object's numbers are integers).
    `strict`: _NotJSON for a value not of JSON's own types, found in the same walk."""
    t = type(v)
    if t is float:
        return _FLOAT_MARK + json_float(v)
    if t is dict:
        out = None
        for k, x in v.items():
            tx = type(x)
            if tx in _WALKED:
                y = _go_floats(x, strict)
                if y is not x:
                    if out is None:
                        out = dict(v)
                    out[k] = y
            elif strict and tx not in _LEAVES:
                raise _NotJSON
        return v if out is None else out
    if t is list:
        items = None
        for i, x in enumerate(v):
            tx = type(x)
            if tx in _WALKED:
                y = _go_floats(x, strict)
                if y is not x:
                    if items is None:
                        items = list(v)
                    items[i] = y
            elif strict and tx not in _LEAVES:
                raise _NotJSON
        return v if items is None else items
    if strict and t not in _LEAVES:
        raise _NotJSON
    return v


_WALKED = (float, dict, list)
# The types msgspec writes as `json` does (a float never reaches it: `_go_floats` has made it a
# string; a tuple, a set, bytes or a datetime it would write where `json` refuses or differs).
_LEAVES = frozenset({str, int, bool, type(None)})
# Every byte but msgpack's type bytes of a float (0xca, 0xcb), bytes (0xc4-0xc6) and an extension
# (0xc7-0xc9, 0xd4-0xd8): what `bytes.translate` deletes to find those (a tenth of a regex's time).
_NOT_MARKS = bytes(b for b in range(256) if not (0xC4 <= b <= 0xCB or 0xD4 <= b <= 0xD8))


def go_json(v: Any, *, indent: int | None = None) -> str:
    """JSON as Go's encoding/json writes a decoded value (`json.Marshal` of a map: kubectl's
    unstructured objects): keys sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped, UTF-8 left as it is,
    floats as `json_float` writes them; compact unless `indent` (`json.MarshalIndent`).

    The compact text is msgspec's: `json.dumps(..., sort_keys=True, separators=(",", ":"),
    ensure_ascii=False)` writes the same in ten times the instructions, and every `apply` writes
    the last-applied annotation of its object. `json` writes what msgspec refuses (a lone
    surrogate, a key that is not a string) and bytes. `v` is a decoded JSON value: a set, an enum
    or a datetime, which no JSON document decodes to, msgspec writes as it does (`json` refuses)."""
    text = data = None
    if not indent:
        import msgspec  # (as `json` below: only when a text is written)

        try:
            # msgpack marks a float (and bytes, a timestamp) with a byte of its own: without one,
            # msgspec writes the text with no walk through `v` in Python (the walk costs 4 times
            # the encoding); a string or an integer holding such a byte only takes the walk.
            if not msgspec.msgpack.encode(v).translate(None, _NOT_MARKS):
                return _go_escaped(msgspec.json.encode(v, order="sorted").decode())
            data = _go_floats(v, True)
            text = msgspec.json.encode(data, order="sorted").decode()
        except (_NotJSON, TypeError, ValueError, OverflowError):
            text = None
    if text is None:
        import json  # (here: the engine imports this module for the texts above, without JSON)

        data = _go_floats(v)
        text = json.dumps(data, sort_keys=True, indent=indent, separators=None if indent else (",", ":"),
                          ensure_ascii=False)
    if data is not v:
        text = re.sub(_FLOAT_TOKEN, r"\1", text)
    return _go_escaped(text)


def _go_escaped(text: str) -> str:
    for ch, esc in _GO_ESCAPES:
        if ch in text:
            text = text.replace(ch, esc)
    return text

