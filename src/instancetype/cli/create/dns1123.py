"""Kubernetes' DNS-1123 label check (apimachinery `validation.IsDNS1123Label`), with its texts."""
from __future__ import annotations

import re

MAX_LEN = 63
_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL = re.compile(_LABEL_FMT)
_SUBDOMAIN = re.compile(_LABEL_FMT + r"(\." + _LABEL_FMT + ")*")

_LABEL_ERR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
              "and must start and end with an alphanumeric character")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    # apimachinery's RegexError (its odd ",  or" spacing included)
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    msg += " (e.g. " + "".join((" or " if i else "") + f"'{e}', " for i, e in enumerate(examples))
    return msg + f"regex used for validation is '{fmt}')"


def label_errors(value: str) -> list[str]:
    """IsDNS1123Label: the list of problems, empty when `value` is a valid label."""
    errs = []
    # Go's len() counts bytes, not characters
    if len(value.encode("utf-8", "surrogateescape")) > MAX_LEN:
        errs.append(f"must be no more than {MAX_LEN} characters")
    if not _LABEL.fullmatch(value):
        if _SUBDOMAIN.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_LABEL_ERR, _LABEL_FMT, "my-name", "123-abc"))
    return errs
