"""The namespace of a command without `-n`, as kubectl picks it: the kubeconfig context's on a
cluster (`--context`'s, else the current one's; `default` when it names none), `default` on the
embedded store; `-n` (after the verb, or before it as kubectl's global flag) wins. A manifest's own
namespace is refused only against an explicit `-n`. The offline `expand -f` reads no cluster, so a
kubeconfig that names no reachable server shows the rule (the cluster tests: tests/kube/
test_cli_namespace.py)."""
from __future__ import annotations

import json

import pytest
import yaml

from ._helpers import INSTANCETYPE, VM, run, run_main

KUBECONFIG = {
    "apiVersion": "v1", "kind": "Config", "current-context": "main",
    "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
    "users": [{"name": "u", "user": {"token": "t"}}],
    "contexts": [{"name": "main", "context": {"cluster": "c", "user": "u", "namespace": "prod"}},
                 {"name": "other", "context": {"cluster": "c", "user": "u", "namespace": "staging"}},
                 {"name": "plain", "context": {"cluster": "c", "user": "u"}}]}


@pytest.fixture
def kubeconfig(tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(KUBECONFIG))
    return path


@pytest.fixture
def manifest(tmp_path):
    path = tmp_path / "vm.yaml"
    path.write_text(INSTANCETYPE + "---\n" + VM)
    return path


def _expanded_namespace(*args: str) -> str:
    r = run_no_state(*args)
    assert r.code == 0, r.err
    return json.loads(r.out)["metadata"]["namespace"]


def run_no_state(*args: str):
    """`run` without `--state` (which a cluster option refuses)."""
    return run_main(list(args))


@pytest.mark.parametrize("args, namespace", [
    ([], "default"),
    (["--kubeconfig", "{k}"], "prod"),
    (["--kubeconfig", "{k}", "--context", "other"], "staging"),
    (["--kubeconfig", "{k}", "--context", "plain"], "default"),
    (["--kubeconfig", "{k}", "-n", "team"], "team"),
    (["--kubeconfig", "{k}", "--context", "other", "-n", "team"], "team"),
])
def test_the_namespace_of_objects_that_name_none(kubeconfig, manifest, args, namespace):
    args = [a.replace("{k}", str(kubeconfig)) for a in args]
    assert _expanded_namespace(*args, "expand", "-f", str(manifest), "-o", "json") == namespace
    if "-n" in args:         # the command's own -n, after the verb, is the same
        i = args.index("-n")
        rest = args[:i] + args[i + 2:]
        assert _expanded_namespace(*rest, "expand", "-f", str(manifest), "-o", "json", "-n", args[i + 1]) == namespace


def test_the_commands_n_wins_over_the_global_one(kubeconfig, manifest):
    assert _expanded_namespace("-n", "a", "expand", "-f", str(manifest), "-o", "json", "-n", "b") == "b"


def test_a_manifests_namespace_is_refused_only_against_an_explicit_n(kubeconfig, tmp_path):
    there = tmp_path / "there.yaml"
    there.write_text(INSTANCETYPE.replace("name: small", "name: small\n  namespace: elsewhere") + "---\n" +
                     VM.replace("name: vm1", "name: vm1\n  namespace: elsewhere"))
    assert _expanded_namespace("--kubeconfig", str(kubeconfig), "expand", "-f", str(there), "-o", "json") == "elsewhere"
    r = run_no_state("--kubeconfig", str(kubeconfig), "expand", "-f", str(there), "-n", "prod")
    assert r.code == 1 and ('the namespace from the provided object "elsewhere" does not match the namespace "prod". '
                            "You must pass '--namespace=elsewhere' to perform this operation.") in r.err


def test_the_embedded_store_is_default_and_takes_the_global_n(tmp_path):
    state = tmp_path / "state.db"
    assert run(state, "get", "vmis").err == "No resources found in default namespace.\n"
    assert run(state, "-n", "kube-system", "get", "vmis").err == "No resources found in kube-system namespace.\n"
    assert run(state, "-n", "kube-system", "get", "vmis", "-n", "kube-public").err == \
        "No resources found in kube-public namespace.\n"


def test_a_bad_kubeconfig_is_one_line_before_anything_else(tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("current-context: nowhere\ncontexts: []\n")
    r = run_no_state("--kubeconfig", str(bad), "get", "vm")
    assert r.code == 1 and len(r.err.splitlines()) == 1 and r.err.startswith("error: kubeconfig"), r.err
    r = run_no_state("--kubeconfig", str(bad), "--state", str(tmp_path / "s.db"), "get", "vm")
    assert r.err == ("error: --state is the embedded store's; it cannot be used with a cluster (--kubeconfig, "
                     "--cluster, --context)\n")
