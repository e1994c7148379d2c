"""The engine beside KubeVirt's own Go expand, in one run, on one core.

    python bench/expand.py [--rounds 5] [--seconds 1] [--cpu N] [--no-go] [--compiled]

`--compiled` measures the engine as `INSTANCETYPE_COMPILE=1 pip install .` builds it (mypyc;
setup.py), built once per source change by tests/compiled_engine.py; without it, the Python engine.

The anchor is `bench/go/` (KubeVirt v1.7.0's `expand.New(...).Expand` from the Go module proxy,
the specs already found), built once into the test binaries' cache (tests/kube/build.py:
`~/.cache/instancetype/kube/<version>/bin/expandbench`, its GOMODCACHE and GOCACHE shared with
virtctl's build, so nothing is downloaded twice). Its rounds (`testing.Benchmark`, GOMAXPROCS=1)
and Python's (`instancetype.expand`, the same request) alternate, each pinned to the same one
core (`--cpu`, default the last), so both see the same machine load; each side's figure is the
median of its rounds, the ratio is Python's median over Go's (and the rounds' own ratios, whose
median is steadier under a changing load, and the best round of each side, the least disturbed). Python is timed twice in each round: with the spec
dicts (matched by their content at every call) and with the specs decoded once
(`instancetype.decode_instancetype` / `decode_preference`), which is how Go's anchor gets them. Go's answer and Python's are
compared once (nulls and empty objects aside) before anything is timed.

Then, one row each, µs per call of the other public functions on the same VM beside a JSON round
trip (`json.loads(json.dumps(vm))`), the baseline of earlier rounds of this file.

Python's allocations are not counted the same way (CPython reuses dicts and lists from free
lists that no allocation hook sees); the dicts and lists of the answer, which every call must
build, are printed instead.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REQUEST = HERE / "typical-expand.json"
sys.path.insert(0, str(HERE.parent))        # tests/kube/build.py: the Go build machinery

import instancetype  # noqa: E402


def go_binary() -> pathlib.Path:
    """bench/go built once, cached (and locked) as the test environment's binaries are."""
    from tests.kube import build

    return build.binary("expandbench", recipe=build.Recipe("go", "."), module_dir=HERE / "go")


def go_round(binary: pathlib.Path, seconds: float, cpu: int) -> dict:
    env = dict(os.environ, GOMAXPROCS="1")
    out = subprocess.run(["taskset", "-c", str(cpu), str(binary), "-request", str(REQUEST),
                          "-rounds", "1", "-benchtime", f"{seconds}s"],
                         env=env, capture_output=True, text=True, check=True, timeout=600).stdout
    return json.loads(out.splitlines()[-1])


def go_answer(binary: pathlib.Path) -> dict:
    out = subprocess.run([str(binary), "-request", str(REQUEST), "-print"],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    return json.loads(out)


def pruned(v):
    """`v` without nulls and empty objects/lists (Go prints zero structs; we omit them)."""
    if isinstance(v, dict):
        out = {k: pruned(x) for k, x in v.items()}
        return {k: x for k, x in out.items() if x not in (None, {}, [])}
    if isinstance(v, list):
        return [pruned(x) for x in v]
    return v


def py_round(fn, seconds: float) -> float:
    """Mean ns per call over about `seconds` (calibrated first), as testing.Benchmark reports."""
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t
        if dt > 0.05:
            break
        n *= 2
    n = max(1, int(n * seconds / dt))
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e9


def containers(v) -> int:
    """The dicts and lists of an answer: what one call must at least build."""
    if isinstance(v, dict):
        return 1 + sum(containers(x) for x in v.values())
    if isinstance(v, list):
        return 1 + sum(containers(x) for x in v)
    return 0


def best_of(fn, seconds: float) -> float:
    """Best-of-5 mean µs per call, each round about seconds/5 long."""
    return min(py_round(fn, seconds / 5) for _ in range(5)) / 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5, help="alternating Go/Python rounds")
    ap.add_argument("--seconds", type=float, default=1.0, help="length of one round")
    ap.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)), help="the one core")
    ap.add_argument("--no-go", action="store_true", help="Python only (no Go toolchain)")
    ap.add_argument("--compiled", action="store_true", help="the mypyc-compiled engine (setup.py)")
    args = ap.parse_args()
    if args.compiled and os.environ.get("_BENCH_COMPILED") != "1":
        from tests.compiled_engine import install_dir

        target = install_dir()      # then run again with it first on the path
        env = dict(os.environ, PYTHONPATH=str(target), _BENCH_COMPILED="1")
        os.execve(sys.executable, [sys.executable, __file__, *sys.argv[1:]], env)
    compiled = getattr(__import__("instancetype.engine.expand").engine.expand, "__file__", "").endswith(".so")
    print(f"engine: {'compiled (mypyc)' if compiled else 'Python'}")
    if not 1 <= args.rounds <= 100 or not 0.01 <= args.seconds <= 60:
        sys.exit("bench/expand.py: --rounds must be 1-100 and --seconds 0.01-60")
    os.sched_setaffinity(0, {args.cpu})

    req = json.loads(REQUEST.read_text())
    vm, it, pref = req["vm"], req["instancetype"], req["preference"]

    def expand():
        return instancetype.expand(vm, instancetype=it, preference=pref)

    # Go's anchor is given its specs found and decoded (fake finders); Python's like case is a
    # spec decoded once (instancetype.decode_instancetype / decode_preference). Both are timed:
    # the dicts, matched by their content at every call, and the decoded specs.
    it_decoded, pref_decoded = instancetype.decode_instancetype(it), instancetype.decode_preference(pref)

    def expand_decoded():
        return instancetype.expand(vm, instancetype=it_decoded, preference=pref_decoded)

    binary = None
    if not args.no_go:
        from tests.kube.build import BuildError

        try:
            binary = go_binary()
        except BuildError as e:
            sys.exit(f"bench/expand.py: the Go anchor could not be built (--no-go runs Python only): {e}")
    if binary is not None:
        same = pruned(go_answer(binary)) == pruned(expand()) == pruned(expand_decoded())
        print(f"Go's and Python's expanded VM: {'the same' if same else 'DIFFERENT'}")
    go_ns, py_ns, dec_ns, go_allocs = [], [], [], None
    for r in range(args.rounds):
        line = f"round {r + 1}:"
        if binary is not None:
            g = go_round(binary, args.seconds, args.cpu)
            go_ns.append(g["ns_op"])
            go_allocs = g["allocs_op"]
            line += f"  Go {g['ns_op'] / 1000:6.2f} µs/op ({g['allocs_op']} allocs, {g['bytes_op']} B)"
        py_ns.append(py_round(expand, args.seconds))
        dec_ns.append(py_round(expand_decoded, args.seconds))
        line += f"  Python {py_ns[-1] / 1000:6.2f}, decoded specs {dec_ns[-1] / 1000:6.2f} µs/op"
        if binary is not None:
            line += f"  {py_ns[-1] / go_ns[-1]:5.2f}x, {dec_ns[-1] / go_ns[-1]:5.2f}x"
        print(line, flush=True)
    print(f"\n(each answer builds at least {containers(expand())} dicts and lists)")
    go_med = statistics.median(go_ns) / 1000 if go_ns else None
    if go_med is not None:
        print(f"KubeVirt Go Expand                      median {go_med:6.2f} µs/op  ({go_allocs} allocs/op)")
    for label, ns in (("instancetype.expand, spec dicts", py_ns), ("instancetype.expand, decoded specs", dec_ns)):
        med = statistics.median(ns) / 1000
        line = f"{label:39s} median {med:6.2f} µs/op"
        if go_med is not None:
            ratios = sorted(p / g for p, g in zip(ns, go_ns))
            line += (f"  {med / go_med:.2f}x Go (per round {ratios[0]:.2f}-{ratios[-1]:.2f}x, "
                     f"median {statistics.median(ratios):.2f}x; best rounds {min(ns) / 1000:.2f} against "
                     f"{min(go_ns) / 1000:.2f} µs, {min(ns) / min(go_ns):.2f}x)")
        print(line)

    print()
    rows = [
        ("json.loads(json.dumps(vm)) [baseline]", lambda: json.loads(json.dumps(vm))),
        ("instancetype.expand", expand),
        ("instancetype.expand, decoded specs", expand_decoded),
        # admit_vm: its instancetype part (the admit-vm contract) and the whole admission (the
        # VM webhooks' every rule).
        ("instancetype.admit_vm(whole=False)",
         lambda: instancetype.admit_vm(vm, instancetype=it, preference=pref, whole=False)),
        ("instancetype.admit_vm (whole admission)",
         lambda: instancetype.admit_vm(vm, instancetype=it, preference=pref)),
        ("instancetype.build_vmi", lambda: instancetype.build_vmi(vm, instancetype=it, preference=pref)),
    ]
    base = None
    for label, fn in rows:
        us = best_of(fn, args.seconds)
        base = base or us
        print(f"{label:45s} {us:8.2f} µs/call  {us / base:5.2f}x baseline")


if __name__ == "__main__":
    main()
