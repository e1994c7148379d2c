"""The `Quantity` class: construction, text, accessors, comparison and arithmetic.

Methods call the helpers of `_amount` (representation, scaling, compare, add) and
`_format` (canonical text) directly, so splitting adds no call on the hot path.
`ParseQuantity` (`_scan`) returns an amount's fields; this module wraps them into a
Quantity and caches the result (`parse_cached`), so a cached parse costs no more than
one lookup.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from instancetype.api.quantity._amount import (
    _MINI,
    BINARY_SI,
    DECIMAL_SI,
    _cmp_values,
    _dec_add,
    _dec_scaled_value,
    _fits64,
    _go_neg_scale,
    _go_pos_scale,
    _int_add,
    _pow10,
    _scale_up_ok,
    _strip10,
)
from instancetype.api.quantity._format import _canonicalize

if TYPE_CHECKING:
    from fractions import Fraction

from instancetype.api.quantity._scan import _GO_SPACE, ERR_FORMAT_WRONG, _error, scan_quantity


class Quantity:
    """An immutable Kubernetes resource.Quantity."""

    __slots__ = ("_v", "_e", "_dec", "_fmt", "_s")
    _v: int             # the unscaled value: the amount is _v * 10**_e
    _e: int
    _dec: bool          # Go keeps the amount as an inf.Dec (not an int64Amount)
    _fmt: str           # the Format: BinarySI, DecimalSI, DecimalExponent or ""
    _s: str | None      # the canonical text, once computed

    def __new__(cls, x: str | int | float | Quantity = "0") -> Quantity:
        return cls.parse(x)

    # -- construction ---------------------------------------------------------

    @classmethod
    def parse(cls, x: str | int | float | Quantity) -> Quantity:
        """ParseQuantity for a str (strict: no whitespace trimming); JSON number rules for int/float."""
        t = type(x)
        if t is str:
            return _parse_cached(x)
        if t is Quantity:
            return x  # type: ignore[return-value]  # type(x) is Quantity: the fast path's exact check
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
    def from_json(cls, x: object) -> Quantity:
        """Quantity.UnmarshalJSON on a decoded JSON value: strings are trimmed (Go's
        strings.TrimSpace), numbers follow `parse`, None (JSON null) is a zero quantity."""
        if x is None:
            return _new(0, 0, False, "", None)
        if type(x) is str:
            s = x.strip(_GO_SPACE) if x[:1] in _GO_SPACE or x[-1:] in _GO_SPACE else x
            return _parse_cached(s)
        if isinstance(x, (int, float, Quantity)):
            return cls.parse(x)
        raise _error(ERR_FORMAT_WRONG)

    @classmethod
    def from_int(cls, n: int, fmt: str = BINARY_SI) -> Quantity:
        """NewQuantity(n, fmt)."""
        n = int(n)
        return _new(n, 0, not _fits64(n), fmt, None)

    @classmethod
    def from_milli(cls, n: int, fmt: str = DECIMAL_SI) -> Quantity:
        """NewMilliQuantity(n, fmt): n/1000."""
        n = int(n)
        return _new(n, -3, not _fits64(n), fmt, None)

    @classmethod
    def from_scaled(cls, n: int, scale: int, fmt: str = DECIMAL_SI) -> Quantity:
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

    def __reduce__(self) -> tuple[Callable[..., Quantity], tuple[int, int, bool, str, str | None]]:
        return (_new, (self._v, self._e, self._dec, self._fmt, self._s))

    def __copy__(self) -> Quantity:
        return self

    def __deepcopy__(self, memo: object) -> Quantity:
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

    def round_up(self, scale: int) -> tuple[Quantity, bool]:
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

    def as_fraction(self) -> Fraction:
        """The exact value as a fractions.Fraction (not in Go; for callers that need exact math)."""
        from fractions import Fraction

        e = self._e
        return Fraction(self._v * 10**e) if e >= 0 else Fraction(self._v, 10**-e)

    # -- comparison -----------------------------------------------------------

    def cmp(self, other: Quantity) -> int:
        """Cmp(): -1, 0 or 1."""
        return _cmp_values(self._v, self._e, other._v, other._e)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Quantity:
            return NotImplemented
        return _cmp_values(self._v, self._e, other._v, other._e) == 0

    def __ne__(self, other: object) -> bool:
        if type(other) is not Quantity:
            return NotImplemented
        return _cmp_values(self._v, self._e, other._v, other._e) != 0

    def __lt__(self, other: object) -> bool:
        if type(other) is not Quantity:
            return NotImplemented
        return _cmp_values(self._v, self._e, other._v, other._e) < 0

    def __le__(self, other: object) -> bool:
        if type(other) is not Quantity:
            return NotImplemented
        return _cmp_values(self._v, self._e, other._v, other._e) <= 0

    def __gt__(self, other: object) -> bool:
        if type(other) is not Quantity:
            return NotImplemented
        return _cmp_values(self._v, self._e, other._v, other._e) > 0

    def __ge__(self, other: object) -> bool:
        if type(other) is not Quantity:
            return NotImplemented
        return _cmp_values(self._v, self._e, other._v, other._e) >= 0

    def __hash__(self) -> int:
        v = self._v
        if v == 0:
            return 0
        return hash(_strip10(v, self._e))

    # -- arithmetic -----------------------------------------------------------

    def __add__(self, other: object) -> Quantity:
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

    def __radd__(self, other: object) -> Quantity:
        # lets sum() start from the int 0
        if type(other) is int and other == 0:
            return self
        return NotImplemented

    def __sub__(self, other: object) -> Quantity:
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

    def __neg__(self) -> Quantity:
        """Neg() on a copy."""
        v = self._v
        if not self._dec and v != _MINI:
            return _new(-v, self._e, False, self._fmt, None)
        return _new(-v, self._e, True, self._fmt, None)

    def __pos__(self) -> Quantity:
        return self

    def __mul__(self, n: object) -> Quantity:
        """Mul(n) on a copy (n an integer)."""
        if type(n) is not int:
            return NotImplemented
        p = self._v * n
        if not self._dec and _fits64(n) and _fits64(p):
            return _new(p, self._e, False, self._fmt, None)
        return _new(p, self._e, True, self._fmt, None)

    __rmul__ = __mul__


def _new(v: int, e: int, dec: bool, fmt: str, s: str | None) -> Quantity:
    q = object.__new__(Quantity)
    q._v = v
    q._e = e
    q._dec = dec
    q._fmt = fmt
    q._s = s
    return q



def _parse(text: str) -> Quantity:
    q = object.__new__(Quantity)
    q._v, q._e, q._dec, q._fmt, q._s = scan_quantity(text)
    return q


_parse_cached = lru_cache(maxsize=8192)(_parse)


def parse_cached(text: str) -> Quantity:
    """ParseQuantity with an LRU cache (quantities are immutable, so sharing is safe)."""
    return _parse_cached(text)


def canonical(x: str | int | float | Quantity) -> str:
    """The text Kubernetes prints for x (parsed with `Quantity.parse`)."""
    if type(x) is str:
        return str(_parse_cached(x))
    return str(Quantity.parse(x))
