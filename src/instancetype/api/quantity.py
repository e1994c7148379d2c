"""Kubernetes `resource.Quantity`, reproduced exactly (k8s.io/apimachinery pkg/api/resource).

A quantity is held the way apimachinery holds it, because several results depend on
the representation and not only on the value:

* `_v`, `_e`: the value is `_v * 10**_e` (Python ints, so no precision is lost);
* `_dec`: False for Go's `int64Amount` fast path (`_v` fits an int64), True for the
  `inf.Dec` form that `ParseQuantity` falls back to (more than 18 digits, fractional
  binary suffixes, sub-nano values) and that arithmetic falls back to on overflow.
  `Value()` and `AsApproximateFloat64()` differ between the two forms for some
  inputs, and we reproduce those differences;
* `_fmt`: BinarySI / DecimalSI / DecimalExponent (the suffix family it prints with);
* `_s`: the text `String()` returns.  Go keeps the input text when it judges it
  canonical (`ParseQuantity`'s "reuse the string" check), which is why `"+1"`,
  `"01"` and `"1.234"` print back unchanged while `"1.5"` prints `"1500m"`.

Objects are immutable; `+`, `-`, unary `-` and `* int` return new quantities following
`Quantity.Add/Sub/Neg/Mul` (format rules included: a zero receiver takes the other
operand's format).

Numbers from JSON/YAML (`Quantity.parse(1024)`, `Quantity.parse(1.5)`): Go's
`Quantity.UnmarshalJSON` parses the raw text of the number.  Python has lost that text,
so we rebuild it: an int is `str(n)`, a float is `repr(f)` (the shortest text that reads
back as the same double, e.g. `1.5`, `1000.0`, `1e+16`).  A float that was written in
exponent form in the JSON (`1e3`) therefore reads as `1000.0` (DecimalSI, prints `1k`)
where Go would keep DecimalExponent (`1e3`); write quantities as strings to avoid that.
Booleans are rejected with the format error, as Go rejects the text `true`.

`Quantity.parse(str)` is `ParseQuantity` (strict: `" 1Gi"` is an error, as for a CLI flag);
`Quantity.from_json(value)` is `UnmarshalJSON` on a decoded JSON value (strings trimmed with
Go's `strings.TrimSpace` as it applies to raw JSON text, None -> a zero quantity).

Follows the current apimachinery sources: a DecimalSI value past `E` prints in exponent
form (`1000E` -> `1e21`, older releases printed `1`), and `Neg`/`Sub` of the most negative
int64 move to inf.Dec instead of wrapping.  A BinarySI value that is a multiple of 1024**7
still prints without a suffix (no suffix exists past `Ei`), as in Go.

Deviations (only for inputs Go itself cannot reasonably handle): a parse whose inf.Dec
fallback would need a power of ten with more than 100000 digits raises the numeric
error (Go would try to allocate it); comparisons never switch operands to the inf.Dec
form in place (Go's `Cmp` does, which only changes a later `Value()` of a negative
fractional quantity).  `value()` and friends reproduce Go's int64 results on amd64,
including its overflow wrap-around.
"""
from __future__ import annotations

import re
from functools import lru_cache

from instancetype.errors import QuantityError

__all__ = [
    "Quantity",
    "canonical",
    "parse_cached",
    "BINARY_SI",
    "DECIMAL_SI",
    "DECIMAL_EXPONENT",
    "ERR_FORMAT_WRONG",
    "ERR_NUMERIC",
    "ERR_SUFFIX",
]

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"

_SPLIT_RE_STRING = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = "quantities must match the regular expression '" + _SPLIT_RE_STRING + "'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_MAXI = (1 << 63) - 1  # Go mostPositive
_MINI = -(1 << 63)  # Go mostNegative
_NANO = -9
_MAX_POW = 100_000  # largest power of ten the inf.Dec fallback may build (see deviations)

# The language accepted by apimachinery's hand-written scanner (parseQuantityString):
# sign, digits, optional '.' and digits, suffix letters, optional sign, digits.
# Groups follow the scanner's greedy split.
_SCAN = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)").fullmatch
_EXP_DIGITS = re.compile(r"[+-]?[0-9]+").fullmatch

# suffix -> (base, exponent, format)   (suffix.go: fastLookup + listSuffixer tables)
_SUFFIXES = {
    "": (10, 0, DECIMAL_SI),
    "n": (10, -9, DECIMAL_SI),
    "u": (10, -6, DECIMAL_SI),
    "m": (10, -3, DECIMAL_SI),
    "k": (10, 3, DECIMAL_SI),
    "M": (10, 6, DECIMAL_SI),
    "G": (10, 9, DECIMAL_SI),
    "T": (10, 12, DECIMAL_SI),
    "P": (10, 15, DECIMAL_SI),
    "E": (10, 18, DECIMAL_SI),
    "Ki": (2, 10, BINARY_SI),
    "Mi": (2, 20, BINARY_SI),
    "Gi": (2, 30, BINARY_SI),
    "Ti": (2, 40, BINARY_SI),
    "Pi": (2, 50, BINARY_SI),
    "Ei": (2, 60, BINARY_SI),
}
_DEC_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BIN_SUFFIX = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")

# Go's math.Pow10 tables, so that AsApproximateFloat64 rounds exactly like Go.
_POW10TAB = tuple(float("1e%d" % i) for i in range(32))
_POW10POSTAB32 = tuple(float("1e%d" % (32 * i)) for i in range(10))
_POW10NEGTAB32 = tuple(float("1e-%d" % (32 * i)) for i in range(11))

# What Go's strings.TrimSpace can remove from the raw bytes of a JSON string: its
# unicode.IsSpace set minus \t\n\v\f\r, which JSON only carries escaped (UnmarshalJSON
# sees a backslash and fails).  Python's str.strip() would also strip those and \x1c-\x1f.
_GO_SPACE = " \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


# ---------------------------------------------------------------------------------
# Go integer helpers


def _wrap64(x: int) -> int:
    return ((x + (1 << 63)) & 0xFFFFFFFFFFFFFFFF) - (1 << 63)


def _wrap32(x: int) -> int:
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _fits64(x: int) -> bool:
    return _MINI <= x <= _MAXI


def _big_int64(x: int) -> int:
    """big.Int.Int64(): the low 64 bits of |x|, negated when x < 0."""
    low = _wrap64(abs(x) & 0xFFFFFFFFFFFFFFFF)
    return _wrap64(-low) if x < 0 else low


def _trunc_divmod(a: int, b: int) -> tuple[int, int]:
    """Go's truncating integer division and remainder (b > 0)."""
    q = abs(a) // b
    if a < 0:
        q = -q
    return q, a - q * b


def _pow10(n: int) -> float:
    """math.Pow10."""
    if 0 <= n <= 308:
        return _POW10POSTAB32[n // 32] * _POW10TAB[n % 32]
    if -323 <= n <= 0:
        return _POW10NEGTAB32[(-n) // 32] / _POW10TAB[(-n) % 32]
    return float("inf") if n > 0 else 0.0


def _int_from_digits(d: str) -> int:
    # int() refuses strings over 4300 digits (CPython's DoS guard); Go does not.
    if len(d) <= 4000:
        return int(d)
    half = len(d) // 2
    return _int_from_digits(d[:half]) * 10 ** (len(d) - half) + _int_from_digits(d[half:])


def _digits(n: int) -> str:
    """str(n) without CPython's 4300-digit limit."""
    if n.bit_length() < 13000:
        return str(n)
    if n < 0:
        return "-" + _digits(-n)
    k = int(n.bit_length() * 0.30103) // 2
    hi, lo = divmod(n, 10**k)
    return _digits(hi) + _digits(lo).rjust(k, "0")


def _ndigits(n: int) -> int:
    """Number of decimal digits of |n| (n != 0), exact."""
    n = abs(n)
    est = int(n.bit_length() * 0.30102999566398) + 1
    p = 10 ** (est - 1)
    if n < p:
        return est - 1
    return est


def _strip10(m: int, e: int) -> tuple[int, int]:
    """Move factors of ten from m into the exponent (m != 0)."""
    while m % 1_000_000 == 0:
        m //= 1_000_000
        e += 6
    while m % 10 == 0:
        m //= 10
        e += 1
    return m, e


def _cmp_values(v1: int, e1: int, v2: int, e2: int) -> int:
    """Exact comparison of v1*10**e1 with v2*10**e2 (never builds huge powers needlessly)."""
    if e1 == e2:
        return (v1 > v2) - (v1 < v2)
    s1 = (v1 > 0) - (v1 < 0)
    s2 = (v2 > 0) - (v2 < 0)
    if s1 != s2 or s1 == 0:
        return (s1 > s2) - (s1 < s2)
    # same non-zero sign: compare magnitudes by order of magnitude first
    m1 = _ndigits(v1) + e1
    m2 = _ndigits(v2) + e2
    if m1 != m2:
        c = 1 if m1 > m2 else -1
        return c if s1 > 0 else -c
    if e1 > e2:
        a, b = v1 * 10 ** (e1 - e2), v2
    else:
        a, b = v1, v2 * 10 ** (e2 - e1)
    return (a > b) - (a < b)


# int64Amount arithmetic (amount.go / math.go)


def _scale_up_ok(v: int, k: int):
    """positiveScaleInt64 used as a checked multiply: v*10**k if it fits an int64, else None."""
    if k == 0 or v == 0:
        return v
    if k > 19:
        return None
    p = v * 10**k
    return p if _fits64(p) else None


def _int_add(av: int, ae: int, bv: int, be: int):
    """int64Amount.Add: the (value, scale) result, or None when Go falls back to inf.Dec."""
    if bv == 0:
        return av, ae
    if av == 0:
        return bv, be
    if ae == be:
        c = av + bv
        return (c, ae) if _fits64(c) else None
    if ae > be:
        c = _scale_up_ok(av, ae - be)
        if c is None:
            return None
        c += bv
        return (c, be) if _fits64(c) else None
    c = _scale_up_ok(bv, be - ae)
    if c is None:
        return None
    c += av
    return (c, ae) if _fits64(c) else None


def _dec_add(av: int, ae: int, bv: int, be: int) -> tuple[int, int]:
    """inf.Dec.Add: the result keeps the finer of the two scales."""
    if ae == be:
        return av + bv, ae
    if ae > be:
        return av * 10 ** (ae - be) + bv, be
    return av + bv * 10 ** (be - ae), ae


def _go_pos_scale(base: int, k: int) -> int:
    """positiveScaleInt64 as AsScaledInt64 returns it (ok ignored, as ScaledValue does)."""
    if k == 0:
        return base
    if k in (1, 2, 3, 6, 9):
        # int64MultiplyScale10/100/1000/int64MultiplyScale: wrapped product on overflow
        if base in (0, 1):
            return base * 10**k
        if base == _MINI:
            return 0
        return _wrap64(base * 10**k)
    # generic loop: gives up with 0 on the first overflowing step
    if base == 0:
        return 0
    if k > 19:
        return 0
    p = base * 10**k
    return p if _fits64(p) else 0


def _go_neg_scale(base: int, k: int) -> int:
    """negativeScaleInt64: divide by 10**k rounding away from zero."""
    if k == 0:
        return base
    if base == 0:
        return 0
    sign = 1 if base > 0 else -1
    if k > 19:
        return sign
    q, r = divmod(abs(base), 10**k)
    if q == 0:
        return sign
    return sign * (q + 1) if r else sign * q


def _dec_scaled_value(unscaled: int, scale: int, new_scale: int) -> int:
    """scale_int.go scaledValue (inf.Dec scales: value = unscaled * 10**-scale)."""
    dif = scale - new_scale
    if dif == 0:
        return _big_int64(unscaled)
    if dif < 0:
        n = -dif
        # int64(math.Pow10(n)): exact up to 10**18, then the amd64 overflow value
        p = 10**n if n <= 18 else _MINI
        return _wrap64(_big_int64(unscaled) * p)
    if unscaled < _MAXI and dif < 19:
        result, mod = _trunc_divmod(_big_int64(unscaled), 10**dif)
        return result + 1 if mod != 0 else result
    if unscaled == 0:
        return 0
    if dif > _ndigits(unscaled) + 1:
        # |unscaled| < 10**dif: floor division gives 0 or -1 with a non-zero remainder
        q, r = (0, 1) if unscaled > 0 else (-1, 1)
    else:
        q, r = divmod(unscaled, 10**dif)  # big.Int.DivMod is Euclidean: floor for a positive divisor
    return _wrap64(_big_int64(q) + 1) if r else _big_int64(q)


# ---------------------------------------------------------------------------------


def _error(text: str) -> QuantityError:
    return QuantityError(text)


class Quantity:
    """An immutable Kubernetes resource.Quantity."""

    __slots__ = ("_v", "_e", "_dec", "_fmt", "_s")

    def __new__(cls, x: "str | int | float | Quantity" = "0") -> "Quantity":
        return cls.parse(x)

    # -- construction ---------------------------------------------------------

    @classmethod
    def parse(cls, x: "str | int | float | Quantity") -> "Quantity":
        """ParseQuantity for a str (strict: no whitespace trimming); JSON number rules for int/float."""
        t = type(x)
        if t is str:
            return _parse_cached(x)
        if t is Quantity:
            return x
        if t is bool:
            raise _error(ERR_FORMAT_WRONG)
        if isinstance(x, int):
            return _parse_cached(str(int(x)))
        if isinstance(x, float):
            return _parse_cached(repr(float(x)))
        if isinstance(x, str):
            return _parse_cached(str(x))
        if isinstance(x, Quantity):
            return x
        raise _error(ERR_FORMAT_WRONG)

    @classmethod
    def from_json(cls, x) -> "Quantity":
        """Quantity.UnmarshalJSON on a decoded JSON value: strings are trimmed (Go's
        strings.TrimSpace), numbers follow `parse`, None (JSON null) is a zero quantity."""
        if x is None:
            return _new(0, 0, False, "", None)
        if type(x) is str:
            s = x.strip(_GO_SPACE) if x[:1] in _GO_SPACE or x[-1:] in _GO_SPACE else x
            return _parse_cached(s)
        return cls.parse(x)

    @classmethod
    def from_int(cls, n: int, fmt: str = BINARY_SI) -> "Quantity":
        """NewQuantity(n, fmt)."""
        n = int(n)
        return _new(n, 0, not _fits64(n), fmt, None)

    @classmethod
    def from_milli(cls, n: int, fmt: str = DECIMAL_SI) -> "Quantity":
        """NewMilliQuantity(n, fmt): n/1000."""
        n = int(n)
        return _new(n, -3, not _fits64(n), fmt, None)

    @classmethod
    def from_scaled(cls, n: int, scale: int, fmt: str = DECIMAL_SI) -> "Quantity":
        """NewScaledQuantity(n, scale): n * 10**scale (Go always uses DecimalSI)."""
        n = int(n)
        return _new(n, int(scale), not _fits64(n), fmt, None)

    # -- text -----------------------------------------------------------------

    def __str__(self) -> str:
        s = self._s
        if s is None:
            s = self._s = _canonicalize(self._v, self._e, self._dec, self._fmt)
        return s

    def __repr__(self) -> str:
        return "Quantity(%r, %s)" % (str(self), self._fmt or '""')

    def __reduce__(self):
        return (_new, (self._v, self._e, self._dec, self._fmt, self._s))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    @property
    def format(self) -> str:
        return self._fmt

    # -- accessors ------------------------------------------------------------

    def is_zero(self) -> bool:
        return self._v == 0

    def sign(self) -> int:
        v = self._v
        return (v > 0) - (v < 0)

    def value(self) -> int:
        """Value(): rounded up (away from zero) to an integer, as a Go int64."""
        return self.scaled_value(0)

    def milli_value(self) -> int:
        """MilliValue(): ceil(q * 1000), as a Go int64."""
        return self.scaled_value(-3)

    def scaled_value(self, scale: int) -> int:
        """ScaledValue(scale): ceil(q / 10**scale), as Go computes it (int64, wrap-around included)."""
        v, e = self._v, self._e
        if not self._dec:
            if e < scale:
                return _go_neg_scale(v, scale - e)
            return _go_pos_scale(v, e - scale)
        return _dec_scaled_value(v, -e, -scale)

    def as_int64(self) -> tuple[int, bool]:
        """AsInt64(): (value, True) when the int64 form holds an integer that fits."""
        if self._dec:
            return 0, False
        v, e = self._v, self._e
        if e == 0:
            return v, True
        if e < 0:
            return 0, False
        c = _scale_up_ok(v, e)
        # on overflow Go still returns positiveScaleInt64's (wrapped or zero) value
        return (c, True) if c is not None else (_go_pos_scale(v, e), False)

    def round_up(self, scale: int) -> tuple["Quantity", bool]:
        """RoundUp(scale) on a copy: (rounded quantity, exact).  Rounds away from zero."""
        v, e = self._v, self._e
        if not self._dec:
            if e >= scale:
                return self, True
            r = _go_neg_scale(v, scale - e)
            return _new(r, scale, False, self._fmt, None), r * 10 ** (scale - e) == v
        # inf.Dec Round(x, scale, RoundUp): the result always has exactly this scale
        if e >= scale:
            return _new(v * 10 ** (e - scale), scale, True, self._fmt, None), True
        r = _go_neg_scale(v, scale - e)
        return _new(r, scale, True, self._fmt, None), r * 10 ** (scale - e) == v

    def as_approximate_float64(self) -> float:
        """AsApproximateFloat64(): float(unscaled) * math.Pow10(exponent), Go's rounding."""
        v = self._v
        try:
            base = float(v)
        except OverflowError:
            base = float("inf") if v > 0 else float("-inf")
        e = self._e
        if e == 0:
            return base
        return base * _pow10(e)

    def as_fraction(self):
        """The exact value as a fractions.Fraction (not in Go; for callers that need exact math)."""
        from fractions import Fraction

        e = self._e
        return Fraction(self._v * 10**e) if e >= 0 else Fraction(self._v, 10**-e)

    # -- comparison -----------------------------------------------------------

    def cmp(self, other: "Quantity") -> int:
        """Cmp(): -1, 0 or 1."""
        return _cmp_values(self._v, self._e, other._v, other._e)

    def __eq__(self, other):
        if type(other) is not Quantity:
            return NotImplemented
        return _cmp_values(self._v, self._e, other._v, other._e) == 0

    def __ne__(self, other):
        if type(other) is not Quantity:
            return NotImplemented
        return _cmp_values(self._v, self._e, other._v, other._e) != 0

    def __lt__(self, other):
        if type(other) is not Quantity:
            return NotImplemented
        return _cmp_values(self._v, self._e, other._v, other._e) < 0

    def __le__(self, other):
        if type(other) is not Quantity:
            return NotImplemented
        return _cmp_values(self._v, self._e, other._v, other._e) <= 0

    def __gt__(self, other):
        if type(other) is not Quantity:
            return NotImplemented
        return _cmp_values(self._v, self._e, other._v, other._e) > 0

    def __ge__(self, other):
        if type(other) is not Quantity:
            return NotImplemented
        return _cmp_values(self._v, self._e, other._v, other._e) >= 0

    def __hash__(self) -> int:
        v = self._v
        if v == 0:
            return 0
        return hash(_strip10(v, self._e))

    # -- arithmetic -----------------------------------------------------------

    def __add__(self, other):
        """q.Add(other) on a copy of q."""
        if type(other) is not Quantity:
            return NotImplemented
        fmt = self._fmt
        if not self._dec and not other._dec:
            if self._v == 0:
                fmt = other._fmt
            r = _int_add(self._v, self._e, other._v, other._e)
            if r is not None:
                return _new(r[0], r[1], False, fmt, None)
        elif self._v == 0:
            fmt = other._fmt
        v, e = _dec_add(self._v, self._e, other._v, other._e)
        return _new(v, e, True, fmt, None)

    def __radd__(self, other):
        # lets sum() start from the int 0
        if type(other) is int and other == 0:
            return self
        return NotImplemented

    def __sub__(self, other):
        """q.Sub(other) on a copy of q."""
        if type(other) is not Quantity:
            return NotImplemented
        fmt = self._fmt
        if self._v == 0:
            fmt = other._fmt
        if not self._dec and not other._dec:
            if other._v == _MINI:
                if self._v == 0:
                    # 0 - y is -y with y's scale; -mostNegative moves to inf.Dec
                    return _new(-_MINI, other._e, True, fmt, None)
            else:
                r = _int_add(self._v, self._e, -other._v, other._e)
                if r is not None:
                    return _new(r[0], r[1], False, fmt, None)
        v, e = _dec_add(self._v, self._e, -other._v, other._e)
        return _new(v, e, True, fmt, None)

    def __neg__(self):
        """Neg() on a copy."""
        v = self._v
        if not self._dec and v != _MINI:
            return _new(-v, self._e, False, self._fmt, None)
        return _new(-v, self._e, True, self._fmt, None)

    def __pos__(self):
        return self

    def __mul__(self, n):
        """Mul(n) on a copy (n an integer)."""
        if type(n) is not int:
            return NotImplemented
        p = self._v * n
        if not self._dec and _fits64(n) and _fits64(p):
            return _new(p, self._e, False, self._fmt, None)
        return _new(p, self._e, True, self._fmt, None)

    __rmul__ = __mul__


def _new(v: int, e: int, dec: bool, fmt: str, s) -> Quantity:
    q = object.__new__(Quantity)
    q._v = v
    q._e = e
    q._dec = dec
    q._fmt = fmt
    q._s = s
    return q


# ---------------------------------------------------------------------------------
# ParseQuantity


def _parse_str(s: str) -> Quantity:
    if not s:
        raise _error(ERR_FORMAT_WRONG)
    if s == "0":
        return _new(0, 0, False, DECIMAL_SI, "0")
    m = _SCAN(s)
    if m is None:
        raise _error(ERR_FORMAT_WRONG)
    sign, digits, denom, suf = m.groups()
    num = digits.lstrip("0") or "0"
    if denom is None:
        denom = ""
    positive = sign != "-"

    hit = _SUFFIXES.get(suf)
    if hit is None:
        # a decimal exponent: e/E then strconv.ParseInt(rest, 10, 64), truncated to int32
        if len(suf) > 1 and suf[0] in "eE" and _EXP_DIGITS(suf[1:]):
            parsed = int(suf[1:])
            if not _fits64(parsed):
                raise _error(ERR_SUFFIX)
            base, exponent, fmt = 10, _wrap32(parsed), DECIMAL_EXPONENT
        else:
            raise _error(ERR_SUFFIX)
    else:
        base, exponent, fmt = hit

    if fmt is BINARY_SI:
        scale = 0
        if not denom:
            mantissa = 1 << exponent
            # 15 - len(num) - int32(float32(exponent)*3/10) - 1; exact for exponents 10..60
            precision = 14 - len(num) - (exponent * 3) // 10
        else:
            mantissa = 1
            precision = -1
    else:
        scale = exponent
        mantissa = 1
        precision = 18 - len(num) - len(denom)

    if precision >= 0:
        scale = _wrap32(scale - len(denom))
        if scale >= _NANO:
            shifted = num + denom
            value = int(shifted)
            result = value * mantissa
            if _fits64(result):
                if not positive:
                    result = -result
                # Go reuses the input text when it looks canonical
                cache = None
                if fmt is BINARY_SI:
                    if value & 7:
                        cache = s
                elif scale % 3 == 0 and shifted[0] != "0" and not shifted.endswith("000"):
                    cache = s
                return _new(result, scale, False, fmt, cache)

    # inf.Dec fallback: amount.SetString(value) where value is the text before the suffix
    int_digits = digits
    if not int_digits and not denom:
        raise _error(ERR_NUMERIC)  # inf.Dec: "no digits read"
    unscaled = _int_from_digits(int_digits + denom)
    dexp = -len(denom)
    if base == 10:
        dexp += exponent
    else:
        unscaled <<= exponent
    # (sign handled separately, as Go does: work on the magnitude)
    if unscaled != 0:
        # round up (away from zero) to nano: a request for some resource gets some
        if dexp >= _NANO:
            k = dexp - _NANO
            if k > _MAX_POW:
                raise _error(ERR_NUMERIC)
            unscaled *= 10**k
        else:
            k = _NANO - dexp
            if k > _ndigits(unscaled) + 1:
                unscaled = 1
            else:
                q, r = divmod(unscaled, 10**k)
                unscaled = q + 1 if r else q
        dexp = _NANO
        if fmt is BINARY_SI:
            if unscaled > _MAXI * 1_000_000_000:
                unscaled, dexp = _MAXI, 0  # silently capped at 2^63-1
            elif unscaled < 1_000_000_000:
                fmt = DECIMAL_SI  # 0 < amount < 1
    if not positive:
        unscaled = -unscaled
    return _new(unscaled, dexp, True, fmt, None)


_parse_cached = lru_cache(maxsize=8192)(_parse_str)


def parse_cached(text: str) -> Quantity:
    """ParseQuantity with an LRU cache (quantities are immutable, so sharing is safe)."""
    return _parse_cached(text)


def canonical(x) -> str:
    """The text Kubernetes prints for x (parsed with `Quantity.parse`)."""
    if type(x) is str:
        return str(_parse_cached(x))
    return str(Quantity.parse(x))


# ---------------------------------------------------------------------------------
# CanonicalizeBytes


def _canonicalize(v: int, e: int, dec: bool, fmt: str) -> str:
    if v == 0:
        return "0"
    if fmt == BINARY_SI:
        # |q| < 1024 prints as DecimalSI; so does a value that is not a whole number
        if _cmp_values(abs(v), e, 1024, 0) < 0:
            fmt = DECIMAL_SI
        else:
            if e >= 0:
                n = v * 10**e
            else:
                n, r = divmod(v, 10**-e)
                if r:
                    n = None
            if n is not None:
                times = 0
                # removeInt64Factors works on |value|, which overflows for mostNegative
                if not (not dec and e <= 0 and n == _MINI):
                    a = abs(n)
                    while a >= 1024 and a & 1023 == 0:
                        a >>= 10
                        times += 1
                    n = a if n > 0 else -a
                # Go has no suffix past Ei (constructBytes fails and prints none)
                return _digits(n) + (_BIN_SUFFIX[times] if times < 7 else "")
            fmt = DECIMAL_SI
    elif fmt != DECIMAL_SI and fmt != DECIMAL_EXPONENT:
        fmt = DECIMAL_EXPONENT

    m, x = _strip10(v, e)
    r = x % 3
    if r:
        m *= 10**r
        x -= r
    if fmt == DECIMAL_SI:
        suffix = _DEC_SUFFIX.get(x)
        if suffix is None:
            # no DecimalSI suffix beyond E (or below n): fall back to exponent notation
            suffix = "e%d" % x
    else:
        suffix = "e%d" % x if x else ""
    return _digits(m) + suffix
