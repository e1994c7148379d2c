"""The aggregated API `subresources.kubevirt.io/v1` registered as virt-operator registers
virt-api's (components/apiservices.go NewVirtAPIAPIServices), and the RBAC around it.

Where the aggregator finds `serve`:
- `WebhookTarget(service=(NS, NAME))`: that Service (port 443), as virt-operator's `virt-api`;
- `WebhookTarget(url="https://IP:PORT")`: a Service without a selector, `virt-api` in the install
  namespace (port 443, named `https`), and an EndpointSlice at IP:PORT for it. The aggregator
  (with `--enable-aggregator-routing`) dials the slice's address; Kubernetes refuses loopback
  and link-local addresses there, so IP is a routable address (a host name is refused here: an
  EndpointSlice holds addresses).
The APIService carries the CA of the serving certificate (`caBundle`); without one it would have
to skip TLS verification, which is never set here.

RBAC:
- the serve identity (rbac.NAME) creates SubjectAccessReviews (`authorization.k8s.io`) to ask
  who may start what, and reads `kube-system/extension-apiserver-authentication` (the front-proxy
  CA and header names) through a RoleBinding in kube-system to the API server's own
  `extension-apiserver-authentication-reader` Role;
- users: `instancetype:subresources-edit` (start, stop, restart; aggregated into the `admin` and
  `edit` roles) and `instancetype:subresources-view` (the two expansions; into `view`), the
  subresource rules of KubeVirt's kubevirt.io:admin/edit/view cluster roles; and every
  authenticated user may read the `version` (kubevirt.io:default: virtctl reads it after an error
  to compare its version with the server's).

Public: `SERVICE_NAME`, `APISERVICE_NAME`, `apiservice_objects(namespace, target)`,
`apiservice_rbac_objects(namespace)`.
"""
from __future__ import annotations

import base64
import ipaddress
from urllib.parse import urlsplit

from instancetype.api import kinds
from instancetype.deploy.crds import MANAGED_BY, MANAGED_BY_LABEL
from instancetype.deploy.rbac import NAME
from instancetype.deploy.webhooks import WebhookTarget
from instancetype.errors import Error

GROUP, VERSION = kinds.SUBRESOURCE_GROUP, kinds.SUBRESOURCE_VERSION
APISERVICE_NAME = f"{VERSION}.{GROUP}"
SERVICE_NAME = "virt-api"               # virt-operator's VirtApiServiceName
SERVICE_PORT = 443
RBAC_API = "rbac.authorization.k8s.io/v1"
DEFAULT_ROLE = "instancetype:subresources-default"   # kubevirt.io:default's subresource rule


class TargetError(Error):
    """The address given for the subresource API cannot be registered."""


def _labels() -> dict:
    return {MANAGED_BY_LABEL: MANAGED_BY}


def _address(url: str) -> tuple[str, int]:
    """IP and port of `https://IP:PORT`."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise TargetError(f"--webhook-url {url}: the subresource API needs https://IP:PORT")
    try:
        ip = ipaddress.ip_address(parts.hostname)
    except ValueError:
        raise TargetError(f"--webhook-url {url}: an EndpointSlice holds an IP address, not the host name "
                          f"{parts.hostname!r}") from None
    if ip.is_loopback or ip.is_link_local or ip.is_unspecified:
        raise TargetError(f"--webhook-url {url}: Kubernetes refuses the {ip} address for an aggregated API "
                          "endpoint (loopback, link-local or unspecified); serve on a routable address")
    return str(ip), parts.port or 443


def apiservice_objects(namespace: str, target: WebhookTarget) -> list[dict]:
    """[Service, EndpointSlice,] APIService: the first two only for a URL target."""
    objs: list[dict] = []
    if target.service is not None:
        svc_ns, svc_name = target.service
    else:
        ip, port = _address(target.url)
        svc_ns, svc_name = namespace, SERVICE_NAME
        family = "IPv6" if ":" in ip else "IPv4"
        objs.append({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": svc_name, "namespace": svc_ns, "labels": _labels()},
            "spec": {"ports": [{"name": "https", "port": SERVICE_PORT, "protocol": "TCP", "targetPort": port}]},
        })
        objs.append({
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": svc_name, "namespace": svc_ns,
                         "labels": {**_labels(), "kubernetes.io/service-name": svc_name,
                                    "endpointslice.kubernetes.io/managed-by": "instancetype"}},
            "addressType": family,
            "endpoints": [{"addresses": [ip], "conditions": {"ready": True}}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
        })
    spec = {"group": GROUP, "version": VERSION, "groupPriorityMinimum": 1000, "versionPriority": 15,
            "service": {"namespace": svc_ns, "name": svc_name, "port": SERVICE_PORT}}
    if target.ca_bundle:
        spec["caBundle"] = base64.b64encode(target.ca_bundle).decode("ascii")
    objs.append({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                 "metadata": {"name": APISERVICE_NAME, "labels": {**_labels(), "kubevirt.io": "virt-api-aggregator"}},
                 "spec": spec})
    return objs


def apiservice_rbac_objects(namespace: str) -> list[dict]:
    subject = [{"kind": "ServiceAccount", "name": NAME, "namespace": namespace}]
    reviewer = f"{NAME}:subjectaccessreviews"
    auth_reader = f"{NAME}:extension-apiserver-authentication-reader"

    def meta(name: str, ns: str | None = None, extra: dict | None = None) -> dict:
        out: dict = {"name": name, "labels": {**_labels(), **(extra or {})}}
        if ns:
            out["namespace"] = ns
        return out

    return [
        {"apiVersion": RBAC_API, "kind": "ClusterRole", "metadata": meta(reviewer),
         "rules": [{"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]}]},
        {"apiVersion": RBAC_API, "kind": "ClusterRoleBinding", "metadata": meta(reviewer),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": reviewer},
         "subjects": [dict(s) for s in subject]},
        {"apiVersion": RBAC_API, "kind": "RoleBinding", "metadata": meta(auth_reader, "kube-system"),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                     "name": "extension-apiserver-authentication-reader"},
         "subjects": [dict(s) for s in subject]},
        {"apiVersion": RBAC_API, "kind": "ClusterRole",
         "metadata": meta("instancetype:subresources-edit", extra={
             "rbac.authorization.k8s.io/aggregate-to-admin": "true",
             "rbac.authorization.k8s.io/aggregate-to-edit": "true"}),
         "rules": [{"apiGroups": [GROUP], "resources": ["virtualmachines/start", "virtualmachines/stop",
                                                        "virtualmachines/restart"], "verbs": ["update"]},
                   {"apiGroups": [GROUP], "resources": ["virtualmachines/expand-spec"], "verbs": ["get"]},
                   {"apiGroups": [GROUP], "resources": ["expand-vm-spec"], "verbs": ["update"]}]},
        {"apiVersion": RBAC_API, "kind": "ClusterRole",
         "metadata": meta("instancetype:subresources-view", extra={"rbac.authorization.k8s.io/aggregate-to-view": "true"}),
         "rules": [{"apiGroups": [GROUP], "resources": ["virtualmachines/expand-spec"], "verbs": ["get"]},
                   {"apiGroups": [GROUP], "resources": ["expand-vm-spec"], "verbs": ["update"]}]},
        {"apiVersion": RBAC_API, "kind": "ClusterRole", "metadata": meta(DEFAULT_ROLE),
         "rules": [{"apiGroups": [GROUP], "resources": ["version"], "verbs": ["get", "list"]}]},
        {"apiVersion": RBAC_API, "kind": "ClusterRoleBinding", "metadata": meta(DEFAULT_ROLE),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": DEFAULT_ROLE},
         "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:authenticated"}]},
    ]
