"""The CRDs the webhook tests need, until `instancetype install` registers them: the four
instancetype CRDs (api.crd.generate_crds) with v1alpha1/v1alpha2 served as deprecated (the
seeds' old objects), and the kubevirt.io / CDI kinds with schemas that keep every field.
"""
from __future__ import annotations

from instancetype.api import kinds
from instancetype.api.crd import generate_crds

DEPRECATION = "{group}/{version} {kind} is now deprecated and will be removed in v1."


def _open_crd(res: kinds.Resource, status: bool = True) -> dict:
    version = {"name": res.version, "served": True, "storage": True,
               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
    if status:
        version["subresources"] = {"status": {}}
    names = {"kind": res.kind, "listKind": f"{res.kind}List", "plural": res.plural, "singular": res.singular,
             "shortNames": list(res.short_names)}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": res.qualified},
            "spec": {"group": res.group, "names": names, "scope": "Namespaced" if res.namespaced else "Cluster",
                     "versions": [version]}}


def minimal_crds() -> list[dict]:
    crds = generate_crds()
    for crd in crds:
        v1beta1 = crd["spec"]["versions"][0]
        kind = crd["spec"]["names"]["kind"]
        for old in kinds.OLD_VERSIONS:
            crd["spec"]["versions"].append({
                **v1beta1, "name": old, "storage": False, "deprecated": True,
                "deprecationWarning": f"{kinds.GROUP}/{old} {kind} is now deprecated and will be removed in v1."})
    for kind in ("VirtualMachine", "VirtualMachineInstance", "KubeVirt", "DataVolume", "DataSource"):
        crds.append(_open_crd(kinds.BY_KIND[kind]))
    return crds


def webhook_configurations(url: str, ca_pem: bytes, *, name: str = "instancetype-test") -> list[dict]:
    """A Mutating- and a ValidatingWebhookConfiguration for every webhook of api.kinds.WEBHOOKS,
    pointing at `url` (https://HOST:PORT) with KubeVirt's names, rules and failure policy."""
    import base64

    bundle = base64.b64encode(ca_pem).decode()
    out = []
    for mutating, kind in ((True, "MutatingWebhookConfiguration"), (False, "ValidatingWebhookConfiguration")):
        hooks = []
        for hook in kinds.WEBHOOKS:
            if hook.mutating != mutating:
                continue
            res = hook.resource
            hooks.append({
                "name": hook.name, "admissionReviewVersions": ["v1"], "sideEffects": "None",
                "failurePolicy": "Fail", "timeoutSeconds": 10, "matchPolicy": "Equivalent",
                "clientConfig": {"url": url + hook.path, "caBundle": bundle},
                "rules": [{"operations": list(hook.operations), "apiGroups": [res.group],
                           "apiVersions": [res.version], "resources": [res.plural]}]})
        out.append({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                    "metadata": {"name": name}, "webhooks": hooks})
    return out
