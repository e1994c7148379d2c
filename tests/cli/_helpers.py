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

from instancetype.cli.entry import main

from .. import builders
from ..builders import CIRROS_IMAGE, cirros_vm, instancetype_obj, preference_obj  # noqa: F401 (re-exported)

CLOUD_INIT_ECHO = "#!/bin/sh\n\necho 'printed from cloud-init userdata'\n"


@dataclass
class Result:
    code: int
    out: str
    err: str


def run(state, *args: str, stdin: str | None = None) -> Result:
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
