"""What the cluster CLI tests share: running the real CLI, and the seeds' objects.

`run` calls the real `main()` in-process on a real state file (fast); `run_process` starts the
installed CLI as a subprocess (exit codes and streams exactly as a user sees them). The
manifests are built from the seeds' objects as dicts, so each test states only what differs.
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
from typing import Any

import pytest
import yaml

from instancetype.cli.main import main

CIRROS_IMAGE = "registry:5000/kubevirt/cirros-container-disk-demo:devel"
CLOUD_INIT_ECHO = "#!/bin/sh\n\necho 'printed from cloud-init userdata'\n"


@dataclass
class Result:
    code: int
    out: str
    err: str


def run(state, *args: str, stdin: str | None = None) -> Result:
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(["--state", str(state), *args])
                code = 0
            except SystemExit as e:
                code = int(e.code or 0)
    finally:
        sys.stdin = old_stdin
    return Result(code, out.getvalue(), err.getvalue())


def run_process(state, *args: str, stdin: str | None = None) -> Result:
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
    group = "flavor.kubevirt.io" if kind == "VirtualMachineFlavor" else "instancetype.kubevirt.io"
    return {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": {"name": name},
            "spec": {"cpu": {"guest": cpu}, "memory": {"guest": memory, **memory_extra}}}


def preference(name: str, spec: dict, *, version: str = "v1beta1", group: str = "instancetype.kubevirt.io") -> dict:
    return {"apiVersion": f"{group}/{version}", "kind": "VirtualMachinePreference", "metadata": {"name": name},
            "spec": spec}


def vm(name: str, *, instancetype: str | None = None, preference: str | None = None, domain: dict | None = None,
       cloud_init: str | None = None, running: bool | None = False, matcher: str = "instancetype",
       **spec: Any) -> dict:
    """The seeds' cirros VM: a container disk (and a cloud-init disk), namespaced matchers."""
    volumes: list[dict] = [{"containerDisk": {"image": CIRROS_IMAGE}, "name": "containerdisk"}]
    if cloud_init is not None:
        volumes.append({"cloudInitNoCloud": {"userData": cloud_init}, "name": "cloudinitdisk"})
    body: dict[str, Any] = {}
    if instancetype:
        body[matcher] = {"kind": "VirtualMachineFlavor" if matcher == "flavor" else "VirtualMachineInstancetype",
                         "name": instancetype}
    if preference:
        body["preference"] = {"kind": "VirtualMachinePreference", "name": preference}
    if running is not None:
        body["running"] = running
    body.update(spec)
    body["template"] = {"spec": {"domain": domain or {"devices": {}}, "terminationGracePeriodSeconds": 0,
                                 "volumes": volumes}}
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": name}, "spec": body}


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
