"""The CustomResourceDefinitions cluster mode installs, as virt-operator (and CDI, and the CSI
snapshotter) would.

- The four instancetype.kubevirt.io kinds (api/crd.py's v1.9 CRDs) serving, as KubeVirt v1.0-v1.5
  did (components/crds.go, NewVirtualMachineInstancetypeCrd and siblings), v1alpha1 and v1alpha2
  beside v1beta1: served, not stored, `deprecated: true` with KubeVirt's deprecationWarning
  (api/v1alpha.deprecation_warning), one schema for all (conversion strategy None: only
  apiVersion differs, every field's JSON name is the same in every version).
- Seed 002's flavor.kubevirt.io/v1alpha1 kinds, deprecated with the flavor warning the embedded
  store gives (api/v1alpha.flavor_warning); no short names and no category, which belong to the
  instancetype kinds they became.
- kubevirt.io VirtualMachine, VirtualMachineInstance, KubeVirt and VirtualMachineInstanceMigration
  (NewVirtualMachineCrd, NewVirtualMachineInstanceCrd, NewKubeVirtCrd,
  NewVirtualMachineInstanceMigrationCrd): short names, category `all`, printer columns and
  subresources as KubeVirt's (the VMI has no status subresource there: virt-handler writes the
  whole object), schemas from the type table (type_schema.py).
- cdi.kubevirt.io DataVolume and DataSource, snapshot.storage.k8s.io VolumeSnapshot: what
  inference reads. DataVolume's spec is in the table; the rest keeps unknown fields.

Every CRD carries `app.kubernetes.io/managed-by: instancetype`: `install` refuses to take over
a CRD without it (KubeVirt's own), and `uninstall` removes only CRDs with it.

Public: `generate_crds() -> list[dict]`, `instancetype_crd(kind)`, `flavor_crd(kind)`,
`kubevirt_crd(kind)`, `MANAGED_BY`, `is_ours(obj)`.
"""
from __future__ import annotations

from typing import Any

from instancetype.api import crd as api_crd
from instancetype.api import kinds, v1alpha
from instancetype.api.field_docs import VM_DOCS, VMI_DOCS, describe
from instancetype.deploy.type_schema import object_schema as table_schema
from instancetype.deploy.type_schema import preserved_object
from instancetype.jsonutil import clone

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "instancetype"
CRD_API_VERSION = "apiextensions.k8s.io/v1"

# Fields older KubeVirt kept that v1.9's types no longer list, but the seeds write and the
# webhooks read: pruning them would change what admission sees. Seed 002's `spec.flavor` is the
# former name of `spec.instancetype` (api/v1alpha.rewrite_flavor).
_VM_EXTRA_FIELDS = {"kv.VirtualMachineSpec": {"flavor": ["struct:kv.InstancetypeMatcher", True, True]}}


def is_ours(obj: dict | None) -> bool:
    labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
    return labels.get(MANAGED_BY_LABEL) == MANAGED_BY


def _mark(crd: dict) -> dict:
    crd["metadata"].setdefault("labels", {})[MANAGED_BY_LABEL] = MANAGED_BY
    return crd


def _crd(group: str, kind: str, plural: str, singular: str, namespaced: bool, versions: list[dict], *,
         short_names: tuple[str, ...] = (), categories: tuple[str, ...] = (), labels: dict | None = None,
         conversion: bool = False, annotations: dict | None = None) -> dict:
    names: dict = {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": singular}
    if short_names:
        names["shortNames"] = list(short_names)
    if categories:
        names["categories"] = list(categories)
    spec: dict = {"group": group, "names": names, "scope": "Namespaced" if namespaced else "Cluster"}
    if conversion:
        spec["conversion"] = {"strategy": "None"}
    spec["versions"] = versions
    meta: dict = {"name": f"{plural}.{group}", "labels": dict(labels or {})}
    if annotations:
        meta["annotations"] = dict(annotations)
    # a copy: no two places of a manifest share an object (YAML would print an alias)
    return clone(_mark({"apiVersion": CRD_API_VERSION, "kind": "CustomResourceDefinition",
                        "metadata": meta, "spec": spec}))


# --- instancetype.kubevirt.io and flavor.kubevirt.io ----------------------------------------------
def instancetype_crd(kind: str) -> dict:
    """One of the four kinds: v1alpha1 and v1alpha2 (deprecated) then v1beta1 (storage)."""
    crd = _mark(api_crd.crd_for(kind))
    served = crd["spec"]["versions"][0]
    schema = served["schema"]
    old = [{"name": v, "served": True, "storage": False, "deprecated": True,
            "deprecationWarning": v1alpha.deprecation_warning(v, kind), "schema": schema}
           for v in kinds.OLD_VERSIONS]
    crd["spec"]["versions"] = old + [served]
    return clone(crd)


# flavor kind -> (plural, namespaced): the plurals are `kinds.FLAVOR_PLURALS` (why they differ from v0.49's).
_FLAVOR_RESOURCES = {kind: (kinds.FLAVOR_PLURALS[kind], kinds.BY_KIND[new].namespaced)
                     for kind, new in kinds.FLAVOR_KINDS.items()}


def flavor_resources() -> dict[str, tuple[str, bool]]:
    """flavor kind -> (plural, namespaced), for the webhooks' rules and the RBAC."""
    return dict(_FLAVOR_RESOURCES)


def flavor_crd(kind: str) -> dict:
    """A seed-002 flavor.kubevirt.io/v1alpha1 kind: the schema of the kind it became, keeping
    unknown spec fields (the flavor API's own fields are not all known)."""
    plural, namespaced = _FLAVOR_RESOURCES[kind]
    new = kinds.FLAVOR_KINDS[kind]
    schema = api_crd.object_schema(new)
    schema.pop("description", None)
    schema["properties"]["spec"]["x-kubernetes-preserve-unknown-fields"] = True
    version = {"name": "v1alpha1", "served": True, "storage": True, "deprecated": True,
               "deprecationWarning": v1alpha.flavor_warning(kind, new),
               "schema": {"openAPIV3Schema": schema}}
    return _crd(kinds.FLAVOR_GROUP, kind, plural, plural[:-1], namespaced, [version],
                labels={"kubevirt.io": ""}, conversion=True)


# --- kubevirt.io, CDI, snapshots ------------------------------------------------------------------
_AGE: dict[str, Any] = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
_READY: dict[str, Any] = {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Ready')].status"}


def _version(name: str, schema: dict, columns: list[dict] | None = None, status: bool = True) -> dict:
    out: dict = {"name": name, "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    if status:
        out["subresources"] = {"status": {}}
    if columns:
        out["additionalPrinterColumns"] = columns
    return out


def _preserved_kind(description: str = "") -> dict:
    """apiVersion, kind, metadata, and a spec and status that keep every field."""
    out = {"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
        "spec": preserved_object(), "status": preserved_object()}}
    if description:
        out = {"description": description, **out}
    return out


def _kubevirt_schema() -> dict:
    """KubeVirt's object: every field kept, and the parts the controller reads typed as objects, so
    that the API server refuses `instancetype: 5` as the embedded store does (the same paths)."""
    from instancetype.lifecycle.admission import KUBEVIRT_OBJECT_PATHS

    schema = _preserved_kind("KubeVirt represents the object deploying all KubeVirt resources.")
    for path in KUBEVIRT_OBJECT_PATHS:       # parents first
        node = schema
        for name in path[:-1]:
            node = node["properties"][name]
        node.setdefault("properties", {})[path[-1]] = preserved_object()
    return schema


def kubevirt_crd(kind: str) -> dict:
    """VirtualMachine, VirtualMachineInstance, KubeVirt, DataVolume, DataSource or VolumeSnapshot."""
    r = kinds.BY_KIND[kind]
    if kind == "VirtualMachine":
        schema = table_schema("kv.VirtualMachine", _VM_EXTRA_FIELDS,
                              description="VirtualMachine handles the VirtualMachines that are not running or "
                                          "are in a stopped state The VirtualMachine contains the template to "
                                          "create the VirtualMachineInstance. It also mirrors the running state "
                                          "of the created VirtualMachineInstance in its status.")
        schema = describe(clone(schema), VM_DOCS)     # our descriptions of the fields instancetypes touch
        columns = [_AGE, {"name": "Status", "type": "string", "description": "Human Readable Status",
                          "jsonPath": ".status.printableStatus"}, _READY]
        return _crd(r.group, kind, r.plural, r.singular, True, [_version("v1", schema, columns)],
                    short_names=r.short_names, categories=("all",), labels={"kubevirt.io": ""})
    if kind == "VirtualMachineInstance":
        schema = table_schema("kv.VirtualMachineInstance", description="VirtualMachineInstance is *the* VirtualMachineInstance Definition. It represents a virtual machine in the runtime environment of kubernetes.")
        schema = describe(clone(schema), VMI_DOCS)
        columns = [_AGE, {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
                   {"name": "IP", "type": "string", "jsonPath": ".status.interfaces[0].ipAddress"},
                   {"name": "NodeName", "type": "string", "jsonPath": ".status.nodeName"}, _READY,
                   {"name": "Live-Migratable", "type": "string", "priority": 1,
                    "jsonPath": ".status.conditions[?(@.type=='LiveMigratable')].status"},
                   {"name": "Paused", "type": "string", "priority": 1,
                    "jsonPath": ".status.conditions[?(@.type=='Paused')].status"}]
        return _crd(r.group, kind, r.plural, r.singular, True, [_version("v1", schema, columns, status=False)],
                    short_names=r.short_names, categories=("all",), labels={"kubevirt.io": ""})
    if kind == "KubeVirt":
        columns = [_AGE, {"name": "Phase", "type": "string", "jsonPath": ".status.phase"}]
        return _crd(r.group, kind, r.plural, r.singular, True,
                    [_version("v1", _kubevirt_schema(), columns)],
                    short_names=r.short_names, categories=("all",), labels={"operator.kubevirt.io": ""})
    if kind == "VirtualMachineInstanceMigration":
        # NewVirtualMachineInstanceMigrationCrd: its spec and status kept as given (no type table).
        columns = [{"name": "Phase", "type": "string", "description": "The current phase of VM instance migration",
                    "jsonPath": ".status.phase"},
                   {"name": "VMI", "type": "string", "description": "The name of the VMI to perform the migration on",
                    "jsonPath": ".spec.vmiName"}]
        schema = _preserved_kind("VirtualMachineInstanceMigration represents the object tracking a VMI's migration "
                                 "to another host in the cluster")
        return _crd(r.group, kind, r.plural, r.singular, True, [_version("v1", schema, columns)],
                    short_names=r.short_names, categories=("all",), labels={"kubevirt.io": ""})
    if kind == "DataVolume":
        # CDI's DataVolume (kubebuilder markers of cdi v1beta1 types.go).
        schema = _preserved_kind("DataVolume is an abstraction on top of PersistentVolumeClaims to allow easy "
                                 "population of those PersistentVolumeClaims with relation to VirtualMachines")
        schema["properties"]["spec"] = table_schema("cdi.DataVolumeSpec")
        schema["properties"]["spec"].pop("description", None)
        schema["properties"]["spec"]["properties"].pop("metadata", None)
        schema["required"] = ["spec"]
        columns = [{"name": "Phase", "type": "string", "description": "The phase the data volume is in",
                    "jsonPath": ".status.phase"},
                   {"name": "Progress", "type": "string",
                    "description": "Transfer progress in percentage if known, N/A otherwise",
                    "jsonPath": ".status.progress"},
                   {"name": "Restarts", "type": "integer", "description": "The number of times the transfer has been restarted.",
                    "jsonPath": ".status.restartCount"}, _AGE]
        return _crd(r.group, kind, r.plural, r.singular, True, [_version("v1beta1", schema, columns)],
                    short_names=r.short_names, categories=("all",))
    if kind == "DataSource":
        return _crd(r.group, kind, r.plural, r.singular, True,
                    [_version("v1beta1", _preserved_kind("DataSource references an import/clone source for a DataVolume"))],
                    short_names=r.short_names, categories=("all",))
    if kind == "VolumeSnapshot":
        columns = [{"name": "ReadyToUse", "type": "boolean", "jsonPath": ".status.readyToUse"},
                   {"name": "SourcePVC", "type": "string", "jsonPath": ".spec.source.persistentVolumeClaimName"},
                   {"name": "SourceSnapshotContent", "type": "string",
                    "jsonPath": ".spec.source.volumeSnapshotContentName"},
                   {"name": "RestoreSize", "type": "string", "jsonPath": ".status.restoreSize"},
                   {"name": "SnapshotClass", "type": "string", "jsonPath": ".spec.volumeSnapshotClassName"},
                   {"name": "SnapshotContent", "type": "string", "jsonPath": ".status.boundVolumeSnapshotContentName"},
                   {"name": "CreationTime", "type": "date", "jsonPath": ".status.creationTime"}, _AGE]
        return _crd(r.group, kind, r.plural, r.singular, True,
                    [_version("v1", _preserved_kind("VolumeSnapshot is a user's request for either creating a "
                                                    "point-in-time snapshot of a persistent volume, or binding to "
                                                    "a pre-existing snapshot."), columns)],
                    short_names=r.short_names, annotations={
                        # a *.k8s.io group needs an approval annotation; the external-snapshotter's
                        "api-approved.kubernetes.io": "https://github.com/kubernetes-csi/external-snapshotter/pull/814"})
    raise KeyError(kind)


KUBEVIRT_KINDS = ("VirtualMachine", "VirtualMachineInstance", "KubeVirt", "VirtualMachineInstanceMigration")
STORAGE_KINDS = kinds.STORAGE_KINDS


def generate_crds() -> list[dict]:
    """Every CRD `install` applies, in order: the four type kinds, the flavor kinds, kubevirt.io,
    then the storage kinds inference reads."""
    out = [instancetype_crd(k) for k in (kinds.INSTANCETYPE, kinds.CLUSTER_INSTANCETYPE,
                                        kinds.PREFERENCE, kinds.CLUSTER_PREFERENCE)]
    out += [flavor_crd(k) for k in _FLAVOR_RESOURCES]
    out += [kubevirt_crd(k) for k in KUBEVIRT_KINDS + STORAGE_KINDS]
    return out
