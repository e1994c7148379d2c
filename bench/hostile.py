"""`serve`'s admission under hostile input, in process (issue 30): what one review costs, and
what a huge one does to the small ones beside it.

    python bench/hostile.py [--disks 60000] [--small 200]

1. seconds per review (decode + answer + encode, on an admission worker) of the typical VM
   (bench/typical-expand.json's), a VM 10,000 levels deep (an unknown field under
   `spec.template.metadata`, as the API server keeps it), and a VM of `--disks` disks;
2. `--small` typical reviews sent one after another while the huge one is answered, through the
   admission pool (`webhook.workers`, sized to the machine): their p50/p99 latency, and how many
   were answered before the huge one was; then the same with the huge one answered on the calling
   thread first (what admission on the event loop did: every small one waits for it).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from instancetype.webhook import review  # noqa: E402
from instancetype.webhook.workers import AdmissionPool  # noqa: E402


def _review(obj_text: str, uid: str) -> bytes:
    return (b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"' + uid.encode()
            + b'","operation":"CREATE","namespace":"default","kind":{"group":"kubevirt.io","version":"v1",'
            b'"kind":"VirtualMachine"},"object":' + obj_text.encode() + b"}}")


def typical() -> dict:
    data = json.loads((ROOT / "bench" / "typical-expand.json").read_text())
    vm = data["vm"]
    vm.setdefault("metadata", {})["namespace"] = "default"
    for side in ("instancetype", "preference"):       # no lookups here: the engine's cost only
        vm["spec"].pop(side, None)
    vm["spec"]["template"]["spec"]["domain"].setdefault("resources", {"requests": {"memory": "1Gi"}})
    return vm


def deep(depth: int) -> str:
    vm = typical()
    vm["spec"]["template"]["metadata"] = {"x": "@@"}
    inner = depth - 4
    return json.dumps(vm).replace('"@@"', '{"a":' * (inner - 1) + "{}" + "}" * (inner - 1))


def huge(disks: int) -> str:
    vm = typical()
    spec = vm["spec"]["template"]["spec"]
    spec["domain"]["devices"]["disks"] = [{"name": f"d{i}", "disk": {"bus": "virtio"}} for i in range(disks)]
    spec["volumes"] = [{"name": f"d{i}", "containerDisk": {"image": "quay.io/containerdisks/fedora:40"}}
                       for i in range(disks)]
    return json.dumps(vm)


def handle(body: bytes) -> bytes:
    request = review.decode(body)
    out, _ = review.answer("/virtualmachines-mutate", request, objects=[], config=None)
    return json.dumps(out).encode()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--disks", type=int, default=60_000)
    ap.add_argument("--small", type=int, default=200)
    args = ap.parse_args()
    pool = AdmissionPool()
    small = _review(json.dumps(typical()), "small")
    bodies = {"typical": small, "10,000 levels deep": _review(deep(review.MAX_OBJECT_DEPTH), "deep"),
              f"{args.disks:,} disks": _review(huge(args.disks), "huge")}
    for name, body in bodies.items():
        pool.submit(handle, body).result()          # warm (imports, caches)
        times = []
        for _ in range(3 if name != "typical" else 200):
            t = time.perf_counter()
            pool.submit(handle, body).result()
            times.append(time.perf_counter() - t)
        print(f"{name}: {len(body) / 1024:,.0f} KiB, {min(times) * 1e3:.1f} ms per review (best of {len(times)})")

    big = bodies[f"{args.disks:,} disks"]
    latencies, before_huge = [], 0
    huge_done = threading.Event()
    pool.submit(handle, big).add_done_callback(lambda _: huge_done.set())
    for _ in range(args.small):
        t = time.perf_counter()
        pool.submit(handle, small).result()
        latencies.append(time.perf_counter() - t)
        before_huge += not huge_done.is_set()
    huge_done.wait(600)
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(f"admission pool ({pool.size} workers): {args.small} small reviews sent one after another as the huge "
          f"one starts: p50 {statistics.median(latencies) * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms; {before_huge} "
          f"answered before the huge one")
    t = time.perf_counter()
    handle(big)
    handle(small)
    print(f"one thread (admission on the event loop, as before): a small review sent as the huge one starts "
          f"waits {(time.perf_counter() - t) * 1e3:.0f} ms")
    pool.close()


if __name__ == "__main__":
    main()
