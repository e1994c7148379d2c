"""The four instancetype.kubevirt.io CustomResourceDefinitions, generated from the typed specs.

pkg/virt-operator/resource/generate/components/crds.go (NewVirtualMachineInstancetypeCrd and
its three siblings) at v1.9: label `kubevirt.io: ""`, conversion strategy None, exactly one
version (v1beta1, served and storage), no subresources, no printer columns, category `all`
only on the namespaced kinds, and the structural schema of the Go types (the cluster kinds'
schemas equal their namespaced twins' except for the top-level description), every field
described in our words (`api/field_docs.py`).

Public: `generate_crds() -> list[dict]`, `crd_for(kind) -> dict`, `object_schema(kind) -> dict`.
"""
from __future__ import annotations

from functools import cache
from typing import Any

from instancetype.api import kinds
from instancetype.api.v1beta1 import VirtualMachineInstancetypeSpec, VirtualMachinePreferenceSpec, openapi_schema
from instancetype.jsonutil import clone

_DESCRIPTIONS = {
    kinds.INSTANCETYPE: ("VirtualMachineInstancetype resource contains quantitative and resource related "
                         "VirtualMachine configuration that can be used by multiple VirtualMachine resources."),
    kinds.CLUSTER_INSTANCETYPE: ("VirtualMachineClusterInstancetype is a cluster scoped version of "
                                 "VirtualMachineInstancetype resource."),
    kinds.PREFERENCE: "VirtualMachinePreference resource contains optional preferences related to the VirtualMachine.",
    kinds.CLUSTER_PREFERENCE: ("VirtualMachineClusterPreference is a cluster scoped version of the "
                               "VirtualMachinePreference resource."),
}
_SPEC_TYPES = {
    kinds.INSTANCETYPE: VirtualMachineInstancetypeSpec,
    kinds.CLUSTER_INSTANCETYPE: VirtualMachineInstancetypeSpec,
    kinds.PREFERENCE: VirtualMachinePreferenceSpec,
    kinds.CLUSTER_PREFERENCE: VirtualMachinePreferenceSpec,
}


@cache
def _object_schema(kind: str) -> dict[str, Any]:
    from instancetype.api.field_docs import INSTANCETYPE_DOCS, PREFERENCE_DOCS, describe

    schema: dict[str, Any] = {
        "description": _DESCRIPTIONS[kind],
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": openapi_schema(_SPEC_TYPES[kind]),
        },
        "required": ["spec"],
    }
    # Every spec field described (kubectl explain reads them from the CRD); apiVersion, kind and
    # metadata are described by the API server itself, as for every CRD.
    docs = INSTANCETYPE_DOCS if kind in (kinds.INSTANCETYPE, kinds.CLUSTER_INSTANCETYPE) else PREFERENCE_DOCS
    describe(schema, {k: v for k, v in docs.items() if k.startswith("spec")})
    return schema


def object_schema(kind: str) -> dict[str, Any]:
    """The openAPIV3Schema of one of the four kinds (a fresh copy)."""
    if kind not in _SPEC_TYPES:
        raise KeyError(kind)
    return clone(_object_schema(kind))


def crd_for(kind: str) -> dict[str, Any]:
    """The CustomResourceDefinition of one of the four kinds."""
    r = kinds.BY_KIND[kind]
    names = {"kind": r.kind, "listKind": f"{r.kind}List", "plural": r.plural, "singular": r.singular,
             "shortNames": list(r.short_names)}
    if r.namespaced:
        names["categories"] = ["all"]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": r.qualified, "labels": {"kubevirt.io": ""}},
        "spec": {
            "group": kinds.GROUP,
            "names": names,
            "scope": "Namespaced" if r.namespaced else "Cluster",
            "conversion": {"strategy": "None"},
            "versions": [{
                "name": kinds.VERSION,
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": object_schema(kind)},
            }],
        },
    }


def generate_crds() -> list[dict[str, Any]]:
    """The four CRDs, in KubeVirt's order: instancetype, cluster instancetype, preference,
    cluster preference."""
    return [crd_for(k) for k in (kinds.INSTANCETYPE, kinds.CLUSTER_INSTANCETYPE,
                                 kinds.PREFERENCE, kinds.CLUSTER_PREFERENCE)]
