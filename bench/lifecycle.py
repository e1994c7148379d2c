"""The embedded store and controller at scale: apply, start, restart, list.

    python bench/lifecycle.py [--vms 10000] [--mode batch|each|cli|both|all] [--shared-revisions]

One instancetype, one preference and N VMs (runStrategy Always, so applying starts them):
- batch: all N VMs applied in one `Cluster.apply_all` (one transaction);
- each:  one `Cluster.apply` per VM (one transaction each);
- cli:   one `instancetype apply -f list.json` of a List file, then `instancetype get vm -A`;
then every VM restarted, and all VMs listed. Prints VM starts per second, revisions created,
state-file size per VM and the peak memory of the process (ru_maxrss), each phase in a fresh
process so that peaks do not mix. Targets (issue 7): >= 1,000 VM starts/s in one batch,
listing 10,000 VMs under one second, memory flat in N.

--shared-revisions: each mode runs twice in the same run, without and then with the KubeVirt
object's `instancetype.kubevirt.io/shared-revisions: "true"` (rows marked `+shared`), and the
batch rows add the bytes of stored ControllerRevision JSON per VM, and a last phase deletes the
VMs one by one (the collection of shared revisions). Targets (issue 15): revisions
stored = distinct specs (2 here), state per VM at most half of the per-VM revisions' figure.

    python bench/lifecycle.py --mode batch --vms 300 --cpu-rounds 4 [--tree SRC ...]

Starts per CPU-second (issue 24 item 10): one `Cluster.apply_all` of N VMs timed by the process's
CPU time (`time.process_time`, which another process's load does not change as it changes wall
time), after one VM applied and started untimed (the modules a start imports lazily are loaded
and compiled then, not counted). Each `--tree` is a `src` directory of another checkout (e.g.
`git archive fc631bf src | tar -x -C /tmp/fc631bf`), imported instead of this one's; the trees
run in turn in each round, so that a shared machine's load falls on all alike.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

IT = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
      "metadata": {"name": "u1.medium"}, "spec": {"cpu": {"guest": 1}, "memory": {"guest": "4Gi"}}}
PREF = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterPreference",
        "metadata": {"name": "fedora"},
        "spec": {"cpu": {"preferredCPUTopology": "sockets"},
                 "devices": {"preferredDiskBus": "virtio", "preferredInterfaceModel": "virtio", "preferredRng": {}},
                 "features": {"preferredSmm": {}},
                 "firmware": {"preferredUseEfi": True, "preferredUseSecureBoot": True}}}


KUBEVIRT_SHARED = {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                   "metadata": {"name": "kubevirt", "namespace": "kubevirt",
                                "annotations": {"instancetype.kubevirt.io/shared-revisions": "true"}}}


def make_vm(i: int) -> dict:
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": f"vm-{i:05d}"},
            "spec": {"runStrategy": "Always",
                     "instancetype": {"kind": "VirtualMachineClusterInstancetype", "name": "u1.medium"},
                     "preference": {"kind": "VirtualMachineClusterPreference", "name": "fedora"},
                     "template": {"spec": {"domain": {"devices": {}},
                                           "volumes": [{"name": "containerdisk",
                                                        "containerDisk": {"image": "quay.io/containerdisks/fedora"}}]}}}}


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def phase(name: str, state: str, n: int, shared: bool = False, warm_up: bool = False) -> dict:
    from instancetype.controller import Cluster

    out: dict = {"phase": name + ("+shared" if shared else ""), "vms": n}
    with Cluster.open(state) as c:
        if name in ("batch", "each"):
            if shared:
                c.apply(KUBEVIRT_SHARED)
            c.apply(IT)
            c.apply(PREF)
            if warm_up:
                c.apply(make_vm(n))     # a start's lazy imports loaded before the clock runs
            vms = [make_vm(i) for i in range(n)]
            t, cpu = time.perf_counter(), time.process_time()
            if name == "batch":
                results = c.apply_all(vms)
                bad = [r for r in results if isinstance(r, Exception)]
                assert not bad, bad[:1]
            else:
                for v in vms:
                    c.apply(v)
            dt = time.perf_counter() - t
            out["cpu_seconds"] = time.process_time() - cpu
            out["seconds"] = dt
            out["per_second"] = n / dt
            out["revisions"] = c.store.count("ControllerRevision")
            out["vmis"] = c.store.count("VirtualMachineInstance")
            out["revision_bytes_per_vm"] = sum(len(json.dumps(r, separators=(",", ":")))
                                               for r in c.store.list("ControllerRevision")) / max(n, 1)
        elif name == "restart":
            t = time.perf_counter()
            for i in range(n):
                c.restart(f"vm-{i:05d}")
            dt = time.perf_counter() - t
            out["seconds"], out["per_second"] = dt, n / dt
        elif name == "delete":
            # One VM a transaction, as `delete vm NAME` does; shared revisions go with their last VM.
            t = time.perf_counter()
            for i in range(n):
                c.delete("VirtualMachine", f"vm-{i:05d}")
            dt = time.perf_counter() - t
            out["seconds"], out["per_second"] = dt, n / dt
            out["revisions"] = c.store.count("ControllerRevision")
            out["vmis"] = c.store.count("VirtualMachineInstance")
        elif name == "list":
            t = time.perf_counter()
            count = sum(1 for _ in c.list("VirtualMachine"))
            out["seconds"] = time.perf_counter() - t
            out["listed"] = count
    for suffix in ("", "-wal"):
        if os.path.exists(state + suffix):
            out["state_bytes"] = out.get("state_bytes", 0) + os.path.getsize(state + suffix)
    out["bytes_per_vm"] = out.get("state_bytes", 0) / max(n, 1)
    out["peak_mib"] = peak_mib()
    return out


def cli_phase(d: str, n: int, shared: bool = False) -> None:
    """The same VMs through the command line: one `apply -f` of a List file, then `get vm -A`."""
    tag = "cli+shared" if shared else "cli"
    state = os.path.join(d, f"{tag}.db")
    path = os.path.join(d, f"{tag}.json")
    head = [KUBEVIRT_SHARED] if shared else []
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": head + [IT, PREF] + [make_vm(i) for i in range(n)]}, f)
    cmd = [sys.executable, "-m", "instancetype", "--state", state]
    subprocess.run(cmd + ["get", "vm"], capture_output=True, check=True)   # first use: catalogue deployed
    t = time.perf_counter()
    p = subprocess.run(cmd + ["apply", "-f", path], capture_output=True, text=True)
    dt = time.perf_counter() - t
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stdout.count("\n")
    print(f"{tag:14s} {n:6d} VMs  apply -f List: {dt:7.2f} s  {n / dt:8.0f} VMs/s applied and started "
          f"({lines} lines)", flush=True)
    t = time.perf_counter()
    p = subprocess.run(cmd + ["get", "vm", "-A"], capture_output=True, text=True, check=True)
    dt = time.perf_counter() - t
    print(f"{tag:14s} {n:6d} VMs  get vm -A: {dt * 1000:7.0f} ms whole process ({p.stdout.count(chr(10)) - 1} rows)",
          flush=True)


def run_phase(name: str, state: str, n: int, shared: bool = False, *, tree: str | None = None,
              warm_up: bool = False) -> dict:
    env = None
    if tree is not None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([tree, *filter(None, [os.environ.get("PYTHONPATH")])]))
    p = subprocess.run([sys.executable, __file__, "--phase", name, "--state", state, "--vms", str(n)]
                       + (["--shared-revisions"] if shared else []) + (["--warm-up"] if warm_up else []),
                       capture_output=True, text=True, check=True, env=env)
    return json.loads(p.stdout)


def cpu_rounds(trees: list[str], n: int, rounds: int) -> None:
    """Batch starts per CPU-second, the trees in turn in each round (each in a fresh process and
    a fresh state file)."""
    rates: dict[str, list[float]] = {t: [] for t in trees}
    with tempfile.TemporaryDirectory() as d:
        for r in range(rounds):
            for i, tree in enumerate(trees):
                state = os.path.join(d, f"round{r}-tree{i}.db")
                out = run_phase("batch", state, n, tree=None if tree == "." else tree, warm_up=True)
                rates[tree].append(n / out["cpu_seconds"])
    for tree in trees:
        name = "this tree" if tree == "." else tree
        print(f"{name:40s} {n} VMs, starts per CPU-second: "
              + ", ".join(f"{x:.0f}" for x in rates[tree])
              + f"  (median {statistics.median(rates[tree]):.0f})", flush=True)


def report(r: dict) -> None:
    parts = [f"{r['phase']:14s} {r['vms']:6d} VMs"]
    if "per_second" in r:
        parts.append(f"{r['seconds']:7.2f} s  {r['per_second']:8.0f} VMs/s")
    if "listed" in r:
        parts.append(f"listed {r['listed']} in {r['seconds'] * 1000:.0f} ms")
    if "revisions" in r:
        parts.append(f"revisions {r['revisions']}  VMIs {r['vmis']}")
    if "revision_bytes_per_vm" in r:
        parts.append(f"revision JSON {r['revision_bytes_per_vm']:.0f} B/VM")
    parts.append(f"state {r['bytes_per_vm'] / 1024:.1f} KiB/VM  peak {r['peak_mib']:.0f} MiB")
    print("  ".join(parts), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vms", type=int, default=10000)
    ap.add_argument("--mode", choices=("batch", "each", "cli", "both", "all"), default="all")
    ap.add_argument("--phase")
    ap.add_argument("--state")
    ap.add_argument("--shared-revisions", action="store_true",
                    help="run each mode without and with shared ControllerRevisions")
    ap.add_argument("--warm-up", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--cpu-rounds", type=int, default=0,
                    help="batch starts per CPU-second, this many rounds (with --tree: the trees in turn)")
    ap.add_argument("--tree", action="append", default=[],
                    help="another checkout's src directory to measure beside this one (--cpu-rounds)")
    args = ap.parse_args()
    if args.phase:
        print(json.dumps(phase(args.phase, args.state, args.vms, args.shared_revisions, args.warm_up)))
        return
    if args.cpu_rounds:
        cpu_rounds([*args.tree, "."], args.vms, args.cpu_rounds)
        return
    modes = {"both": ("batch", "each"), "all": ("batch", "each", "cli")}.get(args.mode, (args.mode,))
    variants = (False, True) if args.shared_revisions else (False,)
    with tempfile.TemporaryDirectory() as d:
        for mode in modes:
            for shared in variants:
                if mode == "cli":
                    cli_phase(d, args.vms, shared)
                    continue
                state = os.path.join(d, f"{mode}{'-shared' if shared else ''}.db")
                report(run_phase(mode, state, args.vms, shared))
                if mode == "batch":
                    report(run_phase("list", state, args.vms, shared))
                    report(run_phase("restart", state, args.vms, shared))
                    if args.shared_revisions:
                        report(run_phase("delete", state, args.vms, shared))


if __name__ == "__main__":
    main()
