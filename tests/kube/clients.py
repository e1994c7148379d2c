"""The two client sets a seed's sequence runs with on a cluster: the real kubectl 1.36 and
virtctl v1.7.0, or this project's command line (`python -m instancetype --kubeconfig K ...`) in
the place of both. A sequence is written once against `clients.kubectl` / `clients.virtctl`; the
`clients` fixture runs it with each set, and both must print the same lines."""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.kube.cluster import KubectlError

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = 180


@dataclass(frozen=True)
class Clients:
    """kubectl-like and virtctl-like callables: `(*args, input=None, check=True)` ->
    CompletedProcess (text); a non-zero exit raises KubectlError when `check`."""

    name: str
    kubectl: Callable[..., subprocess.CompletedProcess]
    virtctl: Callable[..., subprocess.CompletedProcess]


def instancetype_client(kube) -> Callable[..., subprocess.CompletedProcess]:
    """`python -m instancetype --kubeconfig <admin kubeconfig> ARGS`, from the test process as the
    real clients run (this worktree's sources; no $KUBECONFIG: only the flag names the cluster)."""
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["PYTHONPATH"] = str(ROOT / "src")

    def run(*args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "instancetype", "--kubeconfig", str(kube.kubeconfig), *map(str, args)]
        proc = subprocess.run(argv, input=input, capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT)
        if check and proc.returncode != 0:
            raise KubectlError(f"instancetype {' '.join(map(str, args))} exited {proc.returncode}\n"
                               f"stdout: {proc.stdout}\nstderr: {proc.stderr}")
        return proc

    return run


def _real(kube, what: str) -> Callable[..., subprocess.CompletedProcess]:
    client = getattr(kube, what)

    def run(*args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        return client(*args, input=input, check=check, timeout=RUN_TIMEOUT)

    return run


@pytest.fixture(params=["real", "instancetype"])
def clients(request, subresource_api) -> Clients:
    """The real kubectl and virtctl, then `instancetype --kubeconfig` in their place, on the
    `subresource_api` stack (serve + controller in the network namespace)."""
    kube = subresource_api
    if request.param == "real":
        return Clients("real", _real(kube, "kubectl"), _real(kube, "virtctl"))
    ours = instancetype_client(kube)
    return Clients("instancetype", ours, as_virtctl(ours))


def as_virtctl(run: Callable[..., subprocess.CompletedProcess]) -> Callable[..., subprocess.CompletedProcess]:
    """Our command line in virtctl's place: virtctl prints an error bare, this command line with
    its one `error: ` prefix (issue 29: every error alike); the lines are otherwise virtctl's."""

    def virtctl(*args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        proc = run(*args, input=input, check=check)
        proc.stderr = "".join(line.removeprefix("error: ") for line in proc.stderr.splitlines(keepends=True))
        return proc

    return virtctl
