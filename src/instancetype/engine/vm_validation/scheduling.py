"""Affinity and topology spread constraints of a VMI spec (KubeVirt vmi-create-admitter.go
validateSpecAffinity and validateSpecTopologySpreadConstraints, with the Kubernetes rules
KubeVirt copies in validate-k8s-utils.go: validateAffinity, ValidateNodeSelector,
ValidateNodeSelectorRequirement, validatePodAffinityTerm, validateTopologySpreadConstraints).

Each Kubernetes field error becomes one FieldValueInvalid cause whose message is the error's
text (`<path>: Invalid value: "x": <detail>`, `<path>: Required value: <detail>`, ...).
"""
from __future__ import annotations

import json
import re
from typing import Any

from instancetype.engine.results import Cause
from instancetype.engine.vm_validation._common import (
    _E,
    INVALID,
    cause,
    dns1123_label_errors,
    dns1123_subdomain_errors,
)

_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_NAME_FMT = "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'"
_QUALIFIED_ERROR = ("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                    f"validation is {_NAME_FMT}) with an optional DNS subdomain prefix and '/' (e.g. "
                    "'example.com/MyName')")
_NAME_PART_ERROR = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
                    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                    f"validation is {_NAME_FMT})")


def _value(v: object) -> str:
    """How field.Invalid prints a value: strings quoted, numbers bare."""
    return json.dumps(v) if isinstance(v, str) else str(v)


def _invalid(path: str, value: object, detail: str) -> Cause:
    return cause(INVALID, f"{path}: Invalid value: {_value(value)}: {detail}", path)


def _required(path: str, detail: str) -> Cause:
    return cause(INVALID, f"{path}: Required value: {detail}", path)


def _forbidden(path: str, detail: str) -> Cause:
    return cause(INVALID, f"{path}: Forbidden: {detail}", path)


def qualified_name_errors(value: str) -> list[str]:
    """IsQualifiedName."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
        errs = []
    elif len(parts) == 2:
        prefix, name = parts
        errs = ["prefix part must be non-empty"] if not prefix else \
            [f"prefix part {e}" for e in dns1123_subdomain_errors(prefix)]
    else:
        return [_QUALIFIED_ERROR]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _NAME_RE.match(name):
        errs.append(_NAME_PART_ERROR)
    return errs


def _label_name(key: str, path: str) -> list[Any]:
    return [_invalid(path, key, e) for e in qualified_name_errors(key)]


def _node_selector_requirement(rq: dict[str, Any], path: str) -> list[Any]:
    causes = []
    op, values = rq.get("operator") or "", rq.get("values") or ()
    if op in ("In", "NotIn"):
        if not values:
            causes.append(_required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            causes.append(_forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or "
                                     "'DoesNotExist'"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            causes.append(_required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or "
                                    "'Gt'"))
    else:
        causes.append(_invalid(f"{path}.operator", op, "not a valid selector operator"))
    causes.extend(_label_name(rq.get("key") or "", f"{path}.key"))
    return causes


def _node_field_requirement(rq: dict[str, Any], path: str) -> list[Any]:
    causes = []
    if (rq.get("operator") or "") in ("In", "NotIn"):
        if len(rq.get("values") or ()) != 1:
            causes.append(_required(f"{path}.values", "must be only one value when `operator` is 'In' or 'NotIn' for "
                                    "node field selector"))
    else:
        causes.append(_invalid(f"{path}.operator", rq.get("operator") or "", "not a valid selector operator"))
    key = rq.get("key") or ""
    if key != "metadata.name":
        causes.append(_invalid(f"{path}.key", key, "not a valid field selector key"))
    else:
        for i, v in enumerate(rq.get("values") or ()):
            for e in dns1123_subdomain_errors(v):
                causes.append(_invalid(f"{path}.values[{i}]", v, e))
    return causes


def _node_selector_term(term: dict[str, Any], path: str) -> list[Any]:
    causes = []
    for j, rq in enumerate(term.get("matchExpressions") or ()):
        causes.extend(_node_selector_requirement(rq, f"{path}.matchExpressions[{j}]"))
    for j, rq in enumerate(term.get("matchFields") or ()):
        causes.extend(_node_field_requirement(rq, f"{path}.matchFields[{j}]"))
    return causes


def _label_selector(sel: Any, path: str) -> list[Any]:
    """ValidateLabelSelector: expressions' operators and values, keys and label values."""
    if sel is None:
        return []
    causes = []
    for j, rq in enumerate(sel.get("matchExpressions") or ()):
        at = f"{path}.matchExpressions[{j}]"
        op, values = rq.get("operator") or "", rq.get("values") or ()
        if op in ("In", "NotIn"):
            if not values:
                causes.append(_required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                causes.append(_forbidden(f"{at}.values", "may not be specified when `operator` is 'Exists' or "
                                         "'DoesNotExist'"))
        else:
            causes.append(_invalid(f"{at}.operator", op, "not a valid selector operator"))
        causes.extend(_label_name(rq.get("key") or "", f"{at}.key"))
    for key in (sel.get("matchLabels") or _E):
        causes.extend(_label_name(key, f"{path}.matchLabels"))
    return causes


def _pod_affinity_term(term: dict[str, Any], path: str) -> list[Any]:
    causes = _label_selector(term.get("labelSelector"), f"{path}.labelSelector")
    causes += _label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for name in term.get("namespaces") or ():
        for e in dns1123_label_errors(name):
            causes.append(_invalid(f"{path}.namespace", name, e))
    key = term.get("topologyKey") or ""
    if not key:
        causes.append(_required(f"{path}.topologyKey", "can not be empty"))
    causes.extend(_label_name(key, f"{path}.topologyKey"))
    return causes


def _pod_affinity(pa: dict[str, Any], path: str) -> list[Any]:
    causes = []
    for i, term in enumerate(pa.get("requiredDuringSchedulingIgnoredDuringExecution") or ()):
        causes.extend(_pod_affinity_term(term, f"{path}.requiredDuringSchedulingIgnoredDuringExecution[{i}]"))
    for i, wt in enumerate(pa.get("preferredDuringSchedulingIgnoredDuringExecution") or ()):
        at = f"{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        weight = wt.get("weight") or 0
        if weight <= 0 or weight > 100:
            causes.append(_invalid(f"{at}.weight", weight, "must be in the range 1-100"))
        causes.extend(_pod_affinity_term(wt.get("podAffinityTerm") or _E, f"{at}.podAffinityTerm"))
    return causes


def validate_affinity(field: str, spec: dict[str, Any]) -> list[Any]:
    """validateSpecAffinity (paths from the spec: KubeVirt passes the spec's path)."""
    affinity = spec.get("affinity")
    if affinity is None:
        return []
    causes = []
    na = affinity.get("nodeAffinity")
    if na is not None:
        at = f"{field}.nodeAffinity"
        required = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        if required is not None:
            terms_at = f"{at}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
            terms = required.get("nodeSelectorTerms") or ()
            if not terms:
                causes.append(_required(terms_at, "must have at least one node selector term"))
            for i, term in enumerate(terms):
                causes.extend(_node_selector_term(term, f"{terms_at}[{i}]"))
        for i, pt in enumerate(na.get("preferredDuringSchedulingIgnoredDuringExecution") or ()):
            pat = f"{at}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            weight = pt.get("weight") or 0
            if weight <= 0 or weight > 100:
                causes.append(_invalid(f"{pat}.weight", weight, "must be in the range 1-100"))
            causes.extend(_node_selector_term(pt.get("preference") or _E, f"{pat}.preference"))
    for key in ("podAffinity", "podAntiAffinity"):
        if affinity.get(key) is not None:
            causes.extend(_pod_affinity(affinity[key], f"{field}.{key}"))
    return causes


def validate_topology_spread_constraints(field: str, spec: dict[str, Any]) -> list[Any]:
    """validateSpecTopologySpreadConstraints: a positive maxSkew, a topology key, a known
    whenUnsatisfiable, each {topologyKey, whenUnsatisfiable} pair once."""
    constraints = spec.get("topologySpreadConstraints")
    if constraints is None:
        return []
    at = f"{field}.topologySpreadConstraints"
    causes = []
    seen: set[Any] = set()
    for i, c in enumerate(constraints):
        sub = f"{at}[{i}]"
        skew = c.get("maxSkew") or 0
        if skew <= 0:
            causes.append(_invalid(f"{sub}.maxSkew", skew, "must be greater than zero"))
        key = c.get("topologyKey") or ""
        if not key:
            causes.append(_required(f"{sub}.topologyKey", "can not be empty"))
        action = c.get("whenUnsatisfiable") or ""
        if action not in ("DoNotSchedule", "ScheduleAnyway"):
            causes.append(cause(INVALID, f'{sub}.whenUnsatisfiable: Unsupported value: {_value(action)}: supported '
                                'values: "DoNotSchedule", "ScheduleAnyway"', f"{sub}.whenUnsatisfiable"))
        pair = (key, action)
        if pair in seen:
            causes.append(cause(INVALID, f'{sub}: Duplicate value: "{{{key}, {action}}}"', f"{sub}"))
        seen.add(pair)
        min_domains = c.get("minDomains")
        if min_domains is not None and min_domains <= 0:
            causes.append(_invalid(f"{sub}.minDomains", min_domains, "must be greater than zero"))
        causes.extend(_label_selector(c.get("labelSelector"), f"{sub}.labelSelector"))
    return causes
