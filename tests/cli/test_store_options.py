"""The options that name the store (`--state`, `--kubeconfig`, `--context`, `--cluster`) after the
verb, as kubectl's global flags may come anywhere (cobra's persistent flags)."""
from __future__ import annotations

import pytest

from instancetype.cli.main import hoist_store_options

from ._helpers import INSTANCETYPE, VM, run_main


@pytest.mark.parametrize("argv,expected", [
    (["get", "vm", "--kubeconfig", "k", "-o", "yaml"], ["--kubeconfig", "k", "get", "vm", "-o", "yaml"]),
    (["-n", "x", "get", "vm", "--state=s", "--cluster"], ["-n", "x", "--state=s", "--cluster", "get", "vm"]),
    (["catalog", "sync", "--context", "c"], ["--context", "c", "catalog", "sync"]),
    # an option's value is never taken for a store option
    (["get", "vm", "-l", "--cluster"], ["get", "vm", "-l", "--cluster"]),
    # nothing after `--` moves
    (["apply", "-f", "-", "--", "--state", "x"], ["apply", "-f", "-", "--", "--state", "x"]),
    # a command's own options by those names stay its own
    (["serve", "--kubeconfig", "k"], ["serve", "--kubeconfig", "k"]),
    (["install", "--context", "c", "--kubeconfig", "k"], ["install", "--context", "c", "--kubeconfig", "k"]),
    # a missing value, an unknown command: left for the usual one-line error
    (["get", "vm", "--kubeconfig"], ["get", "vm", "--kubeconfig"]),
    (["nosuch", "--state", "s"], ["nosuch", "--state", "s"]),
    ([], []),
])
def test_store_options_move_before_the_verb(argv, expected):
    assert hoist_store_options(argv) == expected


def test_state_after_the_verb(tmp_path):
    state = str(tmp_path / "state.db")
    r = run_main(["apply", "-f", "-", "--state", state], stdin=INSTANCETYPE + "---\n" + VM)
    assert r.code == 0, r.err
    r = run_main(["get", "vm", "-o", "name", f"--state={state}"])
    assert (r.code, r.out) == (0, "virtualmachine.kubevirt.io/vm1\n"), r.err


def test_a_kubeconfig_after_the_verb_names_the_cluster(tmp_path):
    r = run_main(["get", "vm", "--kubeconfig", str(tmp_path / "missing")])
    assert r.code == 1 and len(r.err.splitlines()) == 1 and "Traceback" not in r.err
    assert r.err == run_main(["--kubeconfig", str(tmp_path / "missing"), "get", "vm"]).err
