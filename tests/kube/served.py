"""`instancetype install` + `instancetype serve` on the test cluster, for a test module.

    with installed_and_served(kube, webhook_certs) as served:
        served.url          https://127.0.0.1:PORT (what install registered)
        served.stop() / served.start()   stop or start `serve` (same port)
        served.denials()    the JSON log lines of refused requests so far
        served.kubeconfig   the admin kubeconfig (str)

`install` runs first (CRDs, RBAC, the KubeVirt object, the catalogue, then the webhook
configurations pointing at a port chosen for `serve`); `serve` starts and the block begins once
it says `ready` (informer caches synced). On exit: `uninstall`, then `serve` stops.

    with subresource_api_served(kube_netns, workdir, controller=True) as kube:
        ...

the same inside kube_netns's network namespace, as the ServiceAccount install made, with the
APIService `v1.subresources.kubevirt.io` (virtctl's start/stop/restart/expand) Available; with
`controller=True` an `instancetype controller` process runs beside `serve`.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import yaml

READY_TIMEOUT_S = 60.0
ROOT = Path(__file__).resolve().parents[2]
SYSTEM_NS = "instancetype-system"
SUBRESOURCE_PORT = 9443


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_cli(kube, *args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "instancetype", *args], env=kube.env(), capture_output=True,
                          text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"instancetype {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    return proc


class Served:
    def __init__(self, kube, certs, port: int):
        self.kube, self.certs, self.port = kube, certs, port
        self.url = f"https://127.0.0.1:{port}"
        self.kubeconfig = str(kube.kubeconfig)
        self.proc: subprocess.Popen | None = None
        self.lines: list[str] = []
        self._ready = threading.Event()

    def start(self) -> None:
        argv = [sys.executable, "-m", "instancetype", "serve", "--kubeconfig", str(self.kube.inner_kubeconfig),
                "--bind-address", "127.0.0.1", "--secure-port", str(self.port),
                "--tls-cert-file", str(self.certs.cert), "--tls-private-key-file", str(self.certs.key)]
        self._ready.clear()
        self.proc = self.kube.popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not self._ready.wait(0.1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError("instancetype serve did not become ready:\n" + "\n".join(self.lines[-20:]))

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stderr:
            line = line.rstrip("\n")
            self.lines.append(line)
            if line == "ready":
                self._ready.set()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(15)
        self.proc = None

    def denials(self) -> list[dict]:
        return [json.loads(line) for line in self.lines if line.startswith("{")]


@contextlib.contextmanager
def installed_and_served(kube, certs) -> Iterator[Served]:
    served = Served(kube, certs, _free_port())
    run_cli(kube, "install", "--kubeconfig", str(kube.kubeconfig), "--webhook-url", served.url,
            "--ca-bundle", str(certs.ca))
    try:
        served.start()
        yield served
    finally:
        try:
            if served.proc is None:
                served.start()      # uninstall deletes objects some webhooks see: let them answer
        except AssertionError:
            pass
        run_cli(kube, "uninstall", "--kubeconfig", str(kube.kubeconfig), check=False)
        served.stop()


def cli_env(kube) -> dict:
    """kube.env() with this checkout's sources first on PYTHONPATH."""
    env = kube.env()
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + str(ROOT)
    return env


def sa_kubeconfig(kube, path: Path) -> Path:
    """A kubeconfig of the ServiceAccount `install` made, for processes inside the namespace."""
    token = kube.kubectl("create", "token", "instancetype-controller", "-n", SYSTEM_NS,
                         "--duration=2h").stdout.strip()
    cfg = yaml.safe_load(Path(kube.inner_kubeconfig).read_text())
    for user in cfg["users"]:
        user["user"] = {"token": token}
    path.write_text(yaml.safe_dump(cfg))
    path.chmod(0o600)
    return path


def log_tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _stop_all(procs: dict) -> None:
    """Stop what was started, whatever happened before."""
    for proc in procs.values():
        proc.terminate()
    for proc in procs.values():
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


@contextlib.contextmanager
def subresource_api_served(kube, work: Path, *, controller: bool = True) -> Iterator:
    """`instancetype install` (the APIService at the namespace's ADDRESS:SUBRESOURCE_PORT), then
    `instancetype serve` (the webhooks and the subresource API) and, with `controller`,
    `instancetype controller` inside `kube` (kube_netns), both as the ServiceAccount install made.
    On exit the VMs go while the controller runs (without `controller`, the caller's must have let
    their VMIs go: controller_env.release_vmis), then `uninstall`, then the processes stop."""
    from tests.kube.controller_env import until

    address = kube.netns.address
    # No certificate is made here: install makes them (virt-operator's part), for the address and
    # the aggregated API's Service name, and serve uses its directory.
    cert_dir = work / "certs"
    env = cli_env(kube)
    r = subprocess.run([sys.executable, "-m", "instancetype", "install", "--kubeconfig", str(kube.kubeconfig),
                        "--webhook-url", f"https://{address}:{SUBRESOURCE_PORT}", "--cert-dir", str(cert_dir)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "apiservice.apiregistration.k8s.io/v1.subresources.kubevirt.io created" in r.stdout
    sa = str(sa_kubeconfig(kube, work / "sa.kubeconfig"))
    names = ("serve", "controller") if controller else ("serve",)
    logs = {name: work / f"{name}.log" for name in names}
    argv = {"serve": ["serve", "--kubeconfig", sa, "--bind-address", address, "--secure-port", str(SUBRESOURCE_PORT),
                      "--cert-dir", str(cert_dir)],
            "controller": ["controller", "--kubeconfig", sa, "--no-catalog", "-v"]}
    procs: dict = {}
    try:
        for name in names:
            with open(logs[name], "wb") as log:
                procs[name] = kube.popen([sys.executable, "-m", "instancetype", *argv[name]], env=env,
                                         stdout=log, stderr=subprocess.STDOUT)
        until(lambda: "ready" in log_tail(logs["serve"]).splitlines() or procs["serve"].poll() is not None,
              timeout=120, what="serve to be ready")
        assert procs["serve"].poll() is None, log_tail(logs["serve"])
        wait = kube.kubectl("wait", "apiservice/v1.subresources.kubevirt.io", "--for=condition=Available",
                            "--timeout=90s", check=False)
        assert wait.returncode == 0, wait.stderr + log_tail(logs["serve"])
        yield kube
    finally:
        # VMs go while the controller runs (it lets their VMIs' finalizers go); then the
        # APIService goes before serve stops (an unavailable one blocks namespace deletion).
        try:
            kube.kubectl("delete", "vm", "--all", "--all-namespaces", "--wait=true", "--timeout=120s", check=False)
            kube.kubectl("wait", "vmi", "--all", "--all-namespaces", "--for=delete", "--timeout=120s", check=False)
            subprocess.run([sys.executable, "-m", "instancetype", "uninstall", "--kubeconfig", str(kube.kubeconfig)],
                           env=env, capture_output=True, text=True, timeout=300)
        finally:
            _stop_all(procs)
