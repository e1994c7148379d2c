"""Cluster mode under hostile input (issue 30), against a real kube-apiserver with the real
kubectl: `instancetype install`, `instancetype serve` (a process, short read timeouts) and
`instancetype controller`. A VM nested 2,000 levels deep; every malformed AdmissionReview on
every webhook path straight at `serve`; the VMI's finalizers, labels and annotations once;
stalled connections closed while the API server's reviews are answered; small VMs admitted while
a huge one is held in an in-process `serve`."""
from __future__ import annotations

import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading

import pytest

from instancetype.api import kinds
from instancetype.controller import Cluster
from tests.webhook.test_hostile_input import MALFORMED, _closed_by_server

from .controller_env import SRC, Controllers, get_json, release_vmis, until
from .test_controller import CMEDIUM, FEDORA_PREF, FEDORA_VM

pytestmark = pytest.mark.cluster

READ_TIMEOUT = 1.0        # serve's --read-timeout and --idle-timeout here (the defaults are 10 and 30 s)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(kube) -> dict:
    env = kube.env()
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _cli(kube, *args):
    return subprocess.run([sys.executable, "-m", "instancetype", *args], env=_env(kube), capture_output=True,
                          text=True, timeout=300)


class Serve:
    def __init__(self, kube, certs, port: int, log):
        self.kube, self.certs, self.port, self.log = kube, certs, port, log
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log, "ab") as f:
            self.proc = self.kube.popen(
                [sys.executable, "-m", "instancetype", "serve", "--kubeconfig", str(self.kube.kubeconfig),
                 "--bind-address", "127.0.0.1", "--secure-port", str(self.port), "--tls-cert-file",
                 str(self.certs.cert), "--tls-private-key-file", str(self.certs.key),
                 "--read-timeout", str(READ_TIMEOUT), "--idle-timeout", str(READ_TIMEOUT)],
                env=_env(self.kube), stdout=f, stderr=subprocess.STDOUT)
        until(lambda: "ready" in self.text().splitlines() or self.proc.poll() is not None, what="serve ready")
        assert self.proc.poll() is None, self.text()

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@pytest.fixture(scope="module")
def served(kube, webhook_certs, tmp_path_factory):
    port = _free_port()
    r = _cli(kube, "install", "--kubeconfig", str(kube.kubeconfig), "--webhook-url", f"https://127.0.0.1:{port}",
             "--ca-bundle", str(webhook_certs.ca))
    assert r.returncode == 0, r.stderr
    serve = Serve(kube, webhook_certs, port, tmp_path_factory.mktemp("serve") / "serve.log")
    try:
        serve.start()
        yield serve
    finally:
        release_vmis(kube)
        print("--- serve.log\n" + "\n".join(serve.text().splitlines()[-30:]))
        serve.stop()
        _cli(kube, "uninstall", "--kubeconfig", str(kube.kubeconfig))


@pytest.fixture
def controllers(kube, tmp_path):
    c = Controllers(kube, tmp_path)
    try:
        yield c
    finally:
        c.stop_all()
        release_vmis(kube)      # no controller lets their finalizers go now: the namespace could not go
        print(c.tails())


def _deep_vm_text(name: str, depth: int, run_strategy: str = "Halted") -> str:
    """A VM whose `spec.template.metadata.x` nests so that the object is `depth` levels deep
    (JSON text: Python's encoder recurses)."""
    vm = json.loads(json.dumps(FEDORA_VM))
    vm["metadata"] = {"name": name}
    vm["spec"]["runStrategy"] = run_strategy
    del vm["spec"]["instancetype"], vm["spec"]["preference"]
    vm["spec"]["template"]["spec"]["domain"]["resources"] = {"requests": {"memory": "1Gi"}}
    vm["spec"]["template"]["metadata"] = {"x": "@@"}
    inner = depth - 4          # object, spec, template, metadata: the value of x starts at level 5
    return json.dumps(vm).replace('"@@"', '{"a":' * (inner - 1) + "{}" + "}" * (inner - 1))


def _depth_of(text: str) -> int:
    depth = best = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
            best = max(best, depth)
        elif ch in "}]":
            depth -= 1
    return best


def test_a_vm_2000_levels_deep_is_created_with_kubectl_and_admitted_as_kubevirt_would(
        kube, namespace, served, controllers):
    text = _deep_vm_text("deep", 2000, run_strategy="Always")
    r = kube.kubectl("create", "-n", namespace, "-f", "-", input=text, check=False)
    assert r.returncode == 0, r.stderr
    stored = kube.kubectl("get", "-n", namespace, "vm/deep", "-o", "json").stdout
    assert _depth_of(stored) >= 2000
    # the VM mutator's defaults are there: the review was answered, not failed open or refused
    arch = kube.kubectl("get", "-n", namespace, "vm/deep", "-o", "jsonpath={.spec.template.spec.architecture}")
    assert arch.stdout == "amd64"
    # and the controller, reading it from its informer, starts it
    controllers.start()
    until(lambda: kube.kubectl("get", "-n", namespace, "vm/deep", "-o", "jsonpath={.status.printableStatus}")
          .stdout == "Running", what="the deep VM running")
    assert "Traceback" not in served.text() and "RecursionError" not in served.text()


def test_every_malformed_review_on_every_path_is_a_400_and_no_traceback(served, webhook_certs):
    ctx = ssl.create_default_context(cafile=str(webhook_certs.ca))
    import http.client

    before = served.text()
    for name, body in MALFORMED:
        for hook in kinds.WEBHOOKS:
            conn = http.client.HTTPSConnection("127.0.0.1", served.port, context=ctx, timeout=60)
            try:
                conn.request("POST", hook.path, body=body, headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                text = resp.read()
            finally:
                conn.close()
            assert resp.status == 400, (name, hook.path, resp.status, text[:200])
            assert text.count(b"\n") == 1, (name, text[:200])
    after = served.text()[len(before):]
    assert "Traceback" not in after and "Error handling request" not in after, after[-2000:]


def test_the_vmi_carries_each_finalizer_label_and_annotation_once(kube, namespace, served, controllers, tmp_path):
    kube.kubectl("apply", "-n", namespace, "-f", "-",
                 input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [CMEDIUM, FEDORA_PREF, FEDORA_VM]}))
    controllers.start()
    until(lambda: kube.kubectl("get", "-n", namespace, "vmi/fedora", check=False).returncode == 0,
          what="the VMI")
    vmi = get_json(kube, "-n", namespace, "vmi/fedora")
    finalizers = vmi["metadata"]["finalizers"]
    assert finalizers == ["kubevirt.io/virtualMachineControllerFinalize", "kubevirt.io/foregroundDeleteVirtualMachine"]
    with Cluster.open(str(tmp_path / "state.db"), catalog=False) as c:
        for obj in (CMEDIUM, FEDORA_PREF, FEDORA_VM):
            c.apply(obj)
        embedded = c.get("VirtualMachineInstance", "fedora")
    assert embedded["metadata"]["finalizers"] == finalizers
    assert vmi["spec"] == embedded["spec"]
    for field in ("labels", "annotations"):
        assert vmi["metadata"].get(field) == embedded["metadata"].get(field), field


def test_stalled_connections_are_closed_while_the_api_servers_reviews_are_answered(
        kube, namespace, served, webhook_certs):
    ctx = ssl.create_default_context(cafile=str(webhook_certs.ca))

    def tls():
        raw = socket.create_connection(("127.0.0.1", served.port), timeout=10)
        return ctx.wrap_socket(raw, server_hostname="127.0.0.1")

    no_handshake = socket.create_connection(("127.0.0.1", served.port), timeout=10)
    idle = tls()
    half_headers = tls()
    half_headers.sendall(b"POST /virtualmachines-validate HTTP/1.1\r\nHost: x\r\nContent-Le")
    half_body = tls()
    half_body.sendall(b"POST /virtualmachines-validate HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n{\"a\":")
    stalled = [no_handshake, idle, half_headers, half_body]
    try:
        for i in range(3):      # the API server's reviews meanwhile (its own connections)
            r = kube.kubectl("create", "-n", namespace, "-f", "-", input=_deep_vm_text(f"vm-{i}", 10), check=False)
            assert r.returncode == 0, r.stderr
        for sock in stalled:
            assert _closed_by_server(sock)
    finally:
        for sock in stalled:
            sock.close()
    r = kube.kubectl("create", "-n", namespace, "-f", "-", input=_deep_vm_text("after", 10), check=False)
    assert r.returncode == 0, r.stderr


def test_small_vms_are_admitted_while_a_huge_one_is_held_in_serve(kube, namespace, webhook_certs, monkeypatch):
    """An in-process `serve` (its admission of the huge VM held until the small VMs are created):
    the real API server calls it for every create; the small ones cannot be answered first unless
    admission runs beside the huge one, off the event loop."""
    from instancetype.webhook import review
    from instancetype.webhook import server as server_module
    from tests.webhook.test_serve_https import Cache, serving

    release, entered = threading.Event(), threading.Event()
    real_answer = review.answer

    def answer(path, request, **kw):
        if (request.get("name") or (request.get("object") or {}).get("metadata", {}).get("name")) == "huge":
            entered.set()
            release.wait(120)
        return real_answer(path, request, **kw)

    monkeypatch.setattr(server_module.reviews, "answer", answer)
    huge = json.loads(_deep_vm_text("huge", 10))
    spec = huge["spec"]["template"]["spec"]
    spec["domain"]["devices"]["disks"] = [{"name": f"d{i}", "disk": {"bus": "virtio"}} for i in range(2_000)]
    spec["volumes"] = [{"name": f"d{i}", "containerDisk": {"image": "quay.io/containerdisks/fedora:40"}}
                       for i in range(2_000)]
    with serving(Cache([]), webhook_certs.cert, webhook_certs.key) as server:
        r = _cli(kube, "install", "--kubeconfig", str(kube.kubeconfig), "--webhook-url",
                 f"https://127.0.0.1:{server.port}", "--ca-bundle", str(webhook_certs.ca))
        assert r.returncode == 0, r.stderr
        try:
            done = {}
            big = threading.Thread(target=lambda: done.setdefault("huge", kube.kubectl(
                "create", "-n", namespace, "-f", "-", input=json.dumps(huge), check=False, timeout=300)))
            big.start()
            assert entered.wait(120), "the huge VM's review did not reach serve"
            for i in range(3):
                r = kube.kubectl("create", "-n", namespace, "-f", "-", input=_deep_vm_text(f"small-{i}", 10),
                                 check=False)
                assert r.returncode == 0, r.stderr
            assert "huge" not in done          # still in flight: the small ones were answered first
            release.set()
            big.join(300)
            assert done["huge"].returncode == 0, done["huge"].stderr
        finally:
            release.set()
            release_vmis(kube)
            _cli(kube, "uninstall", "--kubeconfig", str(kube.kubeconfig))
