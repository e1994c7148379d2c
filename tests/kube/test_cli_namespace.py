"""`-n` as kubectl has it, on a real cluster beside the real kubectl: a command without `-n` acts in
the namespace of the kubeconfig's current context (or `--context`'s), else `default`; `-n` overrides
it; a manifest's own namespace is refused only against an explicit `-n`.

Both clients are given the same kubeconfig, whose contexts set namespaces; they must act in the
same namespace and print the same lines.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from ..cli._helpers import INSTANCETYPE, VM
from .test_cli_cluster import cli, installed  # noqa: F401 (the module's installed system)
from .test_virtctl import subresource_api, vm_namespace  # noqa: F401 (serve and the controller in a netns)

KLOG = re.compile(r"[IWE]\d{4} ")      # client-go's log lines (a short watch's warning), not kubectl's output


def contexts_kubeconfig(kube, path: Path, namespaces: dict[str, str | None], current: str) -> Path:
    """The admin kubeconfig with one context per entry of `namespaces` (None: the context names no
    namespace), `current` its current context."""
    cfg = yaml.safe_load(Path(kube.kubeconfig).read_text())
    base = cfg["contexts"][0]["context"]
    cfg["contexts"] = [{"name": name, "context": {**base, **({"namespace": ns} if ns else {})}}
                       for name, ns in namespaces.items()]
    cfg["current-context"] = current
    path.write_text(yaml.safe_dump(cfg))
    path.chmod(0o600)
    return path


def kubectl(kube, kubeconfig: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """The real kubectl with this kubeconfig (not the fixture's admin one)."""
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    return subprocess.run([shutil.which("kubectl"), f"--cache-dir={kube.workdir / 'kube-cache'}",
                           "--kubeconfig", str(kubeconfig), *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=120)


def ours(kube, kubeconfig: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return cli(kube, "--kubeconfig", str(kubeconfig), *args, stdin=stdin)


def same(kube, kubeconfig: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Both clients print the same thing (kubectl 1.36's `deleted from <ns> namespace` aside)."""
    mine = ours(kube, kubeconfig, *args, stdin=stdin)
    real = kubectl(kube, kubeconfig, *args, stdin=stdin)
    real_out = real.stdout
    if args[0] == "delete":
        for ns in _namespaces_in(real_out):
            real_out = real_out.replace(f" from {ns} namespace", "")
    real_err = "".join(line for line in real.stderr.splitlines(keepends=True) if not KLOG.match(line))
    assert (mine.returncode, mine.stdout, mine.stderr) == (real.returncode, real_out, real_err), args
    return mine


def _namespaces_in(text: str) -> set[str]:
    words = text.split()
    return {words[i + 1] for i, w in enumerate(words[:-1]) if w == "from"}


def test_the_contexts_namespace_like_kubectl(installed, namespace, tmp_path):  # noqa: F811
    kube = installed
    mine_ns, other_ns = namespace, namespace + "-o"
    kube.kubectl("create", "namespace", other_ns)
    try:
        k = contexts_kubeconfig(kube, tmp_path / "k", {"main": mine_ns, "other": other_ns, "plain": None}, "main")
        m = tmp_path / "m.yaml"
        m.write_text(INSTANCETYPE + "---\n" + VM)
        # ours creates in the context's namespace; kubectl then finds the objects unchanged there
        p = ours(kube, k, "apply", "-f", str(m))
        assert (p.returncode, p.stdout) == (0, "virtualmachineinstancetype.instancetype.kubevirt.io/small created\n"
                                               "virtualmachine.kubevirt.io/vm1 created\n"), p.stderr
        assert kube.kubectl("get", "vm", "-n", mine_ns, "-o", "name").stdout == "virtualmachine.kubevirt.io/vm1\n"
        same(kube, k, "apply", "-f", str(m))
        same(kube, k, "get", "vm", "-o", "name")
        same(kube, k, "get", "vm", "vm1", "-o", "jsonpath={.metadata.namespace}")
        # --context picks another context's namespace; kubectl creates there, ours sees it
        assert kubectl(kube, k, "--context", "other", "apply", "-f", str(m)).returncode == 0
        same(kube, k, "--context", "other", "get", "vm,vmf", "-o", "name")
        same(kube, k, "--context", "other", "get", "vm", "vm1", "-o", "jsonpath={.metadata.namespace}")
        # -n overrides the context's namespace
        same(kube, k, "--context", "other", "-n", mine_ns, "get", "vm", "vm1", "-o",
             "jsonpath={.metadata.namespace}")
        # a context naming no namespace is `default`
        same(kube, k, "--context", "plain", "get", "vm")
        same(kube, k, "--context", "plain", "get", "vm", "vm1")
        # the verbs on one object, in the context's namespace
        p = ours(kube, k, "describe", "vm", "vm1")
        assert p.stdout.startswith(f"Name:         vm1\nNamespace:    {mine_ns}\n"), p.stderr
        for args, out in ((["label", "vm", "vm1", "a=b"], "labeled"),
                          (["--context", "other", "label", "vm", "vm1", "a=b"], "labeled"),
                          (["--context", "other", "annotate", "vm", "vm1", "c=d"], "annotated"),
                          (["patch", "vm", "vm1", "--type", "merge", "-p", '{"metadata":{"labels":{"p":"1"}}}'],
                           "patched")):
            p = ours(kube, k, *args)
            assert (p.returncode, p.stdout) == (0, f"virtualmachine.kubevirt.io/vm1 {out}\n"), (args, p.stderr)
        same(kube, k, "--context", "other", "get", "vm", "vm1", "-o", "jsonpath={.metadata.annotations.c}")
        same(kube, k, "get", "vm", "vm1", "-o", "jsonpath={.metadata.annotations.c}")
        same(kube, k, "get", "vm", "-l", "a=b,p=1", "-o", "name")
        same(kube, k, "--context", "other", "get", "vm", "-l", "p=1", "-o", "name")
        same(kube, k, "wait", "vm/vm1", "--for=jsonpath={.metadata.labels.a}=b", "--timeout=10s")
        same(kube, k, "wait", "vmf/small", "--for=delete", "--timeout=1s")
        # -A: every namespace; with a name, kubectl's refusal
        p = ours(kube, k, "get", "vm", "-A", "-o", "name")
        assert p.stdout == "virtualmachine.kubevirt.io/vm1\n" * 2, p.stderr
        for verb in (["get"], ["describe"], ["delete"], ["label", "x=y"], ["wait", "--for=delete"]):
            args = [verb[0], "vm", "vm1", "-A", *verb[1:]]
            same(kube, k, *args)
        # a manifest's own namespace: used as is without -n, refused against a different -n
        there = VM.replace("name: vm1", f"name: vm2\n  namespace: {other_ns}")
        same(kube, k, "apply", "-n", mine_ns, "-f", "-", stdin=there)
        same(kube, k, "delete", "-n", mine_ns, "-f", "-", stdin=there)
        p = ours(kube, k, "apply", "-f", "-", stdin=there)
        assert p.returncode == 0 and p.stdout.endswith("virtualmachine.kubevirt.io/vm2 created\n"), p.stderr
        same(kube, k, "--context", "other", "get", "vm", "vm2", "-o", "name")
        # image-upload creates its claims in the context's namespace
        image = tmp_path / "disk.img"
        image.write_bytes(b"\0" * 4096)
        p = ours(kube, k, "image-upload", "dv", "disk", "--size", "1Gi", "--image-path", str(image))
        assert p.stdout == f"PVC {mine_ns}/disk not found \nDataVolume {mine_ns}/disk created\n", p.stderr
        # the offline expansion on a cluster names the context's namespace too
        p = ours(kube, k, "expand", "-f", str(m), "-o", "json")
        assert p.returncode == 0 and f'"namespace": "{mine_ns}"' in p.stdout, p.stderr
        # shell completion lists the names of the context's namespace
        env = dict(kube.env(), _INSTANCETYPE_COMPLETE="bash_complete",
                   COMP_WORDS=f"instancetype --kubeconfig {k} --context plain get vm ", COMP_CWORD="7")
        p = subprocess.run([sys.executable, "-m", "instancetype"], env=env, capture_output=True, text=True, timeout=60)
        assert "vm1" not in p.stdout, p.stdout
        env["COMP_WORDS"] = f"instancetype --kubeconfig {k} get vm "
        env["COMP_CWORD"] = "5"
        p = subprocess.run([sys.executable, "-m", "instancetype"], env=env, capture_output=True, text=True, timeout=60)
        assert "plain,vm1" in p.stdout.replace("\n", ","), (p.stdout, p.stderr)
        # delete by name in the context's namespace, the other context's object stays
        p = ours(kube, k, "delete", "vm", "vm1")
        assert (p.returncode, p.stdout) == (0, f'virtualmachine.kubevirt.io "vm1" deleted from {mine_ns} namespace\n'), \
            p.stderr
        same(kube, k, "get", "vm", "vm1")
        same(kube, k, "--context", "other", "get", "vm", "-o", "name")
    finally:
        kube.kubectl("delete", "namespace", other_ns, "--wait=false", check=False)


def test_virtctl_verbs_in_the_contexts_namespace(subresource_api, vm_namespace, virtctl, tmp_path):  # noqa: F811
    """start / stop / expand --vm without -n act where the real virtctl does with the same
    kubeconfig: the context's namespace (KubeVirt's subresource API, through the aggregator)."""
    kube, ns = subresource_api, vm_namespace
    k = contexts_kubeconfig(kube, tmp_path / "k", {"main": ns, "plain": None}, "main")
    env = {key: v for key, v in os.environ.items() if key != "KUBECONFIG"}

    def real_virtctl(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(virtctl), "--kubeconfig", str(k), *args], capture_output=True, text=True,
                              env=env, timeout=120)

    mine = ours(kube, k, "expand", "--vm", "vm1", "-o", "json")
    real = real_virtctl("expand", "--vm", "vm1", "-o", "json")
    assert mine.returncode == real.returncode == 0, (mine.stderr, real.stderr)
    assert json.loads(mine.stdout)["metadata"]["namespace"] == json.loads(real.stdout)["metadata"]["namespace"] == ns
    p = ours(kube, k, "start", "vm1")
    assert (p.returncode, p.stdout) == (0, "VM vm1 was scheduled to start\n"), p.stderr
    assert kube.kubectl("get", "vm", "vm1", "-n", ns, "-o", "jsonpath={.spec.runStrategy}").stdout == "Always"
    p, real = ours(kube, k, "start", "vm1"), real_virtctl("start", "vm1")
    assert (p.returncode, p.stderr) == (1, "error: " + real.stderr.splitlines()[-1] + "\n")
    p = ours(kube, k, "stop", "vm1")
    assert (p.returncode, p.stdout) == (0, "VM vm1 was scheduled to stop\n"), p.stderr
    # a context without a namespace: `default`, where there is no vm1
    p, real = ours(kube, k, "--context", "plain", "start", "vm1"), real_virtctl("--context", "plain", "start", "vm1")
    assert (p.returncode, p.stderr) == (1, "error: " + real.stderr.splitlines()[-1] + "\n")
