"""Object names as the Kubernetes API server checks them, with its texts. Pure.

* apimachinery `util/validation`: `IsDNS1123Label`, `IsDNS1123Subdomain` (lengths counted in
  bytes, as Go's `len`), and `api/validation/path.IsValidPathSegmentName` (what client-go
  checks before a name goes into a URL).
* apimachinery `api/validation.ValidateObjectMetaAccessor`: `metadata.name` by the kind's name
  function, `metadata.namespace` a DNS-1123 label for a namespaced kind. Every kind stored here
  uses `NameIsDNSSubdomain` (custom resources: apiextensions' customResourceValidator; PVC,
  ControllerRevision: their registry strategies) except Namespace (`ValidateNamespaceName`,
  a DNS-1123 label).
* A field error reads as `field.Error` prints it: `metadata.name: Invalid value: "MyVM": <detail>`.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from .gotext import quote

LABEL_MAX_LEN = 63            # DNS1123LabelMaxLength
SUBDOMAIN_MAX_LEN = 253       # DNS1123SubdomainMaxLength

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + r"(\." + _LABEL_FMT + ")*"
_LABEL = re.compile(_LABEL_FMT)
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT)
_LABEL_ERR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
              "and must start and end with an alphanumeric character")
_SUBDOMAIN_ERR = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character")

# path.NameMayNotBe / NameMayNotContain
PATH_SEGMENT_MAY_NOT_BE = (".", "..")
PATH_SEGMENT_MAY_NOT_CONTAIN = ("/", "%")

# Kinds whose names are DNS-1123 labels; every other kind stored here takes a DNS-1123 subdomain.
LABEL_NAMED_KINDS = frozenset({"Namespace"})


class FieldError(NamedTuple):
    """One `field.Error`: `field` (e.g. `metadata.name`) and `message` (its ErrorBody)."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


def _byte_len(value: str) -> int:
    return len(value.encode("utf-8", "surrogateescape"))


def max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery `RegexError` (its odd ",  or" spacing included)."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    msg += " (e.g. " + "".join((" or " if i else "") + f"'{e}', " for i, e in enumerate(examples))
    return msg + f"regex used for validation is '{fmt}')"


def label_errors(value: str) -> list[str]:
    """IsDNS1123Label: the problems, empty when `value` is a valid label."""
    errs = []
    if _byte_len(value) > LABEL_MAX_LEN:
        errs.append(max_len_error(LABEL_MAX_LEN))
    if not _LABEL.fullmatch(value):
        if _SUBDOMAIN.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_LABEL_ERR, _LABEL_FMT, "my-name", "123-abc"))
    return errs


def subdomain_errors(value: str) -> list[str]:
    """IsDNS1123Subdomain: the problems, empty when `value` is a valid subdomain."""
    errs = []
    if _byte_len(value) > SUBDOMAIN_MAX_LEN:
        errs.append(max_len_error(SUBDOMAIN_MAX_LEN))
    if not _SUBDOMAIN.fullmatch(value):
        errs.append(regex_error(_SUBDOMAIN_ERR, _SUBDOMAIN_FMT, "example.com"))
    return errs


def path_segment_errors(name: str) -> list[str]:
    """IsValidPathSegmentName: what may not be in a name that becomes a URL path segment."""
    for bad in PATH_SEGMENT_MAY_NOT_BE:
        if name == bad:
            return [f"may not be '{bad}'"]
    return [f"may not contain '{bad}'" for bad in PATH_SEGMENT_MAY_NOT_CONTAIN if bad in name]


def name_errors(kind: str, name: str) -> list[str]:
    """The kind's name function (NameIsDNSSubdomain, or NameIsDNSLabel for a Namespace)."""
    return label_errors(name) if kind in LABEL_NAMED_KINDS else subdomain_errors(name)


def invalid(field: str, value: Any, detail: str = "") -> FieldError:
    """field.Invalid's text (a string value as Go's %q prints it)."""
    shown = quote(value) if isinstance(value, str) else str(value)
    return FieldError(field, f"Invalid value: {shown}" + (f": {detail}" if detail else ""))


def object_meta_errors(kind: str, meta: Mapping[str, Any], namespaced: bool) -> list[FieldError]:
    """ValidateObjectMetaAccessor's name and namespace checks on a create (after generateName
    filled the name; the namespace already defaulted), for a metadata whose name and namespace
    are strings or absent.

    A valid name and namespace without a generateName (every create a VM start makes) are
    answered by `_valid` alone; anything else is checked field by field for its texts
    (`meta_errors`), which finds nothing where `_valid` holds."""
    name, namespace = meta.get("name"), meta.get("namespace")
    if not meta.get("generateName") and type(name) is str \
            and _valid(name, LABEL_MAX_LEN if kind in LABEL_NAMED_KINDS else SUBDOMAIN_MAX_LEN) \
            and (not namespaced or (type(namespace) is str and _valid(namespace, LABEL_MAX_LEN))):
        return []
    return meta_errors(kind, meta, namespaced)


def _valid(value: str, max_len: int) -> bool:
    """A DNS-1123 label (`max_len` LABEL_MAX_LEN) or subdomain (SUBDOMAIN_MAX_LEN) without
    error: both patterns take ASCII characters only, so the length in bytes is `len`."""
    pattern = _LABEL if max_len == LABEL_MAX_LEN else _SUBDOMAIN
    return len(value) <= max_len and value.isascii() and pattern.fullmatch(value) is not None


def meta_errors(kind: str, meta: Mapping[str, Any], namespaced: bool) -> list[FieldError]:
    """`object_meta_errors` field by field, with every error's text."""
    errs: list[FieldError] = []
    generate = meta.get("generateName") or ""
    if generate:
        # A prefix: only the characters are checked (its end may be '-', as in "vm-").
        errs.extend(invalid("metadata.generateName", generate, m) for m in name_errors(kind, _prefix_probe(generate)))
    name = meta.get("name") or ""
    if not name:
        errs.append(FieldError("metadata.name", "Required value: name or generateName is required"))
    else:
        errs.extend(invalid("metadata.name", name, m) for m in name_errors(kind, name))
    if namespaced:
        namespace = meta.get("namespace") or ""
        if not namespace:
            errs.append(FieldError("metadata.namespace", "Required value"))
        else:
            errs.extend(invalid("metadata.namespace", namespace, m) for m in label_errors(namespace))
    return _dedup(errs)


def _prefix_probe(prefix: str) -> str:
    """apimachinery's `maskTrailingDash`: a generateName may end in '-'; the check sees 'a' there."""
    if len(prefix) > 1 and prefix.endswith("-"):
        return prefix[:-2] + "a"
    return prefix


def _dedup(errs: list[FieldError]) -> list[FieldError]:
    """ErrorList.ToAggregate drops repeated messages."""
    return list(dict.fromkeys(errs))


def aggregate(errs: list[FieldError]) -> str:
    """utilerrors.Aggregate's text: one error alone, several in brackets."""
    texts = list(dict.fromkeys(str(e) for e in errs))
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
