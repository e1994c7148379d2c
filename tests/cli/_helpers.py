"""What the cluster CLI tests share: running the real CLI, and the seeds' objects.

`run` calls the real `main()` in-process on a real state file (fast); `run_process` starts the
installed CLI as a subprocess (exit codes and streams exactly as a user sees them). The
manifests are built from the seeds' objects as dicts, so each test states only what differs.

Both stores: a test taking the `target` fixture runs twice, on a state file and on the real
kube-apiserver (`OnCluster`: `--kubeconfig` whose context's namespace is a fresh one, `instancetype
install` and `serve` answering its webhooks); `run(target, ...)` is the same command line on either,
and the fresh namespace is printed back as `default`, so the same assertions hold on both.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from instancetype.cli.entry import main

from .. import builders
from ..builders import CIRROS_IMAGE, cirros_vm, instancetype_obj, preference_obj  # noqa: F401 (re-exported)

CLOUD_INIT_ECHO = "#!/bin/sh\n\necho 'printed from cloud-init userdata'\n"


@dataclass
class Result:
    code: int
    out: str
    err: str


@dataclass(frozen=True)
class OnCluster:
    """The cluster a `target` names: a kubeconfig whose current context's namespace is `namespace`."""

    kubeconfig: Path
    namespace: str

    def args(self) -> list[str]:
        return ["--kubeconfig", str(self.kubeconfig)]

    def seen(self, text: str) -> str:
        """Output with the fresh namespace printed as the embedded store's `default`."""
        return text.replace(self.namespace, "default")


def run(state, *args: str, stdin: str | None = None) -> Result:
    if isinstance(state, OnCluster):
        r = run_main([*state.args(), *args], stdin=stdin)
        return Result(r.code, state.seen(r.out), state.seen(r.err))
    return run_main(["--state", str(state), *args], stdin=stdin)


def run_main(argv: list[str], *, stdin: str | None = None) -> Result:
    """`instancetype ARGV` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(argv)
                code = 0
            except SystemExit as e:
                code = int(e.code or 0)
    finally:
        sys.stdin = old_stdin
    return Result(code, out.getvalue(), err.getvalue())


def run_process(state, *args: str, stdin: str | None = None) -> Result:
    if isinstance(state, OnCluster):
        p = subprocess.run([sys.executable, "-m", "instancetype", *state.args(), *args], input=stdin,
                           capture_output=True, text=True, timeout=120)
        return Result(p.returncode, state.seen(p.stdout), state.seen(p.stderr))
    env = dict(os.environ, INSTANCETYPE_STATE=str(state))
    p = subprocess.run([sys.executable, "-m", "instancetype", *args], input=stdin, capture_output=True, text=True,
                       env=env, timeout=60)
    return Result(p.returncode, p.stdout, p.stderr)


def get_json(state, *args: str) -> Any:
    """`get ... -o json`, parsed."""
    r = run(state, "get", *args, "-o", "json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def doc(text: str) -> str:
    return textwrap.dedent(text).lstrip()


def manifest(*objs: dict) -> str:
    """Objects as one multi-document YAML stream (what `kubectl apply -f -` reads)."""
    return yaml.safe_dump_all(objs, sort_keys=False)


# --- the seeds' objects -------------------------------------------------------------------------

def instancetype(name: str, cpu: int = 1, memory: str = "128Mi", *, version: str = "v1beta1",
                 kind: str = "VirtualMachineInstancetype", **memory_extra: Any) -> dict:
    """The seeds' namespaced instancetype (memory_extra: more `spec.memory` fields)."""
    obj = instancetype_obj(name, cpu=cpu, memory=memory, kind=kind, version=version)
    obj["spec"]["memory"].update(memory_extra)
    return obj


preference = preference_obj
vm = cirros_vm


def inferring_vm(name: str, volume: dict, **spec: Any) -> str:
    """A halted VM whose matchers (given in `spec`) infer from its one volume `volume["name"]`."""
    return manifest(builders.vm(name, namespace=None, runStrategy="Halted", domain={"devices": {}}, volumes=[volume],
                                **spec))


INSTANCETYPE = manifest(instancetype("small"))
VM = manifest(vm("vm1", instancetype="small", running=None, runStrategy="Halted"))


@pytest.fixture
def state(tmp_path):
    return tmp_path / "state.db"


@pytest.fixture
def image(tmp_path):
    """A small disk image file."""
    path = tmp_path / "disk.img"
    path.write_bytes(b"x" * 4096)
    return path


# --- both stores ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def installed_cluster(request):
    """The test cluster with the system installed and `serve` answering its webhooks, for a module."""
    from tests.kube.served import installed_and_served

    kube = request.getfixturevalue("kube")
    with installed_and_served(kube, request.getfixturevalue("webhook_certs")):
        yield kube


@pytest.fixture(params=["embedded", pytest.param("cluster", marks=pytest.mark.cluster)])
def target(request, tmp_path):
    """Where a command line runs: a fresh state file, or a fresh namespace of the real cluster."""
    if request.param == "embedded":
        return tmp_path / "state.db"
    return cluster_target(request.getfixturevalue("installed_cluster"), request.getfixturevalue("namespace"),
                          tmp_path / "kubeconfig")


def cluster_target(kube, namespace: str, path: Path) -> OnCluster:
    """`kube` through a kubeconfig at `path` whose context's namespace is `namespace`."""
    from tests.kube.both_stores import namespace_kubeconfig

    return OnCluster(namespace_kubeconfig(kube, namespace, path), namespace)


def on_cluster(target) -> bool:
    return isinstance(target, OnCluster)


def store_args(target) -> list[str]:
    """The global options that name a target's store, for a command line of one's own."""
    return target.args() if isinstance(target, OnCluster) else ["--state", str(target)]


def run_settled(cluster, *args: str, stdin: str | None = None) -> Result:
    """The command on `any_cluster`'s store (`--state` or `--kubeconfig`), then settled: the
    controller has carried out what the command wrote."""
    from tests.kube.both_stores import cli_args, settled

    result = run_main([*cli_args(cluster), *args], stdin=stdin)
    settled(cluster)
    return result
