"""CPU time of the engine's hot calls, this tree beside another, interleaved on one core.

    python bench/engine_ab.py --base /path/to/other/checkout/src [--rounds 40] [--cpu N]

On a loaded machine only a same-moment comparison means anything. Two worker processes, one
per tree (`PYTHONPATH`), pinned to the same core, run short bursts of one call alternately
(`expand` 400 calls, the whole VM admission 100, `build_vmi` 120, on bench/typical-expand.json)
and report each burst's CPU time per call (`time.process_time`). Per side: the minimum and
the median of its bursts; the ratio of the minimums, and the median of the burst-by-burst
ratios (this tree over the base).
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
BURST = {"expand": 400, "admit": 100, "build": 120}


def worker() -> None:
    import instancetype

    req = json.loads((HERE / "typical-expand.json").read_text())
    vm, it, pref = req["vm"], req["instancetype"], req["preference"]
    calls = {
        "expand": lambda: instancetype.expand(vm, instancetype=it, preference=pref),
        "admit": lambda: instancetype.admit_vm(vm, instancetype=it, preference=pref),
        "build": lambda: instancetype.build_vmi(vm, instancetype=it, preference=pref),
    }
    for call in calls.values():
        for _ in range(300):
            call()
    print("ready", flush=True)
    for line in sys.stdin:
        name = line.strip()
        call, n = calls[name], BURST[name]
        t = time.process_time()
        for _ in range(n):
            call()
        print((time.process_time() - t) / n * 1e6, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the other tree's src directory")
    ap.add_argument("--rounds", type=int, default=40, help="bursts per side and call")
    ap.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)), help="the one core")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker()
        return
    if not 1 <= args.rounds <= 1000 or not pathlib.Path(args.base, "instancetype").is_dir():
        sys.exit("bench/engine_ab.py: --base must be a src directory holding instancetype; --rounds 1-1000")
    trees = {"base": args.base, "this": str(HERE.parent / "src")}
    workers = {}
    for side, src in trees.items():
        p = subprocess.Popen(["taskset", "-c", str(args.cpu), sys.executable, __file__, "--base", src, "--worker"],
                             env=dict(os.environ, PYTHONPATH=src), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        if p.stdout is None or p.stdout.readline().strip() != "ready":
            sys.exit(f"bench/engine_ab.py: the {side} worker did not start")
        workers[side] = p

    def burst(side: str, name: str) -> float:
        p = workers[side]
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write(name + "\n")
        p.stdin.flush()
        return float(p.stdout.readline())

    print(f"base {trees['base']}  this {trees['this']}  {args.rounds} bursts each, core {args.cpu}")
    for name in BURST:
        got: dict[str, list[float]] = {"base": [], "this": []}
        for r in range(args.rounds):
            for side in (("base", "this") if r % 2 == 0 else ("this", "base")):
                got[side].append(burst(side, name))
        ratios = [t / b for b, t in zip(got["base"], got["this"])]
        print(f"{name:7s} base min {min(got['base']):7.2f} med {statistics.median(got['base']):7.2f} µs | "
              f"this min {min(got['this']):7.2f} med {statistics.median(got['this']):7.2f} µs | "
              f"ratio of mins {min(got['this']) / min(got['base']):.3f}, median ratio {statistics.median(ratios):.3f}",
              flush=True)
    for p in workers.values():
        assert p.stdin is not None
        p.stdin.close()
        p.wait(timeout=60)


if __name__ == "__main__":
    main()
