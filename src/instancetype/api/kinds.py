"""Kinds, resources, plurals, short names and groups; label and annotation keys.

Pure data: every layer finds a kind's names here instead of spelling them again. The records are
tuples with named fields (`_field`: what `typing.NamedTuple` generates, without compiling its code
at import: every command line imports this module, and the two NamedTuples were 1.4 M of its 3.5 M
instructions; `dataclasses` before them cost more still).
"""
from __future__ import annotations

from operator import itemgetter
from typing import Any

GROUP = "instancetype.kubevirt.io"
VERSION = "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"
OLD_VERSIONS = ("v1alpha1", "v1alpha2")
FLAVOR_GROUP = "flavor.kubevirt.io"
KUBEVIRT_API_VERSION = "kubevirt.io/v1"
# virt-api's aggregated API (start, stop, restart, expand-spec, expand-vm-spec).
SUBRESOURCE_GROUP = "subresources.kubevirt.io"
SUBRESOURCE_VERSION = "v1"
SUBRESOURCE_GROUP_VERSION = f"{SUBRESOURCE_GROUP}/{SUBRESOURCE_VERSION}"

# Namespaces, each with its own name because each means something else:
# the namespace of an object given without one (Kubernetes' `default`) ...
DEFAULT_NAMESPACE = "default"
# ... where KubeVirt is installed, its KubeVirt object `kubevirt/kubevirt` holding the cluster's
# configuration (virt-operator's install namespace; virt-config reads the KubeVirt object there) ...
KUBEVIRT_NAMESPACE = "kubevirt"
KUBEVIRT_NAME = "kubevirt"
# ... and where `instancetype install` runs our own webhook server and controller.
INSTALL_NAMESPACE = "instancetype-system"
# The KubeVirt whose behaviour the engine reproduces (the version virt-api reports).
KUBEVIRT_VERSION = "v1.9.0"

INSTANCETYPE = "VirtualMachineInstancetype"
CLUSTER_INSTANCETYPE = "VirtualMachineClusterInstancetype"
PREFERENCE = "VirtualMachinePreference"
CLUSTER_PREFERENCE = "VirtualMachineClusterPreference"
INSTANCETYPE_KINDS = (INSTANCETYPE, CLUSTER_INSTANCETYPE)
PREFERENCE_KINDS = (PREFERENCE, CLUSTER_PREFERENCE)
ALL_TYPE_KINDS = INSTANCETYPE_KINDS + PREFERENCE_KINDS

_RESOURCE_FIELDS = ("kind", "group", "version", "plural", "singular", "namespaced", "short_names")


def _field(index: int) -> Any:
    """A record's named field: its item at `index`, read by C code (`itemgetter`), not by a
    Python property function (a start reads a Resource's fields about a hundred times)."""
    return property(itemgetter(index))


def _record_repr(record: tuple[object, ...], fields: tuple[str, ...]) -> str:
    """`Resource(kind='VirtualMachine', ...)`, as a NamedTuple prints itself."""
    return f"{type(record).__name__}(" + ", ".join(f"{f}={v!r}" for f, v in zip(fields, record)) + ")"


class Resource(tuple[str, str, str, str, str, bool, tuple[str, ...]]):
    """kind, group ("" for the core group), version, plural, singular, namespaced, short_names."""

    __slots__ = ()

    def __new__(cls, kind: str, group: str, version: str, plural: str, singular: str, namespaced: bool,
                short_names: tuple[str, ...] = ()) -> Resource:
        return tuple.__new__(cls, (kind, group, version, plural, singular, namespaced, short_names))

    def __getnewargs__(self) -> tuple[str, str, str, str, str, bool, tuple[str, ...]]:
        return tuple(self)      # type: ignore[return-value]  # (its own items)

    def __repr__(self) -> str:
        return _record_repr(self, _RESOURCE_FIELDS)

    kind: str = _field(0)
    group: str = _field(1)
    version: str = _field(2)
    plural: str = _field(3)
    singular: str = _field(4)
    namespaced: bool = _field(5)
    short_names: tuple[str, ...] = _field(6)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """`virtualmachines.kubevirt.io`, `persistentvolumeclaims` (core): as Kubernetes' texts name it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def qualified_singular(self) -> str:
        """`virtualmachine.kubevirt.io`: as kubectl names one object (`... created`)."""
        return f"{self.kind.lower()}.{self.group}" if self.group else self.kind.lower()

    def not_found(self, name: str) -> str:
        """Kubernetes' NotFound text."""
        return f'{self.qualified} "{name}" not found'


RESOURCES: tuple[Resource, ...] = (
    Resource(INSTANCETYPE, GROUP, VERSION, "virtualmachineinstancetypes", "virtualmachineinstancetype", True,
             ("vminstancetype", "vminstancetypes", "vmf", "vmfs")),
    Resource(CLUSTER_INSTANCETYPE, GROUP, VERSION, "virtualmachineclusterinstancetypes",
             "virtualmachineclusterinstancetype", False,
             ("vmclusterinstancetype", "vmclusterinstancetypes", "vmcf", "vmcfs")),
    Resource(PREFERENCE, GROUP, VERSION, "virtualmachinepreferences", "virtualmachinepreference", True,
             ("vmpref", "vmprefs", "vmp", "vmps")),
    Resource(CLUSTER_PREFERENCE, GROUP, VERSION, "virtualmachineclusterpreferences",
             "virtualmachineclusterpreference", False, ("vmcp", "vmcps")),
    Resource("VirtualMachine", "kubevirt.io", "v1", "virtualmachines", "virtualmachine", True, ("vm", "vms")),
    Resource("VirtualMachineInstance", "kubevirt.io", "v1", "virtualmachineinstances", "virtualmachineinstance",
             True, ("vmi", "vmis")),
    Resource("KubeVirt", "kubevirt.io", "v1", "kubevirts", "kubevirt", True, ("kv", "kvs")),
    Resource("VirtualMachineInstanceMigration", "kubevirt.io", "v1", "virtualmachineinstancemigrations",
             "virtualmachineinstancemigration", True, ("vmim", "vmims")),
    Resource("ControllerRevision", "apps", "v1", "controllerrevisions", "controllerrevision", True, ()),
    Resource("PersistentVolumeClaim", "", "v1", "persistentvolumeclaims", "persistentvolumeclaim", True, ("pvc",)),
    Resource("Namespace", "", "v1", "namespaces", "namespace", False, ("ns",)),
    Resource("Node", "", "v1", "nodes", "node", False, ("no",)),
    Resource("DataVolume", "cdi.kubevirt.io", "v1beta1", "datavolumes", "datavolume", True, ("dv", "dvs")),
    Resource("DataSource", "cdi.kubevirt.io", "v1beta1", "datasources", "datasource", True, ("das",)),
    Resource("VolumeSnapshot", "snapshot.storage.k8s.io", "v1", "volumesnapshots", "volumesnapshot", True,
             ("vs",)),
)

BY_KIND: dict[str, Resource] = {r.kind: r for r in RESOURCES}

# Kinds whose CRDs are other projects' (CDI's, the CSI snapshotter's): `install` deploys them when
# absent, but a cluster may not serve them, and a controller must run without them.
STORAGE_KINDS = ("DataVolume", "DataSource", "VolumeSnapshot")

# Kinds only a cluster has (the controller's leader election): not part of the embedded store.
CLUSTER_ONLY_RESOURCES: tuple[Resource, ...] = (
    Resource("Lease", "coordination.k8s.io", "v1", "leases", "lease", True, ()),
)
# Every kind the Kubernetes store serves, by kind.
CLUSTER_BY_KIND: dict[str, Resource] = {r.kind: r for r in RESOURCES + CLUSTER_ONLY_RESOURCES}


def resource_for(word: str) -> Resource | None:
    """A resource by kind, plural, singular or short name, any case, optionally `.group`-qualified."""
    w = word.lower()
    for r in RESOURCES:
        names = {r.kind.lower(), r.plural, r.singular, *r.short_names}
        if w in names or any(w == f"{n}.{r.group}" for n in names if r.group):
            return r
    return None


# --- labels and annotations --------------------------------------------------------------------
LABEL_DEFAULT_INSTANCETYPE = f"{GROUP}/default-instancetype"
LABEL_DEFAULT_INSTANCETYPE_KIND = f"{GROUP}/default-instancetype-kind"
LABEL_DEFAULT_PREFERENCE = f"{GROUP}/default-preference"
LABEL_DEFAULT_PREFERENCE_KIND = f"{GROUP}/default-preference-kind"

LABEL_OBJECT_GENERATION = f"{GROUP}/object-generation"
LABEL_OBJECT_KIND = f"{GROUP}/object-kind"
LABEL_OBJECT_NAME = f"{GROUP}/object-name"
LABEL_OBJECT_UID = f"{GROUP}/object-uid"
LABEL_OBJECT_VERSION = f"{GROUP}/object-version"

ANNOTATION_INSTANCETYPE_NAME = "kubevirt.io/instancetype-name"
ANNOTATION_CLUSTER_INSTANCETYPE_NAME = "kubevirt.io/cluster-instancetype-name"
ANNOTATION_PREFERENCE_NAME = "kubevirt.io/preference-name"
ANNOTATION_CLUSTER_PREFERENCE_NAME = "kubevirt.io/cluster-preference-name"

# KubeVirt's admission webhooks, by the names its refusals carry.
WEBHOOK_VM_MUTATOR = "virtualmachines-mutator.kubevirt.io"
WEBHOOK_VM_VALIDATOR = "virtualmachine-validator.kubevirt.io"


WEBHOOK_VMI_MUTATOR = "virtualmachineinstances-mutator.kubevirt.io"


def type_validator_webhook(kind: str) -> str:
    """`virtualmachineinstancetype-validator.instancetype.kubevirt.io` and the other three."""
    return f"{kind.lower()}-validator.{GROUP}"


class Webhook(tuple[str, str, bool, str, tuple[str, ...]]):
    """One admission webhook of KubeVirt's virt-api, as `install` registers it and `serve` answers
    it: `path` is virt-api's (pkg/virt-operator/resource/generate/components/webhooks.go); `kind`
    the kind it admits; `operations` CREATE and UPDATE unless named."""

    __slots__ = ()

    def __new__(cls, name: str, path: str, mutating: bool, kind: str,
                operations: tuple[str, ...] = ("CREATE", "UPDATE")) -> Webhook:
        return tuple.__new__(cls, (name, path, mutating, kind, operations))

    def __getnewargs__(self) -> tuple[str, str, bool, str, tuple[str, ...]]:
        return tuple(self)      # type: ignore[return-value]  # (its own items)

    def __repr__(self) -> str:
        return _record_repr(self, ("name", "path", "mutating", "kind", "operations"))

    name: str = _field(0)
    path: str = _field(1)
    mutating: bool = _field(2)
    kind: str = _field(3)
    operations: tuple[str, ...] = _field(4)

    @property
    def resource(self) -> Resource:
        return BY_KIND[self.kind]


# NewVirtAPIMutatingWebhookConfiguration / NewVirtAPIValidatingWebhookConfiguration at v1.9: the
# webhooks of the kinds this system serves (the VM mutator and validator, the VMI mutator, the
# four type validators); all are failurePolicy Fail, sideEffects None.
WEBHOOKS: tuple[Webhook, ...] = (
    Webhook(WEBHOOK_VM_MUTATOR, "/virtualmachines-mutate", True, "VirtualMachine"),
    Webhook(WEBHOOK_VMI_MUTATOR, "/virtualmachineinstances-mutate", True, "VirtualMachineInstance"),
    Webhook(WEBHOOK_VM_VALIDATOR, "/virtualmachines-validate", False, "VirtualMachine"),
    Webhook(type_validator_webhook(INSTANCETYPE), "/virtualmachineinstancetypes-validate", False, INSTANCETYPE),
    Webhook(type_validator_webhook(CLUSTER_INSTANCETYPE), "/virtualmachineclusterinstancetypes-validate", False,
            CLUSTER_INSTANCETYPE),
    Webhook(type_validator_webhook(PREFERENCE), "/virtualmachinepreferences-validate", False, PREFERENCE),
    Webhook(type_validator_webhook(CLUSTER_PREFERENCE), "/virtualmachineclusterpreferences-validate", False,
            CLUSTER_PREFERENCE),
)
WEBHOOK_BY_PATH: dict[str, Webhook] = {w.path: w for w in WEBHOOKS}


# Kinds a matcher may name (lowercase, singular or plural); empty means the cluster kind.
INSTANCETYPE_MATCHER_KINDS = {
    "virtualmachineinstancetype": INSTANCETYPE, "virtualmachineinstancetypes": INSTANCETYPE,
    "virtualmachineclusterinstancetype": CLUSTER_INSTANCETYPE,
    "virtualmachineclusterinstancetypes": CLUSTER_INSTANCETYPE, "": CLUSTER_INSTANCETYPE,
}
PREFERENCE_MATCHER_KINDS = {
    "virtualmachinepreference": PREFERENCE, "virtualmachinepreferences": PREFERENCE,
    "virtualmachineclusterpreference": CLUSTER_PREFERENCE,
    "virtualmachineclusterpreferences": CLUSTER_PREFERENCE, "": CLUSTER_PREFERENCE,
}

# Groups whose kinds we must know: an unknown kind in one of them is an error, not a skip.
KUBEVIRT_GROUPS = ("kubevirt.io", GROUP, FLAVOR_GROUP)
FLAVOR_KINDS = {
    "VirtualMachineFlavor": INSTANCETYPE,
    "VirtualMachineClusterFlavor": CLUSTER_INSTANCETYPE,
    "VirtualMachinePreference": PREFERENCE,
    "VirtualMachineClusterPreference": CLUSTER_PREFERENCE,
}
# flavor kind -> its resource (plural) on a cluster. The flavor preferences' names are not KubeVirt
# v0.49's (virtualmachinepreferences.flavor.kubevirt.io): with two groups serving the same plural,
# kubectl resolves `kubectl get virtualmachinepreferences` to the group first in discovery, and
# every CRD group has the same priority, so the alphabetically first, flavor.kubevirt.io, would
# win over instancetype.kubevirt.io. Objects are applied by kind, so seed 002's manifests are
# unaffected (`virtualmachinepreference.flavor.kubevirt.io/virtio created`).
FLAVOR_PLURALS = {
    "VirtualMachineFlavor": "virtualmachineflavors",
    "VirtualMachineClusterFlavor": "virtualmachineclusterflavors",
    "VirtualMachinePreference": "virtualmachineflavorpreferences",
    "VirtualMachineClusterPreference": "virtualmachineclusterflavorpreferences",
}
KNOWN_KINDS_BY_GROUP = {
    "kubevirt.io": {"VirtualMachine", "VirtualMachineInstance", "KubeVirt", "VirtualMachineInstanceMigration"},
    GROUP: set(ALL_TYPE_KINDS),
    FLAVOR_GROUP: set(FLAVOR_KINDS),
}


def group_of(api_version: str) -> str:
    """`instancetype.kubevirt.io/v1beta1` -> `instancetype.kubevirt.io`; `v1` -> `` (core)."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""
