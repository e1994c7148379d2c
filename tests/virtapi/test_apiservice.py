"""The APIService registration's manifests: a Service without a selector and an EndpointSlice at
the serving address, or the given Service; the CA bundle; refusal of addresses the aggregator refuses."""
from __future__ import annotations

import base64

import pytest

from instancetype.deploy.apiservice import TargetError, apiservice_objects, apiservice_rbac_objects
from instancetype.deploy.webhooks import WebhookTarget

PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def test_url_target_is_a_selectorless_service_and_an_endpointslice():
    svc, eps, api = apiservice_objects("ns1", WebhookTarget(url="https://10.123.0.1:8443", ca_bundle=PEM))
    assert (svc["kind"], svc["metadata"]["namespace"], svc["metadata"]["name"]) == ("Service", "ns1", "virt-api")
    assert "selector" not in svc["spec"] and svc["spec"]["ports"][0]["port"] == 443
    assert eps["metadata"]["labels"]["kubernetes.io/service-name"] == "virt-api"
    assert eps["endpoints"] == [{"addresses": ["10.123.0.1"], "conditions": {"ready": True}}]
    # the aggregator matches the Service port to the slice's port by name
    assert eps["ports"][0] == {"name": svc["spec"]["ports"][0]["name"], "port": 8443, "protocol": "TCP"}
    assert api["metadata"]["name"] == "v1.subresources.kubevirt.io"
    assert api["spec"]["service"] == {"namespace": "ns1", "name": "virt-api", "port": 443}
    assert base64.b64decode(api["spec"]["caBundle"]) == PEM
    assert (api["spec"]["groupPriorityMinimum"], api["spec"]["versionPriority"]) == (1000, 15)
    assert "insecureSkipTLSVerify" not in api["spec"]
    _, eps6, _ = apiservice_objects("ns1", WebhookTarget(url="https://[fd00::1]:9443", ca_bundle=PEM))
    assert eps6["addressType"] == "IPv6" and eps6["endpoints"][0]["addresses"] == ["fd00::1"]


def test_service_target_names_that_service():
    (api,) = apiservice_objects("ns1", WebhookTarget(service=("web", "hooks"), ca_bundle=PEM))
    assert api["spec"]["service"] == {"namespace": "web", "name": "hooks", "port": 443}


@pytest.mark.parametrize("url, words", [
    ("https://127.0.0.1:8443", "loopback"), ("https://[::1]:8443", "loopback"),
    ("https://169.254.1.1:8443", "link-local"), ("https://localhost:8443", "host name"),
    ("http://10.0.0.1:80", "https://IP:PORT"),
])
def test_addresses_the_aggregator_refuses(url, words):
    with pytest.raises(TargetError, match=words):
        apiservice_objects("ns1", WebhookTarget(url=url))


def test_rbac_is_least_privilege():
    objs = {(o["kind"], o["metadata"]["name"]): o for o in apiservice_rbac_objects("ns1")}
    reviewer = objs[("ClusterRole", "instancetype-controller:subjectaccessreviews")]
    assert reviewer["rules"] == [{"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"],
                                  "verbs": ["create"]}]
    reader = objs[("RoleBinding", "instancetype-controller:extension-apiserver-authentication-reader")]
    assert reader["metadata"]["namespace"] == "kube-system"
    assert reader["roleRef"]["name"] == "extension-apiserver-authentication-reader"
    edit = objs[("ClusterRole", "instancetype:subresources-edit")]
    assert edit["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
    assert {"virtualmachines/start", "virtualmachines/stop", "virtualmachines/restart"} <= {
        r for rule in edit["rules"] for r in rule["resources"]}


def _print(*args):
    import subprocess
    import sys

    import yaml

    proc = subprocess.run([sys.executable, "-m", "instancetype", "install", "--print", *args],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return list(yaml.safe_load_all(proc.stdout))


def test_install_print_registers_the_subresource_api_before_the_webhooks(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_bytes(PEM)
    objs = _print("--webhook-url", "https://10.123.0.1:8443", "--ca-bundle", str(ca))
    kinds = [o["kind"] for o in objs]
    assert kinds[-5:] == ["Service", "EndpointSlice", "APIService", "MutatingWebhookConfiguration",
                          "ValidatingWebhookConfiguration"]
    # a loopback webhook URL (fine for admission webhooks) registers no APIService
    objs = _print("--webhook-url", "https://127.0.0.1:8443", "--ca-bundle", str(ca))
    assert "APIService" not in [o["kind"] for o in objs]
    # a Service target: the APIService names it
    api = next(o for o in _print("--service", "virt/hooks") if o["kind"] == "APIService")
    assert api["spec"]["service"] == {"namespace": "virt", "name": "hooks", "port": 443}
