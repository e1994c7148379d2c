"""Admission of a VirtualMachine: KubeVirt v1.9's VM mutating webhook, then its validating one.

    admit_vm(vm, *, operation="CREATE", old=None, instancetype=None, preference=None,
             objects=(), config=None, whole=True) -> AdmissionResult
    validate_template(template, instancetype, preference, config=None) -> Rejection | None

`objects` are the Kubernetes objects that exist; `instancetype` / `preference`, when
given, exist too: a bare spec under the name and kind the VM's matcher names, a whole
object under its own name and kind (namespaced kinds in the VM's namespace). The
lookups then follow KubeVirt's rules (engine/find.py). `config` is the KubeVirt CR's
`spec.configuration`. Nothing given is mutated.

The answer's `.stage` says which webhook decided (`mutate` or `validate`); `.vm` is the VM
as it would be stored, after the mutating step (engine/vm_mutate.py). A VM being deleted
(`metadata.deletionTimestamp` set) is allowed untouched, as both VM webhooks do. A VM that
cannot be decoded (a wrong shape, a bad quantity) is a 400 answer naming the field; `objects`
that cannot be indexed raise `LoadError`.

The whole admission (`whole=True`, what `apply`, `validate -f` and the webhook run):
0. the schema check of the raw object (engine/vm_validation/schema.py), refused by the
   mutating webhook with message-only causes;
1. the mutating webhook's instancetype part and VM defaults (engine/vm_mutate.py), on CREATE
   its PCI topology annotation (`set_create_defaults`);
2. the validating webhook on a copy of the template (KubeVirt: vms-admitter.go with
   pkg/instancetype/webhooks/vm admitter.go), nothing of which is stored:
   1. find the instancetype and the preference; a lookup that fails is only logged by
      KubeVirt, so that spec counts as absent;
   2. when one was found: the spread divisibility check, then apply both
      (root `spec.template.spec`); each conflict is a `FieldValueInvalid` cause;
   3. the VMI spec defaults (a failure, e.g. the pod network configuration, is a 400);
   4. the preference requirements: one `FieldValueNotFound` cause
      `failure checking preference requirements: <message>`, field = the paths joined by ", ";
   5. everything else the validating webhook checks (engine/vm_validation: the network
      creation rules, ValidateVirtualMachineSpec, the storage admitter, the status volume
      requests) and its warnings (`spec.running`).
`whole=False` is the instancetype part alone (steps 1 and 2.1-2.4: the `admit-vm` contract).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from instancetype.api import kinds as K
from instancetype.engine import object_input, vm_decode, vm_fields
from instancetype.engine.apply import apply_to_spec, conflict_message
from instancetype.engine.cache import ContentCache, content_key
from instancetype.engine.find import find_instancetype_or_none
from instancetype.engine.guard import public
from instancetype.engine.jsondata import copy_json
from instancetype.engine.requirements import check as check_requirements
from instancetype.engine.results import AdmissionResult, Cause
from instancetype.engine.spec import DecodedSpec, guest_format, is_whole_object
from instancetype.engine.spread import check_spread
from instancetype.engine.virt_config import cluster_config
from instancetype.engine.vm_mutate import mutate_vm, set_create_defaults
from instancetype.engine.vm_validation import validate_vm_after_apply
from instancetype.engine.vm_validation.schema import check_vm_schema_shaped, zero_null_items
from instancetype.engine.vmi_defaults import set_vmi_spec_defaults
from instancetype.errors import DecodeError, DefaultsError, InferError, QuantityError, SpreadError

REQUIREMENTS_PREFIX = "failure checking preference requirements: "
TEMPLATE_ROOT = "spec.template.spec"


class Rejection:
    """Why the validating step refused: `kind` is "apply" (spread or conflicts, with causes),
    "defaults" (the VMI spec defaults failed: a 400 with `message`) or "requirements"
    (one cause; `requirements_error` is the checker's own message)."""

    __slots__ = ("kind", "causes", "message", "requirements_error")

    def __init__(self, kind: str, causes: list[Cause], message: str, requirements_error: str | None = None):
        self.kind = kind
        self.causes = causes
        self.message = message
        self.requirements_error = requirements_error


def conflict_cause(path: str) -> Cause:
    return Cause("FieldValueInvalid", conflict_message((path,)), path)


# Templates known to pass steps 2-4, by the content of everything the answer depends on: the
# template, both specs (with the instancetype's guest format, which its content cannot show) and
# the configuration. A VM's admission checks its template, and its start checks the same
# template again with the same specs (build_vmi, as KubeVirt's controller runs the VM admitter
# before it creates the VMI); the second check is then a lookup. Only acceptances are kept: a
# refusal is built again (its causes are the caller's to keep).
_ACCEPTED: ContentCache[bool] = ContentCache(1024)


def _accepted_key(template: Any, instancetype: dict[str, Any] | None, preference: dict[str, Any] | None,
                  config: Any) -> bytes | None:
    return content_key((template, instancetype, guest_format(instancetype) if instancetype is not None else None,
                        preference, cluster_config(config).raw))


def validate_template(template: Any, instancetype: dict[str, Any] | None, preference: dict[str, Any] | None,
                      config: Any = None) -> Rejection | None:
    """Steps 2-4 of the validating webhook on a copy of `template` (`spec.template`).

    `instancetype` / `preference` are the normalised specs found (or None).
    """
    key = _accepted_key(template, instancetype, preference, config)
    if key is not None and _ACCEPTED.hit(key):
        return None
    rejection = apply_to_template_copy(template, instancetype, preference, config)[0]
    if rejection is None and key is not None:
        _ACCEPTED.put(key, True)
    return rejection


def apply_to_template_copy(template: Any, instancetype: dict[str, Any] | None, preference: dict[str, Any] | None,
                           config: Any = None) -> tuple[Rejection | None, dict[str, Any], dict[str, Any]]:
    """validate_template, also returning the copy's spec and metadata (what KubeVirt's VM
    validating webhook goes on to validate)."""
    template = template if isinstance(template, dict) else {}
    spec = template.get("spec")
    spec = copy_json(spec) if isinstance(spec, dict) else {}
    meta = template.get("metadata")
    meta = dict(meta) if isinstance(meta, dict) else {}
    if instancetype is not None or preference is not None:
        try:
            check_spread(instancetype, preference)
        except SpreadError as e:
            causes = [Cause("FieldValueInvalid", str(e), f) for f in e.fields]
            return Rejection("apply", causes, AdmissionResult.refused(causes).message), spec, meta
        # Only the annotations of the metadata are touched by apply.
        annotations = meta.get("annotations")
        apply_meta = {"annotations": dict(annotations)} if isinstance(annotations, dict) else {}
        conflicts = apply_to_spec(spec, apply_meta, instancetype, preference, root=TEMPLATE_ROOT)
        if conflicts:
            causes = [conflict_cause(p) for p in conflicts]
            return Rejection("apply", causes, AdmissionResult.refused(causes).message), spec, meta
        if "annotations" in apply_meta:
            meta["annotations"] = apply_meta["annotations"]
    try:
        set_vmi_spec_defaults(spec, config)
    except DefaultsError as e:
        return Rejection("defaults", [], str(e)), spec, meta
    err = check_requirements(preference, instancetype, spec)
    if err is not None:
        cause = Cause("FieldValueNotFound", REQUIREMENTS_PREFIX + str(err), ", ".join(err.fields))
        return Rejection("requirements", [cause], cause.message, str(err)), spec, meta
    return None, spec, meta


_SIDES = (("instancetype", K.INSTANCETYPE_MATCHER_KINDS), ("preference", K.PREFERENCE_MATCHER_KINDS))


def _stored(vm: dict[str, Any], instancetype: Any, preference: Any) -> list[dict[str, Any]]:
    """The given specs as stored objects (see the module docstring).

    A bare spec is stored under the kind and name its matcher names (nothing for a matcher
    whose kind is unknown, so the lookup fails as KubeVirt's would); a whole object under its
    own kind and name, the matcher's filling what it lacks.
    """
    out = []
    ns = vm_fields.namespace(vm)
    for (key, kinds), given in zip(_SIDES, (instancetype, preference)):
        matcher = vm["spec"].get(key)
        if given is None or not isinstance(matcher, dict):
            continue
        if type(given) is DecodedSpec:
            given = given.spec      # (decoded once: stored as the spec it holds, never changed)
        kind = kinds.get(str(matcher.get("kind") or "").lower())
        name = got if isinstance(got := matcher.get("name"), str) else ""
        if not is_whole_object(given):
            if kind is not None:
                meta = {"name": name, "namespace": ns} if K.BY_KIND[kind].namespaced else {"name": name}
                out.append({"apiVersion": K.API_VERSION, "kind": kind, "metadata": meta, "spec": given})
            continue
        _check_object_names(given, key)
        obj = dict(given)
        if not isinstance(obj.get("kind"), str) or not obj["kind"]:
            obj["kind"] = kind or kinds[""]
        given_meta = obj.get("metadata")
        if not isinstance(given_meta, dict) or not given_meta.get("name"):
            obj["metadata"] = {**(given_meta if isinstance(given_meta, dict) else {}), "name": name}
        out.append(obj)
    return out


def _check_object_names(obj: dict[str, Any], key: str) -> None:
    """A whole object's name and namespace must be strings (they key the lookups)."""
    from instancetype.errors import LoadError

    meta = obj.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise LoadError(f"{key}.metadata: must be an object")
    for field in ("name", "namespace"):
        v = (meta or {}).get(field)
        if v is not None and not isinstance(v, str):
            raise LoadError(f"{key}.metadata.{field}: must be a string")


@public("admit VirtualMachine")
def admit_vm(vm: Mapping[str, Any], *, operation: str = "CREATE", old: Mapping[str, Any] | None = None, instancetype: Any = None,
             preference: Any = None, objects: Iterable[Mapping[str, Any]] = (), config: Any = None,
             whole: bool = True, mutate_only: bool = False) -> AdmissionResult:
    """Admit `vm` as KubeVirt's VM mutating and validating webhooks do.

    `whole=False` runs only their instancetype part (the `admit-vm` contract): no schema
    check, none of the VM and VMI spec rules, no warnings. `mutate_only=True` stops after the
    mutating webhook (steps 0 and 1): its answer (`stage` "mutate", `.vm` the mutated VM) is
    what the whole admission's `.vm` would be, since nothing the validating step finds changes
    the VM; a cluster's mutating webhook answers with it, and the validating one runs after.
    """
    go_shaped = False
    if whole and (type(vm) is dict or isinstance(vm, Mapping)):
        # Both VM webhooks check the raw object against the VirtualMachine schema first.
        schema_causes, go_shaped = check_vm_schema_shaped(vm)
        if schema_causes:
            return AdmissionResult.refused(schema_causes, stage="mutate")
    try:
        if go_shaped and type(vm) is dict:
            work = vm_decode.load_schema_checked_vm(vm)
        else:
            work = vm_decode.load_vm(vm)
            if whole:
                zero_null_items(work)
        vm_fields.normalize_vm(work)
    except (DecodeError, QuantityError) as e:
        return AdmissionResult.bad_request(str(e), stage="mutate")
    if (work.get("metadata") or {}).get("deletionTimestamp"):
        # Both VM webhooks let an object that is being deleted through untouched.
        return AdmissionResult(allowed=True, stage="validate", vm=work)
    old_work = None
    if operation == "UPDATE" and old is not None:
        try:
            # GetVMFromAdmissionReview decodes the old VM too (a failure is a 400).
            old_work = vm_fields.normalize_vm(vm_decode.load_vm(old))
        except (DecodeError, QuantityError) as e:
            return AdmissionResult.bad_request(str(e), stage="mutate")
    ns = vm_fields.namespace(work)
    given = _stored(work, instancetype, preference)
    index = object_input.object_index(objects, ns, given)

    # The configuration read once (every step below reads it; a dict would be keyed by its
    # content at each read).
    config = cluster_config(config)
    try:
        causes, pref = mutate_vm(work, index, operation=operation, old=old, config=config)
    except InferError as e:
        return AdmissionResult.bad_request(str(e), stage="mutate")
    if causes:
        return AdmissionResult.refused(causes, stage="mutate")
    if whole and operation == "CREATE":
        set_create_defaults(work)
    if mutate_only:
        return AdmissionResult(allowed=True, stage="mutate", vm=work)

    # The validating webhook checks the schema again: the mutating step only writes fields of
    # the schema's types (matchers, architecture, machine type, storage class), so it passes.
    # It finds the preference the mutating step found (the matcher has not changed since).
    it = find_instancetype_or_none(work, index)
    template = work["spec"].get("template")
    key = _accepted_key(template, it, pref, config)     # before the copy's steps: they do not touch it
    rejection, tspec, tmeta = apply_to_template_copy(template, it, pref, config)
    if rejection is not None:
        if rejection.kind == "defaults":
            return AdmissionResult.bad_request(rejection.message, stage="validate", vm=work)
        return AdmissionResult.refused(rejection.causes, stage="validate", vm=work)
    if key is not None:
        _ACCEPTED.put(key, True)
    warnings: list[Any] = []
    if whole:
        causes, warnings = validate_vm_after_apply(work, tspec, tmeta, operation=operation,
                                                   old=old_work if old_work is not None else work, config=config)
        if causes:
            return AdmissionResult.refused(causes, stage="validate", vm=work)
    return AdmissionResult(allowed=True, stage="validate", vm=work, warnings=warnings)
