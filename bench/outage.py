"""The controller's backlog after an outage (issue 30): API server restarts under load, then the
drain rate, against the controller's normal start rate in the same run.

    python bench/outage.py [--vms 1000] [--restarts 10] [--down 1.0] [--workers 16] [--src DIR]

Starts the test environment's control plane (tests/kube), the CRDs, a cluster instancetype and
preference, and `instancetype controller` (its sources from `--src`, default this checkout: pass
another checkout's `src` to measure it the same way). Then:

1. normal: `--vms` VMs created, timed until every one is Running (starts/s);
2. outage: `--vms` more VMs created, then kube-apiserver restarted `--restarts` times at once
   (down `--down` seconds each, then up until it is ready, then at once again): the controller
   fails, retries and backs off meanwhile;
3. drain: from the moment the API server is back for good, the seconds until every VM runs, and
   the rate (VMs Running after the last restart / those seconds), against 1.'s.

The counter is an informer on the VMs (no polling); the controller's own counts (retries,
errors) come from its log.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from bench.cluster import IT, NS, PREF, in_parallel, stop_controller, typical_vm  # noqa: E402
from tests.kube.cluster import Cluster  # noqa: E402
from tests.kube.controller_env import apply_crds  # noqa: E402

from instancetype.store.kube import Informer, KubeStore  # noqa: E402


def start_controller(kube: Cluster, src: str, workers: int, log_path: Path) -> subprocess.Popen:
    env = kube.env()
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    log = open(log_path, "wb")
    ctl = subprocess.Popen([sys.executable, "-m", "instancetype", "controller", "--kubeconfig",
                            str(kube.kubeconfig), "--workers", str(workers), "--no-catalog", "-v"],
                           env=env, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        if "running with" in log_path.read_text(errors="replace"):
            break
        time.sleep(0.1)
    return ctl


class Counter:
    """VMs seen Running, with the time each was first seen."""

    def __init__(self, store: KubeStore):
        self.first: dict[str, float] = {}
        self.lock = threading.Lock()
        self.informer = Informer(store, "VirtualMachine", NS, on_add=self.seen,
                                 on_update=lambda old, new: self.seen(new))

    def seen(self, obj: dict) -> None:
        if (obj.get("status") or {}).get("printableStatus") == "Running":
            with self.lock:
                self.first.setdefault(obj["metadata"]["name"], time.monotonic())

    def running(self, prefix: str) -> list[float]:
        with self.lock:
            return sorted(t for name, t in self.first.items() if name.startswith(prefix))

    def wait(self, prefix: str, n: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.running(prefix)) >= n:
                return True
            time.sleep(0.2)
        return False


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vms", type=int, default=1000)
    ap.add_argument("--restarts", type=int, default=10)
    ap.add_argument("--down", type=float, default=1.0)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--src", default=str(ROOT / "src"))
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as d:
        kube = Cluster(Path(d) / "kube").start()
        ctl = None
        try:
            apply_crds(kube)
            kube.kubectl("create", "namespace", NS)
            kube.kubectl("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                                 "items": [IT, PREF]}))
            stores = [KubeStore(str(kube.kubeconfig)) for _ in range(args.clients)]
            ctl = start_controller(kube, args.src, args.workers, Path(d) / "controller.log")
            counter = Counter(stores[0])
            counter.informer.start()
            counter.informer.wait_for_sync(60)

            # 1. normal
            t0 = time.monotonic()
            in_parallel(stores, [typical_vm(f"a-{i:05d}") for i in range(args.vms)])
            ok = counter.wait("a-", args.vms, args.timeout)
            normal = args.vms / (counter.running("a-")[-1] - t0)
            print(f"normal: {args.vms} VMs Running in {counter.running('a-')[-1] - t0:.1f}s: "
                  f"{normal:.1f} starts/s{'' if ok else ' (TIMED OUT)'}")

            # 2. outage: the VMs created at once, then the restarts begin while they start
            in_parallel(stores, [typical_vm(f"b-{i:05d}") for i in range(args.vms)])
            t_out = time.monotonic()
            running_at_out = len(counter.running("b-"))
            for _ in range(args.restarts):
                kube.stop_apiserver()
                time.sleep(args.down)
                kube.start_apiserver()
            back = time.monotonic()
            running_at_back = len(counter.running("b-"))
            ok = counter.wait("b-", args.vms, args.timeout)
            done = counter.running("b-")[-1] if counter.running("b-") else time.monotonic()
            drained = args.vms - running_at_back
            print(f"outage: {args.vms} VMs created, {running_at_out} Running when {args.restarts} API server "
                  f"restarts began ({args.down:g}s down each, {back - t_out:.1f}s in all); {running_at_back} "
                  f"Running when it was back for good")
            print(f"drain: {drained} VMs Running {done - back:.1f}s after: "
                  f"{drained / max(done - back, 1e-9):.1f} starts/s ({drained / max(done - back, 1e-9) / normal:.0%} "
                  f"of normal){'' if ok else ' (TIMED OUT)'}")
            counter.informer.stop()
        finally:
            if ctl is not None:
                lines = stop_controller(ctl, Path(d) / "controller.log")
                retries = [line for line in lines if "(retry " in line]
                print(f"controller log: {len(retries)} retry lines; last: {lines[-1] if lines else ''}")
            kube.stop()


if __name__ == "__main__":
    main()
