"""The README's first command, and its offline example, as a user runs them."""
from __future__ import annotations

import pathlib
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(*args, state):
    p = subprocess.run([sys.executable, "-m", "instancetype", "--state", str(state), *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert "Traceback" not in p.stderr, p.stderr
    return p


def test_readme_first_command(tmp_path):
    readme = (ROOT / "README.md").read_text()
    assert "instancetype apply -f examples/vm.yaml && instancetype get vm,vmi" in readme
    state = tmp_path / "state.db"
    p = run("apply", "-f", "examples/vm.yaml", state=state)
    assert (p.returncode, p.stdout) == (0, "virtualmachine.kubevirt.io/cirros created\n"), p.stderr
    p = run("get", "vm,vmi", state=state)
    assert p.returncode == 0, p.stderr
    rows = [line.split() for line in p.stdout.splitlines() if line.strip()]
    assert rows[1][0] == "virtualmachine.kubevirt.io/cirros" and rows[1][2:] == ["Running", "True"]
    assert rows[3][0] == "virtualmachineinstance.kubevirt.io/cirros" and "simulated-node" in rows[3]


def test_offline_example_expands(tmp_path):
    p = run("expand", "-f", "examples/offline/", state=tmp_path / "unused.db")
    assert p.returncode == 0, p.stderr
    vm = yaml.safe_load(p.stdout)
    assert vm["spec"]["template"]["spec"]["domain"]["memory"]["guest"] == "128Mi"
    assert not (tmp_path / "unused.db").exists()   # offline commands never open the store
