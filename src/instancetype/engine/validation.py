"""Admission of the four instancetype.kubevirt.io kinds, as KubeVirt's validating webhooks judge it.

pkg/instancetype/webhooks/admitter.go (instancetypes) and
pkg/instancetype/preference/webhooks/admitter.go (preferences), in their order:

1. only CREATE and UPDATE are judged; anything else (DELETE) is allowed;
2. "schema" step (webhookutils.ValidateSchema): top-level keys other than apiVersion, kind,
   metadata, spec, status are forbidden and a missing `spec` is required; these causes have
   no type and no field. (KubeVirt's lookup of the spec sub-schema finds nothing, so no
   field below the top level is checked here.)
3. the object, and on UPDATE the old object, is decoded as the v1beta1 Go type whatever its
   apiVersion: a decode failure is a 400 with Go's text (`api.godecode`); cluster kinds
   decode into the namespaced Go types, so their texts name `VirtualMachineInstancetype` /
   `VirtualMachinePreference`;
4. the spec rules (causes, 422), else allowed with warnings.

Public: `validate(obj, *, operation="CREATE", old=None) -> AdmissionResult`,
`instancetype_causes(spec) -> list[Cause]`, `preference_causes(spec) -> list[Cause]`,
`instancetype_warnings(spec)`, `preference_warnings(spec)` (specs as normalized dicts).
"""
from __future__ import annotations

from typing import Any

from instancetype.api import kinds
from instancetype.api.godecode import decode_object
from instancetype.api.v1beta1 import (
    DEPRECATED_TOPOLOGIES,
    SPREAD_ACROSS,
    TOPOLOGIES,
    VirtualMachineInstancetype,
    VirtualMachinePreference,
)
from instancetype.engine.guard import public
from instancetype.engine.preference.cpu import spread_options
from instancetype.engine.results import AdmissionResult, Cause
from instancetype.errors import DecodeError, QuantityError, UnexpectedKindError

INVALID = "FieldValueInvalid"
TOP_LEVEL_KEYS = frozenset(("apiVersion", "kind", "metadata", "spec", "status"))

LAUNCH_SECURITY_WARNING = ("launchSecurity is deprecated and will be removed in a future release. "
                           "Use preference instead.")
CORES_THREADS_RATIO_MSG = ("only a ratio of 2 (1 core 2 threads) is allowed when spreading vCPUs "
                           "over cores and threads")

_GO_TYPE = {
    kinds.INSTANCETYPE: VirtualMachineInstancetype,
    kinds.CLUSTER_INSTANCETYPE: VirtualMachineInstancetype,
    kinds.PREFERENCE: VirtualMachinePreference,
    kinds.CLUSTER_PREFERENCE: VirtualMachinePreference,
}


# --- step 2: top-level schema ------------------------------------------------------------------
def schema_causes(obj: dict[str, Any]) -> list[Cause]:
    """webhookutils.ValidateSchema: forbidden top-level keys, then the required `spec`."""
    causes = [Cause("", f".{k} in body is a forbidden property", "") for k in obj if k not in TOP_LEVEL_KEYS]
    if "spec" not in obj:
        causes.append(Cause("", "spec in body is required", ""))
    return causes


# --- step 4: instancetype rules ----------------------------------------------------------------
def instancetype_causes(spec: dict[str, Any]) -> list[Cause]:
    """ValidateInstanceTypeSpec: overcommitPercent range, then overcommit with hugepages."""
    memory = spec.get("memory") or {}
    percent = memory.get("overcommitPercent", 0)
    causes = []
    field = "spec.memory.overcommitPercent"
    if percent < 0 or percent > 100:
        causes.append(Cause(INVALID, f"{field} '{percent}': must be in range between 0 and 100.", field))
    if percent != 0 and "hugepages" in memory:
        causes.append(Cause(INVALID, f"{field} and spec.memory.hugepages should not be requested together.",
                            field))
    return causes


def instancetype_warnings(spec: dict[str, Any]) -> list[str]:
    return [LAUNCH_SECURITY_WARNING] if "launchSecurity" in spec else []


# --- step 4: preference rules ------------------------------------------------------------------
def preference_causes(spec: dict[str, Any]) -> list[Cause]:
    """ValidatePreferenceSpec: a known topology; for spread topologies a known `across` and
    ratio 2 with CoresThreads. At most one cause (the spread rule needs a known topology)."""
    topology = (spec.get("cpu") or {}).get("preferredCPUTopology")
    if topology is None:
        return []
    if topology not in TOPOLOGIES and topology not in DEPRECATED_TOPOLOGIES:
        return [Cause(INVALID, f"unknown preferredCPUTopology {topology}", "spec.cpu.preferredCPUTopology")]
    if topology not in ("spread", "preferSpread"):
        return []
    ratio, across = spread_options(spec)   # the decoded spec has no nulls: Go's own reading
    if across not in SPREAD_ACROSS:
        return [Cause(INVALID, f"across {across} is not supported", "spec.cpu.spreadOptions.across")]
    if across == "CoresThreads" and ratio != 2:
        return [Cause(INVALID, CORES_THREADS_RATIO_MSG, "spec.cpu.spreadOptions.ratio")]
    return []


def preference_warnings(spec: dict[str, Any]) -> list[str]:
    topology = (spec.get("cpu") or {}).get("preferredCPUTopology")
    new = DEPRECATED_TOPOLOGIES.get(topology) if isinstance(topology, str) else None
    if new is None:
        return []
    return [f"PreferredCPUTopology {topology} is deprecated for removal in a future release, "
            f"please use {new} instead"]


# --- the webhook -------------------------------------------------------------------------------
def _go_map_error(obj: Any) -> str:
    kind = {bool: "bool", str: "string", list: "array", int: "number", float: "number"}.get(type(obj), "null")
    return f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"


@public("validate", decode_first=None)
def validate(obj: Any, *, operation: str = "CREATE", old: Any = None) -> AdmissionResult:
    """The validating webhook's answer for an instancetype or preference of any of the four kinds.

    An UPDATE without `old` is judged with the object itself as the old object.
    Raises UnexpectedKindError when `obj.kind` is none of the four kinds.
    """
    if operation not in ("CREATE", "UPDATE"):
        return AdmissionResult()
    if obj is None:
        # ValidateSchema: `null` decodes into an empty map, which lacks the required spec.
        return AdmissionResult.refused(schema_causes({}))
    if not isinstance(obj, dict):
        return AdmissionResult.bad_request(_go_map_error(obj))
    kind = obj.get("kind")
    go_type = _GO_TYPE.get(kind) if isinstance(kind, str) else None
    if go_type is None:
        raise UnexpectedKindError(f"no admission webhook for kind {kind!r}: expected one of "
                                  + ", ".join(kinds.ALL_TYPE_KINDS))
    causes = schema_causes(obj)
    if causes:
        return AdmissionResult.refused(causes)
    try:
        decoded = decode_object(obj, go_type)
        if operation == "UPDATE":
            # The old object is decoded (and may fail) but never compared.
            decode_object(obj if old is None else old, go_type)
    except (DecodeError, QuantityError) as e:
        return AdmissionResult.bad_request(str(e))
    spec = decoded.get("spec") or {}
    if go_type is VirtualMachineInstancetype:
        causes, warnings = instancetype_causes(spec), instancetype_warnings(spec)
    else:
        causes, warnings = preference_causes(spec), preference_warnings(spec)
    if causes:
        return AdmissionResult.refused(causes)
    return AdmissionResult(warnings=warnings)


def review(obj: Any, *, operation: str = "CREATE", old: Any = None) -> tuple[AdmissionResult, Any]:
    """The API server's order for the four kinds: the CRD's structural schema checks (which also
    prune unknown fields), then the validating webhook. Returns the result and the object as it
    would be stored; a refusal by the schema has `stage="schema"`. The store's admission and the
    offline `validate` command both use it."""
    from instancetype.engine.schema import check_schema

    pruned, causes = check_schema(obj)
    if causes:
        return AdmissionResult.refused(list(causes), stage="schema"), pruned
    return validate(pruned, operation=operation, old=old), pruned
