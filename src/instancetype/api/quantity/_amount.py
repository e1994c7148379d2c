"""The amount behind a Quantity: its int64 and inf.Dec representations, scaling and math.

A quantity's value is `v * 10**e` held in Python ints (see the package docstring for
the `_dec` flag).  This module holds the format names, the Go integer bounds, the
helpers that reproduce Go's int64 arithmetic (wrap-around included), the `ScaledValue`
paths of `int64Amount` (amount.go) and `inf.Dec` (scale_int.go), and the exact
comparison, `Add` and `math.Pow10` that `Quantity`'s comparison, `+`/`-` and
`as_approximate_float64` use (math.go).
"""
from __future__ import annotations

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"

_MAXI = (1 << 63) - 1  # Go mostPositive
_MINI = -(1 << 63)  # Go mostNegative
_NANO = -9


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


def _int_from_digits(d: str) -> int:
    # int() refuses strings over 4300 digits (CPython's DoS guard); Go does not.
    if len(d) <= 4000:
        return int(d)
    half = len(d) // 2
    high: int = _int_from_digits(d[:half]) * 10 ** (len(d) - half)     # (int ** int is Any to a type checker)
    return high + _int_from_digits(d[half:])


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


# ---------------------------------------------------------------------------------
# int64Amount and inf.Dec scaling (amount.go / scale_int.go)


def _scale_up_ok(v: int, k: int) -> int | None:
    """positiveScaleInt64 used as a checked multiply: v*10**k if it fits an int64, else None."""
    if k == 0 or v == 0:
        return v
    if k > 19:
        return None
    p = v * 10**k
    return p if _fits64(p) else None


def _go_pos_scale(base: int, k: int) -> int:
    """positiveScaleInt64 as AsScaledInt64 returns it (ok ignored, as ScaledValue does)."""
    if k == 0:
        return base
    if k in (1, 2, 3, 6, 9):
        # int64MultiplyScale10/100/1000/int64MultiplyScale: wrapped product on overflow
        if base in (0, 1):
            scaled: int = base * 10**k
            return scaled
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
    q: int
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
# Comparison, addition and Pow10 (math.go / amount.go)

# Go's math.Pow10 tables, so that AsApproximateFloat64 rounds exactly like Go.
_POW10TAB = tuple(float("1e%d" % i) for i in range(32))
_POW10POSTAB32 = tuple(float("1e%d" % (32 * i)) for i in range(10))
_POW10NEGTAB32 = tuple(float("1e-%d" % (32 * i)) for i in range(11))


def _pow10(n: int) -> float:
    """math.Pow10."""
    if 0 <= n <= 308:
        return _POW10POSTAB32[n // 32] * _POW10TAB[n % 32]
    if -323 <= n <= 0:
        return _POW10NEGTAB32[(-n) // 32] / _POW10TAB[(-n) % 32]
    return float("inf") if n > 0 else 0.0


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
    a: int
    b: int
    if e1 > e2:
        a, b = v1 * 10 ** (e1 - e2), v2
    else:
        a, b = v1, v2 * 10 ** (e2 - e1)
    return (a > b) - (a < b)


# int64Amount / inf.Dec addition (amount.go / math.go)


def _int_add(av: int, ae: int, bv: int, be: int) -> tuple[int, int] | None:
    """int64Amount.Add: the (value, scale) result, or None when Go falls back to inf.Dec."""
    if bv == 0:
        return av, ae
    if av == 0:
        return bv, be
    c: int | None
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


# The largest power of ten the inf.Dec fallback may build: beyond it an exact sum would need
# hundreds of thousands of digits (Go allocates them; here that is refused, never a hang).
MAX_POW = 100_000


def _dec_add(av: int, ae: int, bv: int, be: int) -> tuple[int, int]:
    """inf.Dec.Add: the result keeps the finer of the two scales."""
    if ae == be:
        return av + bv, ae
    if abs(ae - be) > MAX_POW:
        from instancetype.errors import QuantityError

        raise QuantityError(f"quantities too far apart to add exactly: the sum would need more than "
                            f"{MAX_POW} digits")
    if ae > be:
        return av * 10 ** (ae - be) + bv, be
    return av + bv * 10 ** (be - ae), ae
