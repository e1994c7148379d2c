"""The whole cluster mode: `instancetype install`, `instancetype serve` (the webhooks) and
`instancetype controller`, driven with the real kubectl. Seed 001's VMI through KubeVirt's
admission equals the embedded store's; with the webhook server down the API server fails
closed, and the controller retries until it is back, then converges."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

import pytest

from instancetype.controller import Cluster

from .controller_env import SRC, Controllers, get_json, release_vmis, until
from .test_controller import CMEDIUM, FEDORA_PREF, FEDORA_VM


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    def __init__(self, kube, certs, port: int, log):
        self.kube, self.certs, self.port, self.log = kube, certs, port, log
        self.proc: subprocess.Popen | None = None
        self.launches = 0

    def start(self) -> None:
        env = self.kube.env()
        env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
        with open(self.log, "ab") as f:
            self.proc = self.kube.popen([sys.executable, "-m", "instancetype", "serve", "--kubeconfig",
                                         str(self.kube.kubeconfig), "--bind-address", "127.0.0.1", "--secure-port",
                                         str(self.port), "--tls-cert-file", str(self.certs.cert),
                                         "--tls-private-key-file", str(self.certs.key)],
                                        env=env, stdout=f, stderr=subprocess.STDOUT)
        self.launches += 1
        until(lambda: self.log.read_text(errors="replace").splitlines().count("ready") >= self.launches,
              what="serve ready")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def _cli(kube, *args):
    env = kube.env()
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "instancetype", *args], env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def stack(kube, webhook_certs, tmp_path):
    """install, then `serve` (its webhooks admit the VMs); controllers started by the test."""
    port = _free_port()
    r = _cli(kube, "install", "--kubeconfig", str(kube.kubeconfig), "--webhook-url", f"https://127.0.0.1:{port}",
             "--ca-bundle", str(webhook_certs.ca))
    assert r.returncode == 0, r.stderr
    serve = Serve(kube, webhook_certs, port, tmp_path / "serve.log")
    controllers = Controllers(kube, tmp_path)
    try:
        serve.start()
        yield serve, controllers
    finally:
        controllers.stop_all()
        release_vmis(kube)
        print(controllers.tails())
        print(f"--- serve.log (exit {serve.proc.poll() if serve.proc else '-'})\n"
              + "\n".join((tmp_path / "serve.log").read_text(errors="replace").splitlines()[-40:]))
        serve.stop()
        _cli(kube, "uninstall", "--kubeconfig", str(kube.kubeconfig))


def _apply(kube, namespace, *objs, check=True):
    return kube.kubectl("apply", "-n", namespace, "-f", "-", check=check,
                        input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objs)}))


def _running(kube, namespace, names):
    vms = get_json(kube, "-n", namespace, "vms")["items"]
    up = {v["metadata"]["name"] for v in vms if (v.get("status") or {}).get("printableStatus") == "Running"}
    vmis = {v["metadata"]["name"] for v in get_json(kube, "-n", namespace, "vmis")["items"]}
    return set(names) <= up and set(names) <= vmis


def test_seed_001_through_kubevirts_admission(kube, namespace, stack, tmp_path):
    serve, controllers = stack
    controllers.start()
    _apply(kube, namespace, CMEDIUM, FEDORA_PREF, FEDORA_VM)
    until(lambda: _running(kube, namespace, ["fedora"]), what="fedora running")
    vm = get_json(kube, "-n", namespace, "vm/fedora")
    # the VM mutator filled the matchers' kinds; the controller pinned both revisions
    assert vm["spec"]["instancetype"]["revisionName"].startswith("fedora-cmedium-")
    assert vm["spec"]["preference"]["revisionName"].startswith("fedora-fedora-")
    vmi = get_json(kube, "-n", namespace, "vmi/fedora")
    with Cluster.open(str(tmp_path / "state.db"), catalog=False) as c:
        for obj in (CMEDIUM, FEDORA_PREF, FEDORA_VM):
            c.apply(obj)
        embedded = c.get("VirtualMachineInstance", "fedora")
    assert vmi["spec"] == embedded["spec"]


def test_webhook_server_down_fails_closed_and_the_controller_converges_when_it_is_back(kube, namespace, stack):
    serve, controllers = stack
    names = [f"vm-{i}" for i in range(5)]
    vms = []
    for name in names:
        vm = json.loads(json.dumps(FEDORA_VM))
        vm["metadata"]["name"] = name
        vms.append(vm)
    _apply(kube, namespace, CMEDIUM, FEDORA_PREF, *vms)      # stored, admitted; no controller yet
    serve.stop()
    refused = _apply(kube, namespace, {**vms[0], "metadata": {"name": "late"}}, check=False)
    assert refused.returncode != 0 and "failed calling webhook" in refused.stderr      # fail closed
    controller = controllers.start()
    # the controller meets the refusals (its matcher patch, the VMI create) and backs off: each VM's
    # failed reconcile is a retry line in its log (-v)
    until(lambda: all(f"VirtualMachine {namespace}/{name}: " in controllers.log(controller) for name in names),
          what="the controller to meet the refusals")
    assert not get_json(kube, "-n", namespace, "vmis")["items"]
    serve.start()
    until(lambda: _running(kube, namespace, names), timeout=180, what="every VM running once serve is back")
    revs = get_json(kube, "-n", namespace, "controllerrevisions", "-l", "!instancetype.kubevirt.io/vm-start-revision")["items"]     # the pins
    assert len(revs) == 2 * len(names)
