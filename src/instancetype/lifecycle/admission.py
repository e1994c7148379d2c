"""Admission on every create and update, written once against the store interface.

The API server's order: old API versions are served as v1beta1 (with KubeVirt's
deprecation warning), the CRD's structural schema checks run, then KubeVirt's
webhooks: the validating webhook of the four instancetype kinds, or the VM
mutating and validating webhooks. A refused object raises `Refused`, which carries
the webhook's `AdmissionResult` and the webhook's name, and changes nothing.

`admit` is the embedded store's driver; the webhooks themselves (`admit_type`, `admit_vm_object`)
take an `ObjectSource` for their lookups, so `webhook.review` answers a cluster's
AdmissionReviews with this same code.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from instancetype.api import kinds
from instancetype.api.versions import needs_upgrade, upgrade
from instancetype.engine.results import AdmissionResult, Cause
from instancetype.errors import StoreError
from instancetype.jsonutil import clone, dig
from instancetype.store.base import Store
from instancetype.store.source import StoreObjects

VM_MUTATOR = kinds.WEBHOOK_VM_MUTATOR
VM_VALIDATOR = kinds.WEBHOOK_VM_VALIDATOR
type_validator = kinds.type_validator_webhook


class Refused(StoreError):
    """An admission webhook (or the schema check) refused the object: `.result`, `.webhook`."""

    def __init__(self, message: str, *, result: AdmissionResult, webhook: str = "") -> None:
        super().__init__(message)
        self.result = result
        self.webhook = webhook   # the refusing webhook's name; "" for the CRD schema check

    @property
    def code(self) -> int:
        return self.result.code or 400


@dataclass
class Admitted:
    obj: dict                          # the object to store (converted, mutated): admission's own,
                                       # sharing nothing with what it was given (the caller may hand it over)
    warnings: list[str] = field(default_factory=list)


def admit(store: Store, obj: dict, *, operation: str = "CREATE", old: dict | None = None,
          config: dict | None = None) -> Admitted:
    """Run the API server's and KubeVirt's admission on `obj` (not mutated); raise `Refused`."""
    warnings: list[str] = []
    if needs_upgrade(obj):
        obj, w = upgrade(obj)
        warnings.extend(w)
    kind = obj.get("kind")
    group = kinds.group_of(obj.get("apiVersion", ""))
    if kind in kinds.ALL_TYPE_KINDS and group == kinds.GROUP:
        return _admit_type(obj, operation, old, warnings)
    if kind == "VirtualMachine" and group == "kubevirt.io":
        return _admit_vm(StoreObjects(store), obj, operation, old, config, warnings)
    if kind == "KubeVirt" and group == "kubevirt.io":
        _check_kubevirt_schema(obj)
    return Admitted(clone(obj), warnings)


# The parts of a KubeVirt object the controller reads: the CRD's schema types them as objects
# (deploy/crds.py installs the same schema on a cluster).
KUBEVIRT_OBJECT_PATHS = (("spec",), ("spec", "configuration"), ("spec", "configuration", "instancetype"),
                          ("spec", "configuration", "commonInstancetypesDeployment"))


def _check_kubevirt_schema(obj: dict) -> None:
    """The API server's structural-schema check of a KubeVirt object, for the fields read here."""
    for path in KUBEVIRT_OBJECT_PATHS:     # parents first: dig stops at a parent already checked
        value = dig(obj, *path)
        if value is None or isinstance(value, dict):
            continue
        field_path = ".".join(path)
        got = _json_type(value)
        cause = Cause("FieldValueTypeInvalid",
                      f'Invalid value: "{got}": {field_path} in body must be of type object: "{got}"', field_path)
        raise Refused(_invalid_message(obj, [cause]), result=AdmissionResult.refused([cause]), webhook="")


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "integer" if isinstance(v, int) or v.is_integer() else "number"
    return "string" if isinstance(v, str) else "array" if isinstance(v, list) else "object"


def admit_type(obj: dict, *, operation: str = "CREATE", old: dict | None = None) -> Admitted:
    """The validating webhook of the four instancetype kinds (after the CRD schema check): the
    object as stored (pruned) and the warnings, or `Refused`."""
    return _admit_type(obj, operation, old, [])


def admit_vm_object(objects: Any, vm: dict, *, operation: str = "CREATE", old: dict | None = None,
                    config: dict | None = None, mutate_only: bool = False) -> Admitted:
    """KubeVirt's VM mutating then validating webhook, looking objects up in `objects` (an
    `ObjectSource`): the VM as stored and the warnings, or `Refused` (`.result.stage` says
    which webhook refused). `mutate_only`: the mutating webhook alone (a cluster's, whose
    validating webhook is called after it)."""
    return _admit_vm(objects, vm, operation, old, config, [], mutate_only=mutate_only)


def _admit_type(obj: dict, operation: str, old: dict | None, warnings: list[str]) -> Admitted:
    from instancetype.engine.validation import review

    result, pruned = review(obj, operation=operation, old=old)
    if result.stage == "schema":  # the API server itself refused it, before any webhook
        raise Refused(_invalid_message(obj, result.causes), result=result, webhook="")
    if not result.allowed:
        raise Refused(result.message, result=result, webhook=type_validator(obj["kind"]))
    return Admitted(pruned, warnings + list(result.warnings))


def _admit_vm(objects: Any, vm: dict, operation: str, old: dict | None, config: dict | None,
              warnings: list[str], *, mutate_only: bool = False) -> Admitted:
    import instancetype

    result = instancetype.admit_vm(vm, operation=operation, old=old, objects=objects, config=config,
                                   mutate_only=mutate_only)
    if not result.allowed:
        webhook = VM_MUTATOR if result.stage == "mutate" else VM_VALIDATOR
        raise Refused(result.message, result=result, webhook=webhook)
    return Admitted(stored_vm(vm, result.vm), warnings + list(result.warnings))


def stored_vm(submitted: dict, mutated: dict | None) -> dict:
    """The VM the mutating webhook leaves (`mutated`: admit_vm's `.vm`), as this system stores it."""
    stored = mutated if mutated is not None else clone(submitted)
    _kind_inferred_matchers(submitted, stored)
    return stored


def _kind_inferred_matchers(submitted: dict, stored: dict) -> None:
    """Seed 000: an inferred matcher without a kind is stored with the lowercase cluster
    resource name (KubeVirt < v1.7 wrote it; v1.9 leaves the kind empty)."""
    spec = stored.get("spec") or {}
    for side, default in (("instancetype", kinds.BY_KIND[kinds.CLUSTER_INSTANCETYPE].singular),
                          ("preference", kinds.BY_KIND[kinds.CLUSTER_PREFERENCE].singular)):
        before = (submitted.get("spec") or {}).get(side)
        after = spec.get(side)
        if (isinstance(before, dict) and before.get("inferFromVolume") and isinstance(after, dict)
                and after.get("name") and not after.get("kind")):
            after["kind"] = default


def _invalid_message(obj: dict, causes: Any) -> str:
    name = (obj.get("metadata") or {}).get("name", "")
    res = kinds.BY_KIND.get(obj.get("kind", ""))
    what = f'{res.kind} "{name}"' if res else name
    details = ", ".join(f"{c.field}: {c.message}" for c in causes)
    return f"{what} is invalid: {details}"
