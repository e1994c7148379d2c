"""Bad input to the cluster commands: bad flags, names, files and state files give a clear
error and exit 1, never a traceback (hypothesis, bounded to stay fast); bad manifests, files and
arguments give the same lines on the embedded store and on a real API server."""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ._helpers import INSTANCETYPE, VM, cluster_target, run

COMMANDS = ["apply", "get", "describe", "delete", "wait", "start", "stop", "restart", "image-upload", "expand"]
WORDS = ["vm", "vms", "vm/vm1", "vmi", "vmf/small", "pvc", "dv", "kubevirt", "vm,vmi", "nosuch", "vm/", "/x", ",",
         "vm1", "small", "-", "", "x" * 300, "é", "../..", "a/b/c"]
FLAGS = ["-f", "-n", "-o", "-l", "-A", "--all", "--for", "--timeout", "--dry-run", "--size", "--image-path",
         "--field-selector", "--ignore-not-found", "--force", "--grace-period", "--vm", "--no-create", "-R",
         "--show-labels", "--bogus", "-Z"]
VALUES = ["yaml", "json", "name", "wide", "xml", "a=b", "a in (", "!", "0", "-1s", "1ms", "soon", "1Gi", "-5",
          "condition=Ready", "delete", "jsonpath={.status}", "jsonpath=", "jsonpath={.a}=", "jsonpath={{}}",
          "server", "client", "maybe", "kube-public", "UPPER", "/no/such/file", "."]

argv = st.lists(st.sampled_from(WORDS + FLAGS + VALUES), max_size=6)


@pytest.fixture(scope="module")
def populated(tmp_path_factory):
    state = tmp_path_factory.mktemp("fuzz") / "state.db"
    assert run(state, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + VM).code == 0
    return state


def _assert_clean(r, args) -> None:
    assert r.code in (0, 1), (args, r)
    assert "Traceback" not in r.err and "internal error" not in r.err, (args, r.err)
    if r.code == 1:
        assert r.err.strip(), (args, r)


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(COMMANDS), args=argv)
def test_random_arguments_never_crash(populated, command, args):
    if command in ("delete", "start", "stop", "restart"):
        args = [*args, "--dry-run"]          # keep the shared cluster as it is
    if command == "apply":
        args = [a for a in args if a != "-"]    # no stdin here
    if command == "wait":
        args = [*args, "--timeout=0"]
    _assert_clean(run(populated, command, *args), args)


@pytest.mark.parametrize("content", [b"", b"\x00" * 4096, b"SQLite format 3\x00garbage", b"not a database" * 300])
@pytest.mark.parametrize("args", [["get", "vm"], ["apply", "-f", "-"], ["delete", "vm", "x"],
                                  ["wait", "vm/x", "--for=delete"], ["start", "x"], ["describe", "vm"],
                                  ["expand", "--vm", "x"]])
def test_damaged_state_file(tmp_path, content, args):
    state = tmp_path / "state.db"
    state.write_bytes(content)
    r = run(state, *args, stdin=INSTANCETYPE)
    _assert_clean(r, args)
    if content:
        assert r.code == 1 and len(r.err.splitlines()) == 1 and "state file" in r.err, r.err


BAD_MANIFESTS = ["kind: [", "- a\n- b\n", "apiVersion: v1\n", "kind: VirtualMachine\n",
                 "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: 5\n",
                 "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: [1]\n",
                 "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: x\nspec: 3\n",
                 "\x00\xff", "---\n---\n"]


@pytest.mark.parametrize("stdin", BAD_MANIFESTS)
@pytest.mark.parametrize("command", ["apply", "delete"])
def test_bad_manifests(target, stdin, command):
    r = run(target, command, "-f", "-", stdin=stdin)
    _assert_clean(r, [command, stdin])
    assert r.code == 1


def test_bad_files_and_paths(target, tmp_path):
    state = target
    (tmp_path / "d").mkdir()
    for args in (["apply", "-f", str(tmp_path / "missing.yaml")], ["delete", "-f", str(tmp_path / "missing.yaml")],
                 ["apply", "-f", str(tmp_path / "d")],
                 ["image-upload", "dv", "x", "--size=1Gi", f"--image-path={tmp_path / 'd'}"],
                 ["image-upload", "dv", "x", "--size=1Gi", "--image-path=/dev/null"],
                 ["image-upload", "dv", "x", "--size=lots", f"--image-path={tmp_path / 'd'}"],
                 ["image-upload", "dv", "x", "y", "z"]):
        r = run(state, *args)
        _assert_clean(r, args)
        assert r.code == 1 and len(r.err.strip().splitlines()) == 1, (args, r.err)


def test_bad_input_gets_the_same_lines_on_both_stores(installed_cluster, namespace, tmp_path):
    """Each bad manifest, file and argument: the same exit status and lines on a state file and on
    the real API server (`--kubeconfig`)."""
    embedded = tmp_path / "state.db"
    cluster = cluster_target(installed_cluster, namespace, tmp_path / "kubeconfig")
    (tmp_path / "d").mkdir()
    cases = [([command, "-f", "-"], stdin) for command in ("apply", "delete") for stdin in BAD_MANIFESTS]
    cases += [(args, None) for args in (
        ["apply", "-f", str(tmp_path / "missing.yaml")], ["delete", "-f", str(tmp_path / "missing.yaml")],
        ["apply", "-f", str(tmp_path / "d")], ["get", "nosuch"], ["get", "vm", "-o", "xml"], ["get", "vm", "x", "-A"],
        ["get", "vm/"], ["get", "vm", "-l", "a in ("], ["delete", "vm"], ["delete", "vm", "..", "a%b"],
        ["describe", "vm", "nope"], ["wait", "vm/x", "--for=bogus"], ["wait", "vm/x", "--for=delete", "--timeout=soon"],
        ["patch", "vm", "x", "--type", "bogus", "-p", "{}"], ["patch", "vm", "x", "--type", "merge", "-p", "{"],
        ["label", "vm", "x", "a=b", "c"], ["label", "vm", "x", "-A", "a=b"], ["annotate", "vm"],
        ["apply", "-n", "other", "-f", "-"], ["image-upload", "dv", "x", "y", "z"],
        ["image-upload", "dv", "../x", "--size=1Gi", f"--image-path={tmp_path / 'd'}"])]
    for args, stdin in cases:
        if args[:2] == ["apply", "-n"]:
            stdin = VM.replace("name: vm1", "name: vm1\n  namespace: x")
        mine, theirs = run(embedded, *args, stdin=stdin), run(cluster, *args, stdin=stdin)
        assert theirs.code == 1 and "Traceback" not in theirs.err, (args, stdin, theirs)
        assert (theirs.code, theirs.out, theirs.err) == (mine.code, mine.out, mine.err), (args, stdin)
