"""The cluster-mode test environment itself: the real API server, RBAC, the garbage collector,
a restart that keeps the data, the network-namespace variant, virtctl, lightkube."""
from __future__ import annotations

import json
import time

import lightkube
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import ConfigMap, Namespace

from tests.kube.cluster import USERS


def _wait_gone(kube, *args: str, seconds: float = 90) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        proc = kube.kubectl("get", *args, "--ignore-not-found", "-o", "name")
        if not proc.stdout.strip():
            return True
        time.sleep(0.5)
    return False


def test_the_api_server_answers_kubectl(kube):
    version = json.loads(kube.kubectl("version", "-o", "json").stdout)
    assert version["serverVersion"]["gitVersion"] == "v1.35.4"
    names = kube.kubectl("get", "ns", "-o", "name").stdout.split()
    assert "namespace/default" in names and "namespace/kube-system" in names


def test_the_admin_kubeconfig_works_with_lightkube(kube, namespace):
    client = lightkube.Client(lightkube.KubeConfig.from_file(kube.kubeconfig))
    assert namespace in {ns.metadata.name for ns in client.list(Namespace)}
    client.create(ConfigMap(metadata=ObjectMeta(name="from-lightkube", namespace=namespace),
                            data={"k": "v"}))
    out = kube.kubectl("get", "configmap", "from-lightkube", "-n", namespace,
                       "-o", "jsonpath={.data.k}").stdout
    assert out == "v"


def test_an_unprivileged_token_is_refused_by_rbac(kube, namespace):
    proc = kube.kubectl("get", "secrets", "-n", namespace, user=USERS[0], check=False)
    assert proc.returncode == 1
    assert "Forbidden" in proc.stderr and f'User "{USERS[0]}"' in proc.stderr
    # Granting the permission lets the same user through.
    kube.kubectl("create", "role", "read-secrets", "--verb=list", "--resource=secrets", "-n", namespace)
    kube.kubectl("create", "rolebinding", "read-secrets", "--role=read-secrets",
                 f"--user={USERS[0]}", "-n", namespace)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if kube.kubectl("get", "secrets", "-n", namespace, user=USERS[0], check=False).returncode == 0:
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the RoleBinding did not take effect")
    assert kube.kubectl("get", "secrets", "-n", namespace, user=USERS[1], check=False).returncode == 1


def test_the_garbage_collector_deletes_what_an_owner_leaves(kube, namespace):
    kube.kubectl("create", "configmap", "owner", "-n", namespace)
    uid = kube.kubectl("get", "configmap", "owner", "-n", namespace,
                       "-o", "jsonpath={.metadata.uid}").stdout
    owned = {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "owned", "namespace": namespace, "ownerReferences": [
                 {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid}]}}
    kube.kubectl("apply", "-f", "-", input=json.dumps(owned))
    kube.kubectl("delete", "configmap", "owner", "-n", namespace, "--cascade=background")
    assert _wait_gone(kube, "configmap", "owned", "-n", namespace)


def test_a_deleted_namespace_goes_away(kube):
    kube.kubectl("create", "namespace", "t-goes-away")
    kube.kubectl("create", "configmap", "c", "-n", "t-goes-away")
    kube.kubectl("delete", "namespace", "t-goes-away", "--wait=false")
    assert _wait_gone(kube, "namespace", "t-goes-away")


def test_restart_apiserver_keeps_the_data(kube, namespace):
    kube.kubectl("create", "configmap", "kept", "-n", namespace, "--from-literal=k=v")
    kube.restart_apiserver()
    out = kube.kubectl("get", "configmap", "kept", "-n", namespace, "-o", "jsonpath={.data.k}").stdout
    assert out == "v"


def test_the_netns_cluster_answers_inside_its_namespace(kube_netns, netns_namespace):
    # A process started inside the namespace reaches the API server at the extra address.
    kubectl = __import__("shutil").which("kubectl")
    proc = kube_netns.run([kubectl, f"--kubeconfig={kube_netns.inner_kubeconfig}",
                           f"--cache-dir={kube_netns.workdir / 'inner-cache'}", "get", "ns",
                           netns_namespace, "-o", "name"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"namespace/{netns_namespace}"
    assert kube_netns.inner_server == f"https://{kube_netns.netns.address}:6443"
    # The test process reaches it through the forwarded port, with kubectl and lightkube.
    assert kube_netns.kubectl("get", "ns", netns_namespace, "-o", "name").stdout.strip() \
        == f"namespace/{netns_namespace}"
    client = lightkube.Client(lightkube.KubeConfig.from_file(kube_netns.kubeconfig))
    assert client.get(Namespace, netns_namespace).metadata.name == netns_namespace
    # The namespace has no interface but its loopback.
    links = kube_netns.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert [line.split(":")[1].strip() for line in links.splitlines()] == ["lo"]


def test_virtctl_runs(kube):
    proc = kube.virtctl("version", "--client")
    assert 'GitVersion:"v1.7.0"' in proc.stdout
