"""JSON as kubectl's Go encoder writes it."""
from __future__ import annotations

import json
from typing import Any

# Go's encoding/json escapes these even in a string it prints (HTML safety, JavaScript line ends).
_GO_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def go_json(v: Any, *, indent: int | None = None) -> str:
    """JSON as kubectl's Go encoder writes it: keys sorted, Go's escapes; compact unless `indent`."""
    text = json.dumps(v, sort_keys=True, indent=indent, separators=None if indent else (",", ":"),
                      ensure_ascii=False)
    for ch, esc in _GO_ESCAPES:
        text = text.replace(ch, esc)
    return text
