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
error (Go would try to allocate it), and so does a sum or difference of two quantities
whose scales are more than 100000 powers of ten apart (`1E999999999 + 1`); comparisons never
switch operands to the inf.Dec
form in place (Go's `Cmp` does, which only changes a later `Value()` of a negative
fractional quantity).  `value()` and friends reproduce Go's int64 results on amd64,
including its overflow wrap-around.

Layout (this package re-exports the public names): `_amount` (format names, Go int64
helpers, int64Amount/inf.Dec scaling, exact comparison, Add, Go's Pow10), `_format`
(suffix tables, CanonicalizeBytes), `_scan` (ParseQuantity into an amount's fields, its
error texts), `_quantity` (the `Quantity` class, the parse cache, `canonical`).
"""
from __future__ import annotations

from instancetype.api.quantity._amount import BINARY_SI, DECIMAL_EXPONENT, DECIMAL_SI

# Private names the tests import from here (the module was one file before the split).
from instancetype.api.quantity._quantity import (
    Quantity,
    _new,  # noqa: F401
    canonical,
    parse_cached,
)
from instancetype.api.quantity._scan import (
    _SCAN,  # noqa: F401
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_SUFFIX,
)

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
