"""Helpers for the VM controller's cluster tests: CRDs, controller processes, bounded waits."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from instancetype.deploy.crds import generate_crds
from tests.waits import eventually

T = TypeVar("T")

SRC = str(Path(__file__).resolve().parents[2] / "src")


def apply_crds(kube) -> None:
    """install's CRDs (server-side applied as install applies them), Established."""
    # (snapshot.storage.k8s.io is a protected group: its CRD is the CSI snapshotter's to install)
    crds = [c for c in generate_crds() if not c["spec"]["group"].endswith(".k8s.io")]
    kube.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=instancetype", "-f", "-",
                 input=json.dumps({"apiVersion": "v1", "kind": "List", "items": crds}))
    kube.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                 *[f"crd/{c['metadata']['name']}" for c in crds])


def ensure_namespace(kube, name: str) -> None:
    """`name` exists and is Active. One still being deleted (an earlier module's `uninstall` on the
    same cluster deletes `kubevirt`) is waited out and made again: objects cannot be made in it."""
    def phase() -> str | None:
        r = kube.kubectl("get", "namespace", name, "-o", "jsonpath={.status.phase}", check=False)
        return r.stdout.strip() if r.returncode == 0 else None

    until(lambda: phase() != "Terminating", 120, f"namespace {name} to be deleted")
    if phase() is None:
        kube.kubectl("create", "namespace", name, check=False)
    until(lambda: phase() == "Active", 30, f"namespace {name} to be active")


def until(cond: Callable[[], T], timeout: float = 90.0, what: str = "condition", every: float = 0.25) -> T:
    """`cond`'s first truthy result within `timeout` seconds (tests.waits.eventually, with this
    module's defaults and argument order)."""
    return eventually(cond, timeout, interval=every, what=what)


def get_json(kube, *args: str) -> dict:
    return json.loads(kube.kubectl("get", *args, "-o", "json").stdout)


class Controllers:
    """`instancetype controller` processes on `kube`; each logs to a file; all stopped at the end."""

    def __init__(self, kube, workdir: Path):
        self.kube, self.workdir = kube, workdir
        self.procs: list[tuple[subprocess.Popen, Path]] = []

    def start(self, *args: str, workers: int = 4, catalog: bool = False) -> subprocess.Popen:
        log = self.workdir / f"controller-{len(self.procs)}.log"
        env = self.kube.env()
        env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
        argv = [sys.executable, "-m", "instancetype", "controller", "--kubeconfig", str(self.kube.kubeconfig),
                "--workers", str(workers), "-v", *args]
        if not catalog:
            argv.append("--no-catalog")
        with open(log, "wb") as f:
            proc = self.kube.popen(argv, env=env, stdout=f, stderr=subprocess.STDOUT)
        self.procs.append((proc, log))
        return proc

    def log(self, proc: subprocess.Popen) -> str:
        for p, path in self.procs:
            if p is proc:
                return path.read_text(errors="replace")
        return ""

    def leading(self, proc: subprocess.Popen) -> bool:
        return "controller: running with" in self.log(proc)

    def kill(self, proc: subprocess.Popen) -> None:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)

    def stop(self, proc: subprocess.Popen, timeout: float = 30) -> int:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        return proc.returncode

    def stop_all(self) -> None:
        for proc, _ in self.procs:
            self.stop(proc)

    def tails(self) -> str:
        return "\n".join(f"--- {path.name} (exit {p.poll()})\n" + "\n".join(path.read_text(errors="replace")
                                                                          .splitlines()[-30:])
                         for p, path in self.procs)


def release_vmis(kube) -> None:
    """Test cleanup once no controller runs: drop the finalizers of every VMI and VM, else one left
    behind would hold its namespace's (and its CRD's) deletion forever, as it would on KubeVirt
    without virt-controller."""
    # Only names and finalizers are read (kubectl's jsonpath): a test's object may be nested deeper
    # than Python's json module decodes (test_hostile's 2,000-level VM).
    path = '{range .items[*]}{.metadata.namespace}{" "}{.metadata.name}{" "}{.metadata.finalizers}{"\\n"}{end}'
    for resource in ("vmis", "vms"):
        r = kube.kubectl("get", resource, "-A", "-o", f"jsonpath={path}", check=False)
        if r.returncode != 0:
            continue
        for line in r.stdout.splitlines():
            namespace, name, *finalizers = line.split(" ", 2)
            if finalizers and finalizers[0].strip():
                kube.kubectl("patch", "-n", namespace, f"{resource}/{name}", "--type=merge",
                             "-p", '{"metadata":{"finalizers":null}}', check=False)


@pytest.fixture
def controllers(kube, tmp_path):
    apply_crds(kube)
    c = Controllers(kube, tmp_path)
    yield c
    c.stop_all()
    release_vmis(kube)
    print(c.tails())        # shown by pytest only when the test failed
