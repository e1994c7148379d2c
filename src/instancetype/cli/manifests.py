"""What the offline commands do with loaded documents: sort them by meaning, upgrade old API
versions, read the cluster settings, and name objects the way kubectl does."""
from __future__ import annotations

from instancetype.api import kinds
from instancetype.api.versions import needs_upgrade, upgrade
from instancetype.errors import LoadError

from .loader import Document, read_values

# Objects the engine looks up (by kind) besides the four instancetype kinds and VMs.
LOOKUP_KINDS = {"ControllerRevision", "PersistentVolumeClaim", "DataVolume", "DataSource", "VolumeSnapshot",
                "Namespace"}


class Manifests:
    """Loaded documents, upgraded to v1beta1 and sorted: VMs, types and lookups, and the rest.
    (A plain class: `dataclasses` costs every offline command line its import.)"""

    def __init__(self) -> None:
        self.vms: list[Document] = []
        self.types: list[Document] = []      # the four instancetype/preference kinds
        self.lookups: list[Document] = []    # ControllerRevisions, PVCs, DataVolumes...
        self.others: list[Document] = []     # other API groups: skipped
        self.config_docs: list[Document] = []  # KubeVirt objects
        self.warnings: list[str] = []
        self.order: dict[int, int] = {}       # id(document) -> position in the input

    def in_order(self, docs: list[Document]) -> list[Document]:
        return sorted(docs, key=lambda d: self.order.get(id(d), 0))

    def objects(self) -> list[dict]:
        """Everything a VM may be looked up against."""
        return [d.obj for d in self.types] + [d.obj for d in self.lookups]


def check_known_kind(d: Document) -> None:
    """An unknown kind in KubeVirt's own groups is an error (a typo), not another API's object."""
    group = kinds.group_of(d.api_version)
    if group in kinds.KUBEVIRT_GROUPS and d.kind not in kinds.KNOWN_KINDS_BY_GROUP[group]:
        raise LoadError(f'{d.where}: no matches for kind "{d.kind}" in version "{d.api_version}"')


def sort_documents(docs: list[Document], namespace: str, *, enforce: bool = True) -> Manifests:
    """`namespace`: that of the objects that name none; `enforce`: it was given (`-n`), and an
    object naming another is refused, as kubectl does."""
    m = Manifests()
    for position, d in enumerate(docs):
        m.order[id(d)] = position
        check_known_kind(d)
        if needs_upgrade(d.obj):
            try:
                d.obj, w = upgrade(d.obj)
            except LoadError as e:
                raise LoadError(f"{d.where}: {e}") from None
            m.warnings.extend(w)
        _default_namespace(d, namespace, enforce)
        group = kinds.group_of(d.api_version)     # after the upgrade: flavor objects are instancetypes now
        if d.kind == "VirtualMachine" and group == "kubevirt.io":
            m.vms.append(d)
        elif d.kind in kinds.ALL_TYPE_KINDS and group == kinds.GROUP:
            m.types.append(d)
        elif d.kind == "KubeVirt" and group == "kubevirt.io":
            m.config_docs.append(d)
        elif d.kind in LOOKUP_KINDS:
            m.lookups.append(d)
        else:
            m.others.append(d)
    return m


def _default_namespace(d: Document, namespace: str, enforce: bool) -> None:
    res = kinds.BY_KIND.get(d.kind)
    if res is not None and not res.namespaced:
        return
    meta = d.obj.get("metadata")
    if meta is None:
        meta = d.obj["metadata"] = {}
    if enforce and meta.get("namespace") and meta["namespace"] != namespace:
        raise LoadError(f"{d.where}: the namespace from the provided object \"{meta['namespace']}\" does not "
                        f"match the namespace \"{namespace}\". You must pass '--namespace={meta['namespace']}' "
                        f"to perform this operation.")
    if not meta.get("namespace"):
        meta["namespace"] = namespace


def read_config(path: str | None, manifests: Manifests | None = None) -> dict | None:
    """The cluster settings: from `--kubevirt-config FILE` (a KubeVirt CR or just its
    `spec.configuration`), else from a KubeVirt object among the manifests."""
    if path:
        values = read_values(path)
        if not values:
            raise LoadError(f"{path}: no KubeVirt configuration found")
        where, obj = values[0]
    elif manifests and manifests.config_docs:
        where, obj = manifests.config_docs[0].where, manifests.config_docs[0].obj
    else:
        return None
    if not isinstance(obj, dict):
        raise LoadError(f"{where}: expected a KubeVirt object or its spec.configuration")
    if obj.get("kind") == "KubeVirt" or "spec" in obj:
        spec = obj.get("spec") or {}
        if not isinstance(spec, dict):
            raise LoadError(f"{where}: spec: expected an object")
        cfg = spec.get("configuration") or {}
        field_name = "spec.configuration"
    else:
        cfg, field_name = obj, "(root)"
    if not isinstance(cfg, dict):
        raise LoadError(f"{where}: {field_name}: expected an object")
    return cfg


def resource_name(obj: dict) -> str:
    """`virtualmachine.kubevirt.io/vm1`, as kubectl names an object in its messages."""
    kind = obj.get("kind", "")
    res = kinds.BY_KIND.get(kind)
    prefix = res.qualified_singular if res else kind.lower()
    api_version = obj.get("apiVersion")
    if isinstance(api_version, str) and kinds.group_of(api_version) == kinds.FLAVOR_GROUP:
        prefix = f"{kind.lower()}.{kinds.FLAVOR_GROUP}"    # a cluster keeps flavor objects in their group
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return f"{prefix}/{name if isinstance(name, str) else ''}"    # unstructured GetName: "" unless a string
