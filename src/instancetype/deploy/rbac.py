"""The namespace, ServiceAccount and least-privilege RBAC of the controller and `serve`.

One identity, `instancetype-controller`, runs both (virt-controller's and virt-api's work here):
- VirtualMachines: the controller writes them (revision names into matchers, status through the
  status subresource); VirtualMachineInstances: it creates, updates and deletes them (the VMI has
  no status subresource, as KubeVirt's);
- the four type kinds and the seed-002 flavor kinds: read (admission looks them up); the cluster
  kinds also written, for the common-instancetypes catalogue kept as virt-operator keeps it;
- ControllerRevisions: read, create, delete (revisions at first start);
- PersistentVolumeClaims, DataVolumes, DataSources, VolumeSnapshots: read (inference); DataVolumes
  created from a VM's dataVolumeTemplates, and the simulated CDI's claims and DataVolume status
  (controller/cdi.py): create and update, with their status subresources;
- KubeVirt: read (the cluster configuration);
- Nodes: the simulated nodes are created, kept Ready and renewed (their status and their Leases
  in `kube-node-lease`, as KWOK keeps its nodes; the lifecycle's NoSchedule taints removed once
  Ready), and every node read for scheduling;
- events: create and patch; leases: in its own namespace only (a Role), for leader election.
Nothing else: no Secrets, no ConfigMaps, no Pods, no cluster-wide write beyond the above.

Public: `NAME`, `namespace_object(name)`, `rbac_objects(namespace) -> list[dict]`,
`CLUSTER_ROLE_RULES`.
"""
from __future__ import annotations

from instancetype.api import kinds
from instancetype.deploy.crds import MANAGED_BY, MANAGED_BY_LABEL, flavor_resources
from instancetype.jsonutil import clone

NAME = "instancetype-controller"
READ = ["get", "list", "watch"]

_TYPE_PLURALS = [kinds.BY_KIND[k].plural for k in kinds.ALL_TYPE_KINDS]
_CLUSTER_TYPE_PLURALS = [kinds.BY_KIND[k].plural for k in (kinds.CLUSTER_INSTANCETYPE, kinds.CLUSTER_PREFERENCE)]

CLUSTER_ROLE_RULES: list[dict] = [
    {"apiGroups": ["kubevirt.io"], "resources": ["virtualmachines", "virtualmachineinstances"],
     "verbs": READ + ["create", "update", "patch", "delete"]},
    {"apiGroups": ["kubevirt.io"], "resources": ["virtualmachines/status"], "verbs": ["get", "update", "patch"]},
    {"apiGroups": ["kubevirt.io"], "resources": ["kubevirts"], "verbs": READ},
    # the workload updater's migrations (controller/migrations.py), completed by the simulated node
    {"apiGroups": ["kubevirt.io"], "resources": ["virtualmachineinstancemigrations"],
     "verbs": READ + ["create", "update", "patch", "delete"]},
    {"apiGroups": ["kubevirt.io"], "resources": ["virtualmachineinstancemigrations/status"],
     "verbs": ["get", "update", "patch"]},
    {"apiGroups": [kinds.GROUP], "resources": _TYPE_PLURALS, "verbs": READ},
    {"apiGroups": [kinds.GROUP], "resources": _CLUSTER_TYPE_PLURALS,
     "verbs": ["create", "update", "patch", "delete"]},
    {"apiGroups": [kinds.FLAVOR_GROUP], "resources": sorted(p for p, _ in flavor_resources().values()),
     "verbs": READ},
    {"apiGroups": ["apps"], "resources": ["controllerrevisions"], "verbs": READ + ["create", "delete"]},
    {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": READ + ["create", "update", "patch"]},
    {"apiGroups": [""], "resources": ["persistentvolumeclaims/status"], "verbs": ["update", "patch"]},
    {"apiGroups": ["cdi.kubevirt.io"], "resources": ["datavolumes"], "verbs": READ + ["create", "update", "patch"]},
    {"apiGroups": ["cdi.kubevirt.io"], "resources": ["datavolumes/status"], "verbs": ["update", "patch"]},
    {"apiGroups": ["cdi.kubevirt.io"], "resources": ["datasources"], "verbs": READ},
    {"apiGroups": ["snapshot.storage.k8s.io"], "resources": ["volumesnapshots"], "verbs": READ},
    {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": READ + ["create", "update"]},
    {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["get", "update", "patch"]},
]
LEASE_RULES: list[dict] = [
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]},
]
NODE_LEASE_NAMESPACE = "kube-node-lease"      # the nodes' heartbeats (a Role there)


def _meta(name: str, namespace: str | None = None) -> dict:
    out: dict = {"name": name}
    if namespace:
        out["namespace"] = namespace
    out["labels"] = {MANAGED_BY_LABEL: MANAGED_BY}
    return out


def namespace_object(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(name)}


def rbac_objects(namespace: str) -> list[dict]:
    """ServiceAccount, ClusterRole, ClusterRoleBinding, Role (leases), RoleBinding."""
    subject = [{"kind": "ServiceAccount", "name": NAME, "namespace": namespace}]
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(NAME, namespace)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": _meta(NAME),
         "rules": clone(CLUSTER_ROLE_RULES)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": _meta(NAME),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME},
         "subjects": subject},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": _meta(NAME, namespace),
         "rules": clone(LEASE_RULES)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": _meta(NAME, namespace),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": NAME},
         "subjects": clone(subject)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": _meta(NAME, NODE_LEASE_NAMESPACE),
         "rules": clone(LEASE_RULES)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": _meta(NAME, NODE_LEASE_NAMESPACE),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": NAME},
         "subjects": clone(subject)},
    ]
