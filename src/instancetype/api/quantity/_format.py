"""Quantity text: the suffix tables and the canonical form (`CanonicalizeBytes`).

`_SUFFIXES` is what `ParseQuantity` reads; `_canonicalize` is the text `String()`
prints when the input text was not kept (suffix.go, quantity.go CanonicalizeBytes).
"""
from __future__ import annotations

from instancetype.api.quantity._amount import (
    _MINI,
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    _cmp_values,
    _digits,
    _strip10,
)

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
