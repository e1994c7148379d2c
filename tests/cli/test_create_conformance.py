"""`create.jsonl`: virtctl v1.9's own answers for `create vm|instancetype|preference`.

Every case runs in-process (`instancetype.cli.create.run`, cwd set to a fresh
directory holding the case's `files`); a sample also runs as a real command line.
Comparison as the conformance README says: a VirtualMachine is judged as the `vm`
of an answer by `canon.py`; instancetypes and preferences by the README's
plain-field rule (canon.py has no types for them, so they are declared here).
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import yaml

from ..conformance import canon
from ._create import create

CASES_FILE = pathlib.Path(__file__).parent.parent / "conformance" / "create.jsonl"
CASES = [json.loads(line) for line in CASES_FILE.read_text().splitlines() if line.strip()]

# The README's rule for the instancetype.kubevirt.io/v1beta1 objects: metadata and spec
# are plain objects, cpu.guest (0), memory.guest ("0"), machine.preferredMachineType and
# volumes.preferredStorageClassName ("") are plain; machine {} and volumes {} are kept.
_S, _PLAIN, _PTR = "string", False, True
_OBJECT = {"apiVersion": [_S, _PLAIN, True], "kind": [_S, _PLAIN, True],
           "metadata": ["struct:meta.ObjectMeta", _PLAIN, True]}
TYPES = {
    "create.Instancetype": {**_OBJECT, "spec": ["struct:create.InstancetypeSpec", _PLAIN, True]},
    "create.Preference": {**_OBJECT, "spec": ["struct:create.PreferenceSpec", _PLAIN, True]},
    "create.InstancetypeSpec": {
        "cpu": ["struct:create.CPUInstancetype", _PLAIN, True],
        "memory": ["struct:create.MemoryInstancetype", _PLAIN, True],
        "gpus": ["slice:struct:kv.GPU", _PLAIN, True],
        "hostDevices": ["slice:struct:kv.HostDevice", _PLAIN, True],
        "ioThreadsPolicy": [_S, _PTR, True],
    },
    "create.CPUInstancetype": {"guest": ["int", _PLAIN, True]},
    "create.MemoryInstancetype": {"guest": ["quantity", _PLAIN, True]},
    "create.PreferenceSpec": {
        "cpu": ["struct:create.CPUPreferences", _PTR, True],
        "machine": ["struct:create.MachinePreferences", _PTR, True],
        "volumes": ["struct:create.VolumePreferences", _PTR, True],
    },
    "create.CPUPreferences": {"preferredCPUTopology": [_S, _PTR, True]},
    "create.MachinePreferences": {"preferredMachineType": [_S, _PLAIN, True]},
    "create.VolumePreferences": {"preferredStorageClassName": [_S, _PLAIN, True]},
}
canon.TYPES.update(TYPES)


def canonical(obj: dict):
    """The canonical form of one printed object, by its kind."""
    kind = obj.get("kind", "") if isinstance(obj, dict) else ""
    if kind == "VirtualMachine":
        return canon.canon({"vm": obj})
    ref = "struct:create.Preference" if "Preference" in kind else "struct:create.Instancetype"
    return canon.canon(obj, ref)


def check(case: dict, status: int, stdout: str, stderr: str) -> None:
    expect = case["expect"]
    if expect["exit"] != 0:
        assert status != 0, f"expected failure {expect['error']!r}, got exit 0:\n{stdout}"
        assert expect["error"] in stderr, f"expected {expect['error']!r} in stderr, got {stderr!r}"
        assert stdout == "", stdout
        return
    assert status == 0, stderr
    docs = [d for d in yaml.safe_load_all(stdout) if d]
    assert len(docs) == len(expect["objects"]), stdout
    for want, got in zip(expect["objects"], docs):
        if canonical(want) != canonical(got):
            detail = canon.diff({"vm": want}, {"vm": got}) if want.get("kind") == "VirtualMachine" else (want, got)
            pytest.fail(f"{case['id']}: {detail}")


def _write_files(directory: pathlib.Path, files: dict | None) -> None:
    for rel, content in (files or {}).items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def run_in_process(args: list[str], cwd: pathlib.Path) -> tuple[int, str, str]:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return create(*args)
    finally:
        os.chdir(old)


def _command() -> list[str]:
    exe = shutil.which("instancetype")
    return [exe] if exe else [sys.executable, "-m", "instancetype"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_in_process(case, request):
    files = case["request"].get("files")
    # a fresh directory only where the case has files (making one per case is the slow part)
    cwd = request.getfixturevalue("tmp_path") if files else pathlib.Path.cwd()
    _write_files(cwd, files)
    check(case, *run_in_process(case["request"]["args"], cwd))


SAMPLE = CASES[::10]


@pytest.mark.parametrize("case", SAMPLE, ids=[c["id"] for c in SAMPLE])
def test_command_line(case, tmp_path):
    _write_files(tmp_path, case["request"].get("files"))
    proc = subprocess.run(_command() + ["create", *case["request"]["args"]], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    check(case, proc.returncode, proc.stdout, proc.stderr)


def test_sample_covers_every_subcommand_and_failures():
    kinds = {(c["request"]["args"][0], c["expect"]["exit"] == 0) for c in SAMPLE}
    assert kinds == {(k, ok) for k in ("vm", "instancetype", "preference") for ok in (True, False)}
