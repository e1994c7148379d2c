"""The command line on a real cluster (`--kubeconfig`), beside the embedded store and the real kubectl.

The module installs the system once (`instancetype install`, webhooks answered by a real
`instancetype serve`) and uninstalls at the end. The representative commands (apply, get,
describe, label, annotate, patch, delete) run against both stores and must print the same lines;
on the cluster they must also print what the real kubectl prints for the same request.
"""
from __future__ import annotations

import json
import signal
import socket
import ssl
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.interrupt import interruptible_children
from tests.waits import eventually

from ..cli._helpers import INSTANCETYPE, VM

RUN_TIMEOUT = 180


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(kube, *args: str, stdin: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "instancetype", *args], input=stdin, capture_output=True,
                          text=True, env=env or kube.env(), timeout=RUN_TIMEOUT)


@pytest.fixture(scope="module")
def installed(kube, webhook_certs, tmp_path_factory):
    port = _free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with open(log, "w") as out:
        serve = kube.popen([sys.executable, "-m", "instancetype", "serve", "--kubeconfig", kube.kubeconfig,
                            "--secure-port", str(port), "--tls-cert-file", webhook_certs.cert,
                            "--tls-private-key-file", webhook_certs.key], stdout=out, stderr=subprocess.STDOUT,
                           env=kube.env())
    try:
        ctx = ssl.create_default_context(cafile=str(webhook_certs.ca))

        def answers(path: str) -> bool:
            try:
                with urllib.request.urlopen(f"https://127.0.0.1:{port}{path}", context=ctx, timeout=5) as r:
                    return r.status == 200
            except OSError:
                return False

        def wait_for(path: str) -> None:
            def up() -> bool:
                assert serve.poll() is None, log.read_text()[-3000:]
                return answers(path)
            eventually(up, 180, what=f"serve answering {path}")

        # serve's informers need the CRDs that install applies, and install's own objects need the
        # webhooks: serve listens first, install runs, serve becomes ready, install runs again.
        wait_for("/healthz")
        args = ("install", "--kubeconfig", str(kube.kubeconfig), "--webhook-url", f"https://127.0.0.1:{port}",
                "--ca-bundle", str(webhook_certs.ca))
        cli(kube, *args)
        wait_for("/readyz")
        p = cli(kube, *args)
        assert p.returncode == 0, p.stderr
        yield kube
    finally:
        cli(kube, "uninstall", "--kubeconfig", str(kube.kubeconfig))
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()


class Store:
    """One store for the same command lines: the embedded state file, or the cluster."""

    def __init__(self, which: str, kube, namespace: str, tmp_path: Path):
        self.which, self.kube, self.namespace = which, kube, namespace
        self.state = tmp_path / "state.db"

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        where = ["--kubeconfig", str(self.kube.kubeconfig)] if self.which == "cluster" else ["--state", str(self.state)]
        return cli(self.kube, *where, *args, stdin=stdin)


@pytest.fixture(params=["embedded", "cluster"])
def store(request, installed, namespace, tmp_path):
    s = Store(request.param, installed, namespace, tmp_path)
    if request.param == "embedded":
        assert s.run("apply", "-f", "-", stdin=_ns_doc(namespace)).returncode == 0
    return s


def _ns_doc(ns: str) -> str:
    return f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}\n"


def test_apply_get_describe_label_patch_delete_on_both_stores(store):
    ns = store.namespace
    p = store.run("apply", "-n", ns, "-f", "-", stdin=INSTANCETYPE + "---\n" + VM)
    assert (p.returncode, p.stdout) == (0, "virtualmachineinstancetype.instancetype.kubevirt.io/small created\n"
                                           "virtualmachine.kubevirt.io/vm1 created\n"), p.stderr
    p = store.run("apply", "-n", ns, "-f", "-", stdin=VM)
    assert p.stdout == "virtualmachine.kubevirt.io/vm1 unchanged\n"
    p = store.run("get", "vm", "-n", ns)
    assert p.stdout.splitlines()[0].split()[:2] == ["NAME", "AGE"] and p.stdout.splitlines()[1].split()[0] == "vm1"
    p = store.run("get", "vmf", "small", "-n", ns, "-o", "jsonpath={.spec.cpu.guest}")
    assert p.stdout == "1"
    p = store.run("describe", "vm", "vm1", "-n", ns)
    assert p.returncode == 0 and p.stdout.startswith("Name:         vm1\nNamespace:    " + ns + "\n")
    assert store.run("label", "vm", "vm1", "-n", ns, "a=b").stdout == "virtualmachine.kubevirt.io/vm1 labeled\n"
    p = store.run("label", "vm", "vm1", "-n", ns, "a=c")
    assert (p.returncode, p.stderr) == (1, "error: 'a' already has a value (b), and --overwrite is false\n")
    assert store.run("annotate", "vm", "vm1", "-n", ns, "n=1").stdout == "virtualmachine.kubevirt.io/vm1 annotated\n"
    p = store.run("patch", "vm", "vm1", "-n", ns, "--type", "merge", "-p", '{"metadata":{"labels":{"a":"z"}}}')
    assert p.stdout == "virtualmachine.kubevirt.io/vm1 patched\n", p.stderr
    p = store.run("patch", "vm", "vm1", "-n", ns, "--type", "merge", "-p", '{"metadata":{"labels":{"a":"z"}}}')
    assert p.stdout == "virtualmachine.kubevirt.io/vm1 patched (no change)\n"
    p = store.run("patch", "vm", "vm1", "-n", ns, "-p", '{"spec":{}}')
    assert p.returncode == 1 and p.stderr.startswith("error: application/strategic-merge-patch+json is not supported")
    assert store.run("get", "vm", "-n", ns, "-l", "a=z", "-o", "name").stdout == "virtualmachine.kubevirt.io/vm1\n"
    p = store.run("get", "vm", "nope", "-n", ns)
    assert (p.returncode, p.stderr) == (1, 'Error from server (NotFound): virtualmachines.kubevirt.io "nope" not found\n')
    p = store.run("delete", "vm", "vm1", "-n", ns)
    assert (p.returncode, p.stdout) == (0, f'virtualmachine.kubevirt.io "vm1" deleted from {ns} namespace\n')


RUN_STRATEGY_REFUSED = "The request is invalid: spec.runStrategy: Invalid RunStrategy (Bogus)\n"


def test_admission_refuses_alike_on_both_stores(store):
    ns = store.namespace
    assert store.run("apply", "-n", ns, "-f", "-", stdin=INSTANCETYPE + "---\n" + VM).returncode == 0
    p = store.run("patch", "vm", "vm1", "-n", ns, "--type", "merge", "-p", '{"spec":{"runStrategy":"Bogus"}}')
    assert (p.returncode, p.stdout, p.stderr) == (1, "", RUN_STRATEGY_REFUSED)
    p = store.run("label", "vm", "vm1", "-n", ns, "a=b")       # the refused patch changed nothing
    assert p.stdout == "virtualmachine.kubevirt.io/vm1 labeled\n"
    p = store.run("apply", "-n", ns, "-f", "-", stdin=VM.replace("vm1", "vm2").replace("Halted", "Bogus"))
    assert (p.returncode, p.stdout, p.stderr) == (1, "", RUN_STRATEGY_REFUSED)
    p = store.run("get", "vm", "vm2", "-n", ns)
    assert p.stderr == 'Error from server (NotFound): virtualmachines.kubevirt.io "vm2" not found\n'


def test_same_lines_as_kubectl(installed, namespace, tmp_path):
    """The same sequence, ours in one namespace and the real kubectl's in another: the same lines."""
    kube, ours_ns = installed, namespace
    theirs_ns = namespace + "-kubectl"
    kube.kubectl("create", "namespace", theirs_ns)
    try:
        manifest = tmp_path / "m.yaml"
        manifest.write_text(INSTANCETYPE + "---\n" + VM)
        bogus = tmp_path / "bogus.yaml"
        bogus.write_text(VM.replace("vm1", "vm2").replace("Halted", "Bogus"))
        for args in (["apply", "-f", str(manifest)], ["apply", "-f", str(manifest)],
                     ["label", "vm", "vm1", "x=1"], ["label", "vm", "vm1", "x=1"], ["label", "vm", "vm1", "x=2"],
                     ["label", "vm", "vm1", "x=2", "--overwrite"], ["label", "vm", "vm1", "x-"],
                     ["annotate", "vm", "vm1", "y=1"], ["annotate", "vm", "vm1", "y=2"],
                     ["annotate", "vm", "vm1", "y=2", "--overwrite"],
                     ["patch", "vm", "vm1", "--type", "merge", "-p", '{"metadata":{"labels":{"p":"1"}}}'],
                     ["patch", "vm", "vm1", "--type", "merge", "-p", '{"metadata":{"labels":{"p":"1"}}}'],
                     ["patch", "vm", "vm1", "--type", "json", "-p", '[{"op":"remove","path":"/metadata/labels/p"}]'],
                     ["patch", "vm", "vm1", "-p", '{"metadata":{"labels":{"p":"1"}}}'],
                     ["patch", "vm", "vm1", "--type", "merge", "-p", '{"spec":{"runStrategy":"Bogus"}}'],
                     ["apply", "-f", str(bogus)],
                     ["get", "vm", "vm1", "-o", "jsonpath={.metadata.name} {.spec.instancetype.name}"],
                     ["get", "vmf", "-o", "jsonpath={range .items[*]}{.metadata.name}{\"\\n\"}{end}"],
                     ["get", "vmf", "-o", "custom-columns=NAME:.metadata.name,CPU:.spec.cpu.guest,X:.nothing"],
                     ["get", "vm", "-o", "name"], ["get", "vm", "nope"],
                     ["delete", "vm", "vm1"], ["delete", "vm", "vm1"]):
            mine = cli(kube, "--kubeconfig", str(kube.kubeconfig), *args, "-n", ours_ns)
            real = kube.kubectl(*args, "-n", theirs_ns, check=False)
            # (kubectl 1.36's delete names the namespace: `deleted from <ns> namespace`)
            ours = (mine.returncode, mine.stdout.replace(ours_ns, theirs_ns), mine.stderr.replace(ours_ns, theirs_ns))
            assert ours == (real.returncode, real.stdout, real.stderr), args
    finally:
        kube.kubectl("delete", "namespace", theirs_ns, "--wait=false", check=False)


def test_watch_on_a_cluster(installed, namespace):
    kube, ns = installed, namespace
    assert cli(kube, "--kubeconfig", str(kube.kubeconfig), "apply", "-n", ns, "-f", "-",
               stdin=INSTANCETYPE).returncode == 0
    with interruptible_children():
        p = subprocess.Popen([sys.executable, "-m", "instancetype", "--kubeconfig", str(kube.kubeconfig), "get",
                              "vmf", "-n", ns, "-w", "-o", "name"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=kube.env())
    try:
        assert p.stdout.readline() == "virtualmachineinstancetype.instancetype.kubevirt.io/small\n"
        kube.kubectl("label", "vmf", "small", "-n", ns, "w=1")
        assert p.stdout.readline() == "virtualmachineinstancetype.instancetype.kubevirt.io/small\n"
    finally:
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
    assert "Traceback" not in err


def test_unreachable_and_unauthorised_are_one_line(installed, tmp_path):
    kube = installed
    dead = kube.write_kubeconfig("admin", tmp_path / "dead.kubeconfig", server=f"https://127.0.0.1:{_free_port()}")
    p = cli(kube, "--kubeconfig", str(dead), "get", "vm")
    assert p.returncode == 1 and len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr
    assert p.stderr.startswith("error: cannot reach the Kubernetes API server at https://127.0.0.1:"), p.stderr
    bad = tmp_path / "bad.kubeconfig"
    bad.write_text(Path(kube.kubeconfig).read_text().replace(kube.tokens["admin"], "not-a-token"))
    p = cli(kube, "--kubeconfig", str(bad), "get", "vm")
    assert p.returncode == 1 and "401 Unauthorized" in p.stderr and len(p.stderr.splitlines()) == 1, p.stderr
    p = cli(kube, "--kubeconfig", str(kube.kubeconfig_for("alice")), "get", "vm", "-n", "default")
    real = kube.kubectl("get", "vm", "-n", "default", user="alice", check=False)
    assert (p.returncode, p.stderr) == (1, real.stderr)
    p = cli(kube, "--kubeconfig", str(tmp_path / "missing"), "get", "vm")
    assert p.returncode == 1 and len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr


def test_a_cluster_is_never_chosen_silently(installed, tmp_path):
    kube = installed
    env = kube.env()        # $KUBECONFIG names the cluster, yet without an option the embedded store is used
    env["INSTANCETYPE_STATE"] = str(tmp_path / "s.db")
    p = cli(kube, "get", "ns", "-o", "name", env=env)
    assert p.returncode == 0 and "namespace/kube-system" not in p.stdout.split()
    p = cli(kube, "--cluster", "get", "ns", "-o", "name", env=env)
    assert "namespace/kube-system" in p.stdout.split(), p.stderr


def test_virtctl_verbs_without_the_subresource_api(installed, namespace):
    kube, ns = installed, namespace
    assert cli(kube, "--kubeconfig", str(kube.kubeconfig), "apply", "-n", ns, "-f", "-",
               stdin=INSTANCETYPE + "---\n" + VM).returncode == 0
    p = cli(kube, "--kubeconfig", str(kube.kubeconfig), "start", "vm1", "-n", ns)
    assert p.returncode == 1 and len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr


def test_image_upload_on_a_cluster_creates_the_claims_and_says_the_bytes_are_not_sent(installed, namespace,
                                                                                      tmp_path):
    kube, ns = installed, namespace
    image = tmp_path / "disk.img"
    image.write_bytes(b"\0" * 4096)
    p = cli(kube, "--kubeconfig", str(kube.kubeconfig), "image-upload", "dv", "cirros", "-n", ns, "--size", "1Gi",
            "--image-path", str(image), "--default-instancetype", "u1.medium",
            "--default-instancetype-kind", "VirtualMachineClusterInstancetype", "--default-preference", "cirros",
            "--default-preference-kind", "VirtualMachineClusterPreference")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stdout == f"PVC {ns}/cirros not found \nDataVolume {ns}/cirros created\n"
    assert p.stderr.splitlines() == [f"error: the image bytes were not sent: no CDI upload proxy answers on this cluster "
                                     f"(the DataVolume {ns}/cirros is created and waits for them)"]
    labels = json.loads(kube.kubectl("get", "pvc", "cirros", "-n", ns, "-o", "jsonpath={.metadata.labels}").stdout)
    assert labels == {"app": "containerized-data-importer", "app.kubernetes.io/component": "storage",
                      "app.kubernetes.io/managed-by": "cdi-controller",
                      "instancetype.kubevirt.io/default-instancetype": "u1.medium",
                      "instancetype.kubevirt.io/default-instancetype-kind": "VirtualMachineClusterInstancetype",
                      "instancetype.kubevirt.io/default-preference": "cirros",
                      "instancetype.kubevirt.io/default-preference-kind": "VirtualMachineClusterPreference"}
    assert kube.kubectl("get", "dv", "cirros", "-n", ns, "-o", "name").stdout == \
        "datavolume.cdi.kubevirt.io/cirros\n"


def test_catalog_sync_describe_wait_on_a_cluster(installed, namespace):
    kube, ns = installed, namespace
    p = cli(kube, "--kubeconfig", str(kube.kubeconfig), "catalog", "sync", "--dry-run")
    assert (p.returncode, p.stdout) == (0, "catalogue up to date\n"), p.stderr     # install deployed it
    assert cli(kube, "--kubeconfig", str(kube.kubeconfig), "apply", "-n", ns, "-f", "-",
               stdin=INSTANCETYPE).returncode == 0
    p = cli(kube, "--kubeconfig", str(kube.kubeconfig), "describe", "vmf", "small", "-n", ns)
    assert p.stdout.startswith(f"Name:         small\nNamespace:    {ns}\n")
    p = cli(kube, "--kubeconfig", str(kube.kubeconfig), "wait", "vmf/small", "-n", ns, "--for=delete", "--timeout=1s")
    assert p.returncode == 1 and p.stderr == "error: timed out waiting for the condition on " \
                                             "virtualmachineinstancetypes/small\n"
