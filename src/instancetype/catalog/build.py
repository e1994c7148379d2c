"""Generate the catalogue objects from the series and preference tables.

Objects come out as kustomize + the release script write them: keys sorted alphabetically at
every level, then the `common-instancetypes-version` label appended last to the label map.
Labels that mirror the spec are derived from it here (never written by hand in the tables):
- instancetypes: cpu, memory, size, hugepages (the page size), and "true" for
  dedicatedCPUPlacement / isolateEmulatorThread / numa / realtime / gpus exactly when the spec
  field is set (the rule of common-instancetypes' tests/unittests/instancetype_test.go);
- preferences: required-cpu, required-memory, preferred-architecture, required-architecture
  and arch, from the merged spec.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from instancetype.api.kinds import API_VERSION, CLUSTER_INSTANCETYPE, CLUSTER_PREFERENCE, INSTANCETYPE, PREFERENCE
from instancetype.catalog.labels import LABEL_CLASS, LABEL_DEPRECATED, LABEL_VERSION, VENDOR, VERSION, P  # noqa: F401
from instancetype.catalog.preference_table import PREFERENCES, Pref
from instancetype.catalog.series import SERIES, Series, Size
from instancetype.jsonutil import sorted_keys

# spec path -> the boolean feature label present (as "true") exactly when that path is set
BOOL_FEATURE_LABELS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("cpu", "dedicatedCPUPlacement"), P + "dedicatedCPUPlacement"),
    (("cpu", "isolateEmulatorThread"), P + "isolateEmulatorThread"),
    (("cpu", "numa"), P + "numa"),
    (("cpu", "realtime"), P + "realtime"),
    (("gpus",), P + "gpus"),
)

_DOC_URL = '"https://github.com/kubevirt/common-instancetypes"\n'
_SUPPORT_URL = '"https://github.com/kubevirt/common-instancetypes/issues"\n'


def merge(base: dict, patch: dict) -> dict:
    """Strategic-merge of plain maps as kustomize applies these patches: maps merge, the rest replaces."""
    out = dict(base)
    for k, v in patch.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        elif isinstance(v, dict):
            out[k] = merge({}, v)
        elif isinstance(v, list):
            out[k] = [merge({}, x) if isinstance(x, dict) else x for x in v]
        else:
            out[k] = v
    return out


def _get(spec: dict, path: tuple[str, ...]) -> Any:
    for p in path:
        if not isinstance(spec, dict) or p not in spec:
            return None
        spec = spec[p]
    return spec


def _labels(derived: dict[str, str], deprecated: bool) -> dict[str, str]:
    labels = dict(derived)
    if deprecated:
        labels[LABEL_DEPRECATED] = "true"
    labels = {k: labels[k] for k in sorted(labels)}
    labels[LABEL_VERSION] = VERSION        # appended last by the release script (yq)
    return labels


# --- instancetypes -----------------------------------------------------------------------------
def instancetype_spec(series: Series, size: Size) -> dict:
    spec = merge({"cpu": {"guest": size.cpu}, "memory": {"guest": size.memory}}, series.spec)
    if series.max_sockets:
        spec["cpu"]["maxSockets"] = size.cpu
    if size.hugepages:
        spec["memory"]["hugepages"] = {"pageSize": size.hugepages}
    return sorted_keys(spec)


def instancetype_labels(series: Series, size: Size, spec: dict) -> dict[str, str]:
    derived = {
        P + "class": series.class_label,
        P + "cpu": str(spec["cpu"]["guest"]),
        P + "memory": str(spec["memory"]["guest"]),
        P + "size": size.name,
        P + "icon-pf": series.icon,
        P + "vendor": VENDOR,
    }
    if series.version:
        derived[P + "version"] = series.version
    for path, key in BOOL_FEATURE_LABELS:
        if _get(spec, path) is not None:
            derived[key] = "true"
    page = _get(spec, ("memory", "hugepages", "pageSize"))
    if page is not None:
        derived[P + "hugepages"] = page
    return _labels(derived, series.deprecated)


def instancetype_object(series: Series, size: Size, kind: str = CLUSTER_INSTANCETYPE) -> dict:
    spec = instancetype_spec(series, size)
    return {
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": {
            "annotations": {P + "description": series.description, P + "displayName": series.display_name},
            "labels": instancetype_labels(series, size, spec),
            "name": f"{series.series}.{size.name}",
        },
        "spec": spec,
    }


def build_instancetypes(namespaced: bool = False, series: Iterable[Series] = SERIES) -> list[dict]:
    kind = INSTANCETYPE if namespaced else CLUSTER_INSTANCETYPE
    objs = [instancetype_object(s, z, kind) for s in series for z in s.sizes]
    objs.sort(key=lambda o: o["metadata"]["name"])
    return objs


# --- preferences -------------------------------------------------------------------------------
def preference_spec(pref: Pref) -> dict:
    spec: dict = {"annotations": {"vm.kubevirt.io/os": pref.os_type}}
    for component in pref.components:
        spec = merge(spec, component)
    return sorted_keys(spec)


def preference_labels(pref: Pref, spec: dict) -> dict[str, str]:
    derived = {P + "os-type": pref.os_type, P + "vendor": VENDOR}
    cpu = _get(spec, ("requirements", "cpu", "guest"))
    if cpu is not None:
        derived[P + "required-cpu"] = str(cpu)
    memory = _get(spec, ("requirements", "memory", "guest"))
    if memory is not None:
        derived[P + "required-memory"] = str(memory)
    arch = spec.get("preferredArchitecture")
    if arch is not None:
        derived[P + "preferred-architecture"] = arch
        derived[P + "arch"] = arch
    req_arch = _get(spec, ("requirements", "architecture"))
    if req_arch is not None:
        derived[P + "required-architecture"] = req_arch
    return _labels(derived, pref.deprecated)


def preference_object(pref: Pref, kind: str = CLUSTER_PREFERENCE) -> dict:
    spec = preference_spec(pref)
    return {
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": {
            "annotations": {
                "iconClass": pref.icon,
                "openshift.io/display-name": pref.display_name,
                "openshift.io/documentation-url": _DOC_URL,
                "openshift.io/provider-display-name": "KubeVirt",
                "openshift.io/support-url": _SUPPORT_URL,
                "tags": f"hidden,kubevirt,{pref.tags}",
            },
            "labels": preference_labels(pref, spec),
            "name": pref.name,
        },
        "spec": spec,
    }


def build_preferences(namespaced: bool = False, prefs: Iterable[Pref] = PREFERENCES) -> list[dict]:
    kind = PREFERENCE if namespaced else CLUSTER_PREFERENCE
    objs = [preference_object(p, kind) for p in prefs]
    objs.sort(key=lambda o: o["metadata"]["name"])
    return objs
