"""ParseQuantity: text (and the rebuilt text of JSON numbers) into a Quantity's amount.

Holds the scanner, the error texts apimachinery raises and the `ParseQuantity` port with
its int64 fast path and inf.Dec fallback. It returns the amount as the fields of a
Quantity, `(v, e, dec, fmt, s)`, and never builds one: `_quantity` wraps the result (and
caches it), so the class and its parser do not import each other.
"""
from __future__ import annotations

import re

from instancetype.api.quantity._amount import (
    _MAXI,
    _NANO,
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    _fits64,
    _int_from_digits,
    _ndigits,
    _wrap32,
)
from instancetype.api.quantity._amount import MAX_POW as _MAX_POW  # (see the package's deviations)
from instancetype.api.quantity._format import _SUFFIXES
from instancetype.errors import QuantityError

_SPLIT_RE_STRING = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = "quantities must match the regular expression '" + _SPLIT_RE_STRING + "'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

# The language accepted by apimachinery's hand-written scanner (parseQuantityString):
# sign, digits, optional '.' and digits, suffix letters, optional sign, digits.
# Groups follow the scanner's greedy split.
_SCAN = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)").fullmatch
_EXP_DIGITS = re.compile(r"[+-]?[0-9]+").fullmatch

# What Go's strings.TrimSpace can remove from the raw bytes of a JSON string: its
# unicode.IsSpace set minus \t\n\v\f\r, which JSON only carries escaped (UnmarshalJSON
# sees a backslash and fails).  Python's str.strip() would also strip those and \x1c-\x1f.
_GO_SPACE = " \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _error(text: str) -> QuantityError:
    return QuantityError(text)


# ---------------------------------------------------------------------------------
# ParseQuantity


# (v, e, dec, fmt, s): the value is v * 10**e; see the `Quantity` class for each field
Amount = tuple[int, int, bool, str, "str | None"]


def scan_quantity(s: str) -> Amount:
    """ParseQuantity(s) as the fields of the Quantity it returns; QuantityError with Go's text."""
    if not s:
        raise _error(ERR_FORMAT_WRONG)
    if s == "0":
        return 0, 0, False, DECIMAL_SI, "0"
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
                return result, scale, False, fmt, cache

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
    return unscaled, dexp, True, fmt, None

