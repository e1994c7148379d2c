"""Cluster mode's virt-operator: what `instancetype install` puts on a Kubernetes API server.

Layering: above store, beside controller; reads api/ and catalog/, writes through a client
(lightkube, in `applier.py`). The manifests are pure data:

    crds.generate_crds()                    the CRDs (crds.py)
    webhooks.webhook_configurations(target) the mutating and validating webhook configurations
    rbac.namespace_object(ns), rbac.rbac_objects(ns)
    kubevirt_objects()                      the `kubevirt` namespace and the KubeVirt object kubevirt/kubevirt
    catalogue_objects(kubevirt)             common-instancetypes as virt-operator deploys it
                                            (lifecycle/catalog_sync.desired_objects)
    apiservice.apiservice_objects(ns, target), apiservice.apiservice_rbac_objects(ns)
                                            the subresource API's registration and RBAC
    manifests(namespace, target)            all of them, in the order `install` applies them

Public: the above. The namespaces are `api.kinds`'s (`INSTALL_NAMESPACE`, `KUBEVIRT_NAMESPACE`).
"""
from __future__ import annotations

from instancetype.api import kinds
from instancetype.deploy.crds import MANAGED_BY, MANAGED_BY_LABEL, generate_crds
from instancetype.deploy.rbac import namespace_object, rbac_objects
from instancetype.deploy.webhooks import WebhookTarget, webhook_configurations


def kubevirt_object() -> dict:
    """kubevirt/kubevirt with an empty configuration: the cluster settings' home, as on the
    embedded store (every setting at KubeVirt's default)."""
    return {"apiVersion": kinds.KUBEVIRT_API_VERSION, "kind": "KubeVirt",
            "metadata": {"name": kinds.KUBEVIRT_NAME, "namespace": kinds.KUBEVIRT_NAMESPACE,
                         "labels": {MANAGED_BY_LABEL: MANAGED_BY}},
            "spec": {}}


def kubevirt_objects() -> list[dict]:
    return [namespace_object(kinds.KUBEVIRT_NAMESPACE), kubevirt_object()]


def catalogue_objects(kubevirt: dict | None) -> list[dict]:
    """The common-instancetypes objects for this KubeVirt object's configuration."""
    from instancetype.lifecycle.catalog_sync import CLUSTER_REGISTRY, desired_objects

    return desired_objects(kubevirt, registry=CLUSTER_REGISTRY)


def manifests(namespace: str = kinds.INSTALL_NAMESPACE, target: WebhookTarget | None = None) -> list[dict]:
    """Everything `install` applies, in its order: CRDs, the namespace and RBAC, the KubeVirt
    object, the catalogue, the subresource API's APIService, and last the webhook configurations (so that nothing above waits for
    a webhook that is not serving yet)."""
    target = target or WebhookTarget(service=(namespace, "instancetype-webhook"))
    kv = kubevirt_objects()
    from instancetype.deploy.apiservice import TargetError, apiservice_objects, apiservice_rbac_objects

    try:   # the subresource API needs an address the aggregator may dial (not loopback)
        subresource_api = apiservice_objects(namespace, target)
    except TargetError:
        subresource_api = []
    return (generate_crds() + [namespace_object(namespace)] + rbac_objects(namespace)
            + apiservice_rbac_objects(namespace) + kv + catalogue_objects(kv[1]) + subresource_api
            + webhook_configurations(target))


__all__ = [
    "WebhookTarget", "generate_crds", "webhook_configurations",
    "namespace_object", "rbac_objects", "kubevirt_object", "kubevirt_objects", "catalogue_objects", "manifests",
]
