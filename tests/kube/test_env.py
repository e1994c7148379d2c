"""The cluster-mode test environment itself: the real API server, RBAC, the garbage collector,
a restart that keeps the data, the network-namespace variant, virtctl, lightkube."""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import lightkube
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import ConfigMap, Namespace

from tests.kube.cluster import USERS
from tests.waits import eventually


def _wait_gone(kube, *args: str, seconds: float = 90) -> bool:
    return bool(eventually(lambda: not kube.kubectl("get", *args, "--ignore-not-found", "-o", "name")
                           .stdout.strip(), seconds=seconds, interval=0.5, what=f"{args} gone"))


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
    eventually(lambda: kube.kubectl("get", "secrets", "-n", namespace, user=USERS[0],
                                    check=False).returncode == 0, seconds=30,
               what="the RoleBinding taking effect")
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
    # In two steps: while it is down a client gets a refused connection.
    kube.stop_apiserver()
    down = kube.kubectl("get", "configmap", "kept", "-n", namespace, check=False)
    assert down.returncode == 1 and "refused" in down.stderr
    kube.start_apiserver()
    assert kube.kubectl("get", "configmap", "kept", "-n", namespace, "-o", "name").stdout.strip() \
        == "configmap/kept"


def test_the_netns_cluster_answers_inside_its_namespace(kube_netns, netns_namespace):
    # A process started inside the namespace reaches the API server at the extra address.
    kubectl = shutil.which("kubectl")
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


def _apiservice_manifests(namespace: str, address: str, port: int, ca: Path) -> str:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "echo", "namespace": namespace},
               "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]}}
    # No kube-proxy: the aggregator routes to the endpoint itself (--enable-aggregator-routing),
    # which may not be a loopback address.
    slice_ = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
              "metadata": {"name": "echo", "namespace": namespace,
                           "labels": {"kubernetes.io/service-name": "echo"}},
              "addressType": "IPv4",
              "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
              "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}
    apiservice = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                  "metadata": {"name": "v1.echo.instancetype.test"},
                  "spec": {"group": "echo.instancetype.test", "version": "v1",
                           "service": {"namespace": namespace, "name": "echo", "port": 443},
                           "caBundle": base64.b64encode(ca.read_bytes()).decode(),
                           "groupPriorityMinimum": 1000, "versionPriority": 15}}
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [service, slice_, apiservice]})


def test_an_aggregated_api_server_in_the_netns_is_reached_through_the_api_server(
        kube_netns, netns_namespace, make_certs, tmp_path):
    address, port = kube_netns.netns.address, 8443
    # The aggregator verifies the serving certificate for the Service's DNS name.
    certs = make_certs(address, f"echo.{netns_namespace}.svc")
    log = open(tmp_path / "echo.log", "wb")
    server = kube_netns.popen([sys.executable, Path(__file__).with_name("echo_apiserver.py"), address,
                               port, certs.cert, certs.key, kube_netns.front_proxy_ca.cert],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        kube_netns.kubectl("apply", "-f", "-",
                           input=_apiservice_manifests(netns_namespace, address, port, certs.ca))
        kube_netns.kubectl("wait", "apiservice/v1.echo.instancetype.test",
                           "--for=condition=Available", "--timeout=60s")
        who = json.loads(kube_netns.kubectl("get", "--raw", "/apis/echo.instancetype.test/v1/whoami").stdout)
        # The API server authenticated the caller and passed it on with its front-proxy cert.
        assert who["user"] == "admin" and "system:masters" in who["groups"]
        assert who["proxyClient"] == "front-proxy-client"
        denied = kube_netns.kubectl("get", "--raw", "/apis/echo.instancetype.test/v1/whoami",
                                    user=USERS[0], check=False)
        assert denied.returncode == 1 and "Forbidden" in denied.stderr
    finally:
        kube_netns.kubectl("delete", "apiservice", "v1.echo.instancetype.test", "--ignore-not-found",
                           check=False)
        server.terminate()
        server.wait(timeout=10)
        log.close()


def test_a_failing_cluster_test_reports_the_component_logs(tmp_path):
    (tmp_path / "test_fails.py").write_text(
        "def test_fails(kube):\n    kube.kubectl('get', 'no-such-kind')\n")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "tests.kube.plugin", str(tmp_path / "test_fails.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": f"{root}:{root / 'src'}"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "KubectlError: kubectl get no-such-kind exited 1" in proc.stdout
    for component in ("etcd", "kube-apiserver", "kube-controller-manager"):
        assert f"==== {component} (running) " in proc.stdout
