"""`instancetype uninstall`, the catalogue kept as virt-operator keeps it, and the refusal to
install beside KubeVirt, on the real API server. Each test leaves the cluster without our objects."""
from __future__ import annotations

import json

from instancetype.deploy.crds import generate_crds
from tests.kube._webhook_stub import AllowAll
from tests.kube.test_install import run_cli
from tests.waits import eventually

LABEL = "app.kubernetes.io/managed-by=instancetype"


def _names(kube, *args: str) -> list[str]:
    return kube.kubectl("get", *args, "-o", "name", "--ignore-not-found").stdout.split()


def _install(kube, url: str, ca) -> str:
    return run_cli(kube, "install", "--kubeconfig", str(kube.kubeconfig), "--webhook-url", url,
                   "--ca-bundle", str(ca)).stdout


def _uninstall(kube) -> str:
    return run_cli(kube, "uninstall", "--kubeconfig", str(kube.kubeconfig)).stdout


def test_uninstall_removes_everything_install_made_and_is_idempotent(kube, webhook_certs):
    with AllowAll(webhook_certs.cert, webhook_certs.key) as stub:
        _install(kube, stub.url, webhook_certs.ca)
        assert len(_names(kube, "crd", "-l", LABEL)) == len(generate_crds())
        out = _uninstall(kube)
    lines = out.splitlines()
    # the webhook configurations first, the CRDs last
    assert lines[0] == "mutatingwebhookconfiguration.admissionregistration.k8s.io/virt-api-mutator deleted"
    assert lines[1] == "validatingwebhookconfiguration.admissionregistration.k8s.io/virt-api-validator deleted"
    assert "clusterrole.rbac.authorization.k8s.io/instancetype-controller deleted" in lines
    assert "virtualmachineclusterinstancetype.instancetype.kubevirt.io/u1.medium deleted" in lines
    crd_lines = [i for i, line in enumerate(lines) if line.startswith("customresourcedefinition")]
    assert len(crd_lines) == len(generate_crds()) and max(crd_lines) >= len(lines) - 2
    assert _names(kube, "crd", "-l", LABEL) == []
    assert _names(kube, "mutatingwebhookconfigurations", "-l", LABEL) == []
    assert _names(kube, "validatingwebhookconfigurations", "-l", LABEL) == []
    assert _names(kube, "clusterroles,clusterrolebindings", "-l", LABEL) == []
    # a second uninstall has nothing left to do
    assert _uninstall(kube) == ""


def test_install_restores_an_edited_catalogue_object_and_removes_a_stale_one(kube, webhook_certs):
    with AllowAll(webhook_certs.cert, webhook_certs.key) as stub:
        try:
            _install(kube, stub.url, webhook_certs.ca)
            kube.kubectl("patch", "vmcf", "u1.medium", "--type=merge", "-p",
                         json.dumps({"spec": {"cpu": {"guest": 7}}}))
            stale = json.loads(kube.kubectl("get", "vmcf", "u1.small", "-o", "json").stdout)
            stale["metadata"] = {"name": "u0.gone", "labels": stale["metadata"]["labels"],
                                 "annotations": stale["metadata"]["annotations"]}
            kube.kubectl("create", "-f", "-", input=json.dumps(stale))
            lines = _install(kube, stub.url, webhook_certs.ca).splitlines()
            assert "virtualmachineclusterinstancetype.instancetype.kubevirt.io/u1.medium configured" in lines
            assert "virtualmachineclusterinstancetype.instancetype.kubevirt.io/u0.gone deleted" in lines
            assert kube.kubectl("get", "vmcf", "u1.medium", "-o", "jsonpath={.spec.cpu.guest}").stdout == "1"
            assert _names(kube, "vmcf", "u0.gone") == []
        finally:
            _uninstall(kube)


def test_install_keeps_an_existing_kubevirt_configuration(kube, webhook_certs):
    with AllowAll(webhook_certs.cert, webhook_certs.key) as stub:
        try:
            _install(kube, stub.url, webhook_certs.ca)
            kube.kubectl("patch", "kubevirt", "kubevirt", "-n", "kubevirt", "--type=merge", "-p",
                         json.dumps({"spec": {"configuration": {"commonInstancetypesDeployment": {"enabled": False}}}}))
            lines = _install(kube, stub.url, webhook_certs.ca).splitlines()
            assert "kubevirt.kubevirt.io/kubevirt unchanged" in lines
            # virt-operator removes the catalogue when the deployment is disabled
            assert "virtualmachineclusterinstancetype.instancetype.kubevirt.io/u1.medium deleted" in lines
            assert _names(kube, "vmcf", "-l", "app.kubernetes.io/managed-by=virt-operator") == []
            kv = json.loads(kube.kubectl("get", "kubevirt", "kubevirt", "-n", "kubevirt", "-o", "json").stdout)
            assert kv["spec"]["configuration"]["commonInstancetypesDeployment"] == {"enabled": False}
        finally:
            _uninstall(kube)


def test_install_refuses_a_cluster_where_kubevirt_is_installed(kube, webhook_certs):
    foreign = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "virtualmachines.kubevirt.io", "labels": {"kubevirt.io": ""}},
               "spec": {"group": "kubevirt.io", "scope": "Namespaced",
                        "names": {"kind": "VirtualMachine", "plural": "virtualmachines", "singular": "virtualmachine"},
                        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                            "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    kube.kubectl("create", "-f", "-", input=json.dumps(foreign))
    try:
        proc = run_cli(kube, "install", "--kubeconfig", str(kube.kubeconfig), "--webhook-url",
                       "https://127.0.0.1:9", "--ca-bundle", str(webhook_certs.ca), check=False)
        assert proc.returncode == 1
        assert proc.stdout == ""
        assert proc.stderr == ("error: KubeVirt already serves these webhooks: customresourcedefinition "
                               "virtualmachines.kubevirt.io exists and is not managed by instancetype\n")
        assert _names(kube, "crd", "-l", LABEL) == []
        # uninstall leaves what is not ours alone
        assert _uninstall(kube) == ""
        assert _names(kube, "crd", "virtualmachines.kubevirt.io") == \
            ["customresourcedefinition.apiextensions.k8s.io/virtualmachines.kubevirt.io"]
    finally:
        kube.kubectl("delete", "crd", "virtualmachines.kubevirt.io", "--wait=true", "--timeout=60s")
    eventually(lambda: not _names(kube, "crd", "virtualmachines.kubevirt.io"), 60, what="KubeVirt's VM CRD to go")


def test_unreachable_cluster_and_bad_flags_are_one_line(kube, tmp_path, webhook_certs):
    config = tmp_path / "kubeconfig"
    config.write_text(kube.kubeconfig.read_text().replace(kube.server, "https://127.0.0.1:1"))
    for args, expected in [
        (("install", "--kubeconfig", str(config), "--webhook-url", "https://127.0.0.1:8443",
          "--ca-bundle", str(webhook_certs.ca)), "error: cannot reach the API server https://127.0.0.1:1: "),
        (("uninstall", "--kubeconfig", str(config)), "error: cannot reach the API server https://127.0.0.1:1: "),
        (("install", "--kubeconfig", str(kube.kubeconfig), "--context", "nope", "--webhook-url",
          "https://127.0.0.1:8443", "--ca-bundle", str(webhook_certs.ca)), "error: invalid --kubeconfig "),
        (("install", "--kubeconfig", str(kube.kubeconfig), "--webhook-url", "https://127.0.0.1:8443"),
         "error: --ca-bundle is required"),
        (("install", "--kubeconfig", str(kube.kubeconfig), "--webhook-url", "https://127.0.0.1:8443",
          "--ca-bundle", str(config)), f"error: --ca-bundle {config}: not a PEM certificate bundle"),
        (("install", "--kubeconfig", str(kube.kubeconfig), "--namespace", "Bad_NS", "--webhook-url",
          "https://127.0.0.1:8443", "--ca-bundle", str(webhook_certs.ca)), 'error: invalid --namespace "Bad_NS"'),
    ]:
        proc = run_cli(kube, *args, check=False)
        assert proc.returncode == 1, args
        assert proc.stderr.startswith(expected) and proc.stderr.count("\n") == 1, proc.stderr
        assert "Traceback" not in proc.stderr


def test_a_user_without_permission_gets_the_api_servers_refusal_in_one_line(kube, webhook_certs):
    from tests.kube.cluster import USERS

    config = kube.kubeconfig_for(USERS[0])
    for args in (("install", "--kubeconfig", str(config), "--webhook-url", "https://127.0.0.1:9",
                  "--ca-bundle", str(webhook_certs.ca)), ("uninstall", "--kubeconfig", str(config))):
        proc = run_cli(kube, *args, check=False)
        assert proc.returncode == 1 and proc.stdout == ""
        assert proc.stderr.startswith("error: get ") and proc.stderr.count("\n") == 1
        assert f'is forbidden: User "{USERS[0]}" cannot get resource' in proc.stderr
