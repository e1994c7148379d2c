"""The MutatingWebhookConfiguration and ValidatingWebhookConfiguration of this system, as
virt-operator registers virt-api's (components/webhooks.go, NewVirtAPIMutatingWebhookConfiguration
and NewVirtAPIValidatingWebhookConfiguration): the webhooks of api/kinds.WEBHOOKS with KubeVirt's
names, paths, rules and operations, `failurePolicy: Fail`, `sideEffects: None`,
`admissionReviewVersions: [v1]`, `timeoutSeconds: 10`.

The type validators' rules name v1beta1 only, as v1.9's: the API server's default `matchPolicy:
Equivalent` sends a v1alpha1/v1alpha2 request converted to v1beta1 (strategy None). Each also
covers the seed-002 flavor.kubevirt.io kind that became its kind, which the webhook receives as
written (the flavor group is not equivalent, it is another group).

Where the API server finds the webhooks: `WebhookTarget(url=..., ca_bundle=...)` (a URL, as
`install --webhook-url`) or `WebhookTarget(service=(namespace, name), ...)` (an in-cluster
Service, as `install --print --service NS/NAME`); the path is KubeVirt's either way.

Public: `WebhookTarget`, `webhook_configurations(target) -> [mutating, validating]`.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass

from instancetype.api import kinds
from instancetype.deploy.crds import MANAGED_BY, MANAGED_BY_LABEL, flavor_resources

API_VERSION = "admissionregistration.k8s.io/v1"
TIMEOUT_SECONDS = 10   # virt-operator's defaultTimeoutSeconds


@dataclass(frozen=True)
class WebhookTarget:
    url: str = ""                      # https://HOST:PORT (no path)
    service: tuple[str, str] | None = None   # (namespace, name)
    ca_bundle: bytes = b""             # PEM

    def client_config(self, path: str) -> dict:
        out: dict
        if self.service is not None:
            out = {"service": {"namespace": self.service[0], "name": self.service[1], "path": path, "port": 443}}
        else:
            out = {"url": self.url.rstrip("/") + path}
        if self.ca_bundle:
            out["caBundle"] = base64.b64encode(self.ca_bundle).decode("ascii")
        return out


def _rules(hook: kinds.Webhook) -> list[dict]:
    r = kinds.BY_KIND[hook.kind]
    rules = [{"operations": list(hook.operations), "apiGroups": [r.group], "apiVersions": [r.version],
              "resources": [r.plural], "scope": "*"}]
    flavors = [plural for flavor, (plural, _) in flavor_resources().items()
               if kinds.FLAVOR_KINDS.get(flavor) == hook.kind]
    if flavors and not hook.mutating:
        rules.append({"operations": list(hook.operations), "apiGroups": [kinds.FLAVOR_GROUP],
                      "apiVersions": ["v1alpha1"], "resources": flavors, "scope": "*"})
    return rules


def _webhook(hook: kinds.Webhook, target: WebhookTarget) -> dict:
    return {
        "name": hook.name,
        "admissionReviewVersions": ["v1"],
        "clientConfig": target.client_config(hook.path),
        "rules": _rules(hook),
        "failurePolicy": "Fail",
        "matchPolicy": "Equivalent",
        "sideEffects": "None",
        "timeoutSeconds": TIMEOUT_SECONDS,
    }


def _configuration(kind: str, name: str, hooks: list[dict]) -> dict:
    return {"apiVersion": API_VERSION, "kind": kind,
            "metadata": {"name": name, "labels": {"kubevirt.io": name, MANAGED_BY_LABEL: MANAGED_BY}},
            "webhooks": hooks}


def webhook_configurations(target: WebhookTarget) -> list[dict]:
    """[MutatingWebhookConfiguration virt-api-mutator, ValidatingWebhookConfiguration virt-api-validator]."""
    mutating = [_webhook(h, target) for h in kinds.WEBHOOKS if h.mutating]
    validating = [_webhook(h, target) for h in kinds.WEBHOOKS if not h.mutating]
    for h in mutating:
        h["reinvocationPolicy"] = "Never"
    return [_configuration("MutatingWebhookConfiguration", kinds.MUTATING_WEBHOOK_CONFIGURATION, mutating),
            _configuration("ValidatingWebhookConfiguration", kinds.VALIDATING_WEBHOOK_CONFIGURATION, validating)]
