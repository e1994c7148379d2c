"""The CRDs the webhook tests need, until `instancetype install` registers them: the four
instancetype CRDs (api.crd.generate_crds) with v1alpha1/v1alpha2 served as deprecated (the
seeds' old objects), and the kubevirt.io / CDI kinds with schemas that keep every field.
"""
from __future__ import annotations

import contextlib

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


def _crd_names(kube) -> set[str]:
    out = kube.kubectl("get", "crd", "-o", "name").stdout
    return {line.split("/", 1)[1] for line in out.splitlines() if "/" in line}


@contextlib.contextmanager
def registered(kube, *extra: dict):
    """The CRDs of `minimal_crds()` on `kube` (and `extra` objects, e.g. webhook
    configurations), applied server-side as `install` applies them (field manager
    `instancetype`); what was not there before is deleted on exit, the CRDs waited for, so the
    next test module finds the cluster as it was."""
    import json

    crds = minimal_crds()
    before = _crd_names(kube)
    docs = {"apiVersion": "v1", "kind": "List", "items": crds + list(extra)}
    kube.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=instancetype", "-f", "-",
                 input=json.dumps(docs))
    names = [c["metadata"]["name"] for c in crds]
    kube.kubectl("wait", "--for=condition=Established", "--timeout=60s", *[f"crd/{n}" for n in names])
    try:
        yield crds
    finally:
        for obj in extra:
            kube.kubectl("delete", f"{obj['kind'].lower()}.admissionregistration.k8s.io", obj["metadata"]["name"],
                         "--ignore-not-found", check=False)
        added = [n for n in names if n not in before]
        if added:
            # Not waited for: a CRD deleted while its storage still initialises is finalised later.
            kube.kubectl("delete", "crd", *added, "--ignore-not-found", "--wait=false", check=False)
