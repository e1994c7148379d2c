"""Helpers every VM validation module shares: causes, typed reads of a schema-checked spec,
quantities as KubeVirt's resource.Quantity reads them, Kubernetes name rules, feature gates.

The specs these modules read passed the VirtualMachine schema check (schema.py) and were
decoded by vm_decode.load_vm, so every present field has its Go type: the rules read them as
`(x or _E)` / `(x or "")` / `(x or ())`, an absent field reading as Go's zero value.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from instancetype.api.quantity import Quantity

import re
from functools import lru_cache
from typing import Any

from instancetype.engine.results import Cause

INVALID = "FieldValueInvalid"
REQUIRED = "FieldValueRequired"
NOT_FOUND = "FieldValueNotFound"
NOT_SUPPORTED = "FieldValueNotSupported"
DUPLICATE = "FieldValueDuplicate"

# KubeVirt's nameOfTypeNotFoundMessagePattern
NOT_FOUND_FMT = "{} '{}' not found."
# valueMustBePositiveMessagePattern
MUST_BE_POSITIVE_FMT = "{} '{}': must be greater than or equal to 0."

_EMPTY: dict[str, Any] = {}


def d(v: Any) -> dict[str, Any]:
    """`v` when it is an object, else an empty one (a nil Go struct pointer read as its zero)."""
    return v if type(v) is dict else _EMPTY


def cause(reason: str, message: str, field: str) -> Cause:
    return Cause(reason, message, field)


# --- quantities ------------------------------------------------------------------------------
@lru_cache(maxsize=4096)
def _parse(text: str) -> Quantity:
    from instancetype.api.quantity import Quantity

    return Quantity.parse(text)


def quantity(v: Any) -> Quantity | None:
    """The Quantity of a (canonical) quantity value, or None when absent or unreadable."""
    if v is None:
        return None
    try:
        return _parse(v if type(v) is str else str(v))
    except Exception:  # vm_decode already refused bad quantities; never crash here
        return None


def resource(resources: dict[str, Any], group: str, name: str) -> Quantity:
    """ResourceList.Memory()/Cpu(): the quantity, or zero when the key is absent."""
    q = quantity(d(resources.get(group)).get(name))
    return q if q is not None else _parse("0")


def zero() -> Quantity:
    return _parse("0")


# --- Kubernetes names (k8s.io/apimachinery/pkg/util/validation) -------------------------------
_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
LABEL_REGEX_ERROR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                     "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
                     "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN_REGEX_ERROR = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                         "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
                         "regex used for validation is "
                         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def dns1123_label_errors(value: str) -> list[str]:
    """IsDNS1123Label."""
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_RE.match(value):
        errs.append("must not contain dots" if _SUBDOMAIN_RE.match(value) else LABEL_REGEX_ERROR)
    return errs


def dns1123_subdomain_errors(value: str) -> list[str]:
    """IsDNS1123Subdomain."""
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _SUBDOMAIN_RE.match(value):
        errs.append(SUBDOMAIN_REGEX_ERROR)
    return errs


# --- PCI addresses (pkg/util/hardware ParsePciAddress) -----------------------------------------
_PCI_RE = re.compile(r"^([\da-fA-F]{4}):([\da-fA-F]{2}):([\da-fA-F]{2})\.([0-7]{1})$")


def pci_address_ok(text: str) -> bool:
    return bool(_PCI_RE.match(text))


# --- the cluster configuration's feature gates ------------------------------------------------
class Gates:
    """The feature gates of `developerConfiguration.featureGates` (virt-config's *Enabled())."""

    __slots__ = ("enabled",)

    def __init__(self, config: Any):
        dev = d(d(config).get("developerConfiguration"))
        self.enabled = frozenset(g for g in dev.get("featureGates") or () if type(g) is str)

    def __contains__(self, gate: str) -> bool:
        return gate in self.enabled


# `(x or _E)` reads a schema-checked struct that may be absent (the hot path's form of d(x)).
_E = _EMPTY
