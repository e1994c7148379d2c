"""`instancetype install` + `instancetype serve` on the test cluster, for a test module.

    with installed_and_served(kube, webhook_certs) as served:
        served.url          https://127.0.0.1:PORT (what install registered)
        served.stop() / served.start()   stop or start `serve` (same port)
        served.denials()    the JSON log lines of refused requests so far
        served.kubeconfig   the admin kubeconfig (str)

`install` runs first (CRDs, RBAC, the KubeVirt object, the catalogue, then the webhook
configurations pointing at a port chosen for `serve`); `serve` starts and the block begins once
it says `ready` (informer caches synced). On exit: `uninstall`, then `serve` stops.
"""
from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from typing import Iterator

READY_TIMEOUT_S = 60.0


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
