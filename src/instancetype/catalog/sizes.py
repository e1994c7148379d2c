"""Size names of the catalogue (`nano` ... `8xlarge`) in natural order, as the guest sees them.

`u1.2xlarge` comes after `u1.small`, `d1.2xmedium` between `medium` and `large`, a variant such
as `large1gi` (1Gi hugepages) is the size `large` in another row. Names outside this scheme keep
their text order after every known size.
"""
from __future__ import annotations

import re

_WORDS = ("nano", "micro", "tiny", "small", "medium", "large")
_SIZE = re.compile(r"^(?:(\d*)(x))?(" + "|".join(_WORDS) + r")(.*)$")


def split_size(text: str) -> tuple[str, str]:
    """(size, variant): `large1gi` -> (`large`, `1gi`); a name outside the scheme is its own size."""
    m = _SIZE.match(text)
    if m is None:
        return text, ""
    return text[: len(text) - len(m.group(4))], m.group(4)


def size_rank(size: str) -> tuple:
    """Sort key: the size word's place, then its multiplier (`xlarge` is 2 x `large`, `2xlarge`
    2 x `xlarge`; `2xmedium` 2 x `medium`)."""
    m = _SIZE.match(size)
    if m is None or m.group(4):
        return (len(_WORDS), 0, size)
    count, x, word = m.group(1), m.group(2), m.group(3)
    if not x:
        mult = 1
    elif word == "large":
        mult = 2 * int(count or 1)
    else:
        mult = int(count or 2)
    return (_WORDS.index(word), mult, size)
