"""Whole-process wall time of the commands, beside the same-run baselines.

    python bench/commands.py [--runs 15]

Median of N runs each (subprocess, output discarded), in a temporary directory with the files of
issue 6's example. Budgets: `create vm` < 100 ms and < 2x `python -c "import yaml"`; `expand -f`
of one VM < 150 ms and < 3x `python -c "import yaml, json"` (issue 24: at most 2.5x `import yaml`, the
last line, the two run in turn); `catalog fit|list|bundle` < 150 ms;
`migrate-vm` interactive.

    python bench/commands.py --kubeconfig PATH [--vms 1000]

adds `instancetype --kubeconfig PATH get vm -A` beside `kubectl get vm -A` on a cluster where the
system is installed (`instancetype install`), or only its CRDs: the VMs are created in a namespace
of their own (deleted at the end), and the two commands run in turn, so that a shared machine's
load falls on both alike. Target: no slower than kubectl (issue 28: at most 1.2x).

    python bench/commands.py --kubeconfig PATH --floor

adds, in the same turn, what any command line on lightkube pays: `python -c pass` (the interpreter
and `site`), `python -c "import lightkube, httpcore2"` (lightkube and the HTTP stack its client
builds at its first request: httpx2, httpcore2 with h11, h2 and anyio), the same with the cyclic
collector off (as `instancetype` imports them: `gcpause`), and a script that only reads the kubeconfig with lightkube, lists the VMs as Tables
through lightkube's httpx2 client and prints nothing (`FLOOR`, below).

Bytecode: the commands run with their compiled modules cached (`PYTHONPYCACHEPREFIX`, a temporary
directory, filled by one run before the timed ones), as an installed package has them; an
environment with `PYTHONDONTWRITEBYTECODE=1` and no `__pycache__` would otherwise compile every
module of the source tree on every run. `--compile-each-run` times that instead.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

VM = [sys.executable, "-m", "instancetype"]
ENV: dict[str, str] | None = None     # the commands' environment (bytecode caching), set by main()


# `--floor`: the kubeconfig read and the Table pages of `get vm -A` through lightkube's own adapter
# (its imports: lightkube, httpx2, httpcore2 and what they import), each page decoded by msgspec (as
# lightkube's own models are), nothing printed.
FLOOR = """
import sys, msgspec, yaml
from lightkube.config.kubeconfig import KubeConfig
from lightkube.config.client_adapter import Client, ConnectionParams
config = KubeConfig.from_dict(yaml.load(open(sys.argv[1]).read(), Loader=yaml.CSafeLoader)).get()
http = Client(config, ConnectionParams(trust_env=False))
query = {"limit": 500}
while True:
    page = msgspec.json.decode(http.get("/apis/kubevirt.io/v1/virtualmachines", params=query, headers={
        "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}).content)
    query["continue"] = page["metadata"].get("continue")
    if not query["continue"]:
        break
"""


def _run(cmd: list[str], cwd: str) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=ENV)
    return (time.perf_counter() - t) * 1000


def median_ms(cmd: list[str], runs: int, cwd: str) -> float:
    _run(cmd, cwd)      # fills the bytecode cache
    return statistics.median(_run(cmd, cwd) for _ in range(runs))


def medians_in_turn(cmds: list[list[str]], runs: int, cwd: str) -> list[float]:
    """The median of each command, the commands run in turn (a, b, a, b, ...)."""
    times: list[list[float]] = [[] for _ in cmds]
    for cmd in cmds:
        _run(cmd, cwd)
    for _ in range(runs):
        for i, cmd in enumerate(cmds):
            times[i].append(_run(cmd, cwd))
    return [statistics.median(t) for t in times]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--kubeconfig", default=None, help="Also time `get vm -A` on this cluster beside kubectl.")
    ap.add_argument("--vms", type=int, default=1000, help="VMs to create on the cluster (with --kubeconfig).")
    ap.add_argument("--floor", action="store_true",
                    help="With --kubeconfig: also time `python -c pass` and a bare lightkube list (FLOOR).")
    ap.add_argument("--compile-each-run", action="store_true",
                    help="No bytecode cache: every run compiles the modules that have no __pycache__.")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        global ENV
        if not args.compile_each_run:
            ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            ENV["PYTHONPYCACHEPREFIX"] = cache
        if args.kubeconfig:
            cluster_rows(args.kubeconfig, args.vms, args.runs, floor=args.floor)
        else:
            command_rows(args.runs)


def command_rows(runs: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        def make(name: str, *words: str) -> None:
            out = subprocess.run(VM + ["create", *words], capture_output=True, text=True, check=True).stdout
            with open(os.path.join(d, name), "w") as f:
                f.write(out)

        make("it.yaml", "instancetype", "--name", "csmall", "--cpu", "1", "--memory", "128Mi")
        make("pref.yaml", "preference", "--name", "cirros", "--cpu-topology", "cores")
        make("vm.yaml", "vm", "--name", "vm1", "--instancetype", "virtualmachineclusterinstancetype/csmall",
             "--preference", "cirros", "--volume-containerdisk", "src:quay.io/containerdisks/cirros:latest")
        rows = [
            ("python -c 'import yaml' [baseline]", [sys.executable, "-c", "import yaml"]),
            ("python -c 'import yaml, json' [baseline]", [sys.executable, "-c", "import yaml, json"]),
            ("create vm --name x", VM + ["create", "vm", "--name", "x"]),
            ("expand -f vm.yaml -f it.yaml -f pref.yaml", VM + ["expand", "-f", "vm.yaml", "-f", "it.yaml",
                                                                "-f", "pref.yaml"]),
            ("validate -f .", VM + ["validate", "-f", "."]),
            ("catalog fit --cpu 3 --memory 6Gi", VM + ["catalog", "fit", "--cpu", "3", "--memory", "6Gi"]),
            ("catalog list", VM + ["catalog", "list"]),
            ("catalog bundle", VM + ["catalog", "bundle"]),
        ]
        for label, cmd in rows:
            print(f"{median_ms(cmd, runs, d):7.1f} ms  {label}", flush=True)
        # issue 24's budget, `expand -f` at most 2.5x `import yaml`: the two in turn, so that a shared
        # machine's load falls on both alike
        yaml_ms, expand_ms = medians_in_turn([rows[0][1], rows[3][1]], runs, d)
        print(f"{expand_ms / yaml_ms:7.2f} x  expand -f / import yaml, in turn ({expand_ms:.1f} / {yaml_ms:.1f} ms)",
              flush=True)


def _vm(name: str, ns: str) -> dict:
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": name, "namespace": ns},
            "spec": {"runStrategy": "Halted", "template": {"spec": {"domain": {
                "devices": {}, "resources": {"requests": {"memory": "64Mi"}}}}}}}


def cluster_rows(kubeconfig: str, vms: int, runs: int, *, floor: bool = False) -> None:
    """`get vm -A` on `vms` VMs: this command line beside the real kubectl, in the same run."""
    import json

    ns = f"bench-{os.getpid()}"
    kubectl = ["kubectl", "--kubeconfig", kubeconfig]
    subprocess.run(kubectl + ["create", "namespace", ns], check=True, stdout=subprocess.DEVNULL)
    try:
        for start in range(0, vms, 250):
            items = [_vm(f"vm-{i:05d}", ns) for i in range(start, min(start + 250, vms))]
            subprocess.run(kubectl + ["create", "-f", "-"], input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                                            "items": items}),
                           text=True, check=True, stdout=subprocess.DEVNULL)
        with tempfile.TemporaryDirectory() as d:
            rows = [
                (f"kubectl get vm -A ({vms} VMs) [baseline]", kubectl + ["get", "vm", "-A"]),
                (f"instancetype --kubeconfig ... get vm -A ({vms} VMs)", VM + ["--kubeconfig", kubeconfig, "get",
                                                                                "vm", "-A"]),
            ]
            if floor:
                rows += [("python -c pass [floor: the interpreter and site]", [sys.executable, "-c", "pass"]),
                         ("python -c 'import lightkube, httpcore2' [floor: what a lightkube client imports "
                          "before its first request]", [sys.executable, "-c", "import lightkube, httpcore2"]),
                         ("the same with the collector off [floor: as the command line imports them]",
                          [sys.executable, "-c", "import gc; gc.disable(); import lightkube, httpcore2"]),
                         (f"lightkube's client listing the Tables, nothing printed ({vms} VMs) [floor]",
                          [sys.executable, "-c", FLOOR, kubeconfig])]
            medians = medians_in_turn([cmd for _, cmd in rows], runs, d)
            for (label, _), ms in zip(rows, medians):
                print(f"{ms:7.1f} ms  {ms / medians[0]:5.2f}x kubectl  {label}", flush=True)
    finally:
        subprocess.run(kubectl + ["delete", "namespace", ns, "--wait=false"], stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
