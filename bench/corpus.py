"""Answers per second over the public expand.jsonl through the conformance adapter.

    python bench/corpus.py [FILE.jsonl]

Process start is excluded: one warm-up request is answered before the clock
starts; then every request is written and every answer read. KubeVirt's own
code answers about 13,800 per second through the same protocol here.
"""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import threading
import time

HERE = pathlib.Path(__file__).parent


def main() -> None:
    path = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent / "tests/conformance/expand.jsonl"
    lines = []
    for raw in path.read_text().splitlines():
        if raw.strip():
            v = json.loads(raw)
            req = dict(v["request"], id=v["id"])
            lines.append(json.dumps(req) + "\n")
    p = subprocess.Popen([sys.executable, "-m", "instancetype.conformance"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, bufsize=1 << 16)
    p.stdin.write(lines[0])
    p.stdin.flush()
    p.stdout.readline()  # warm: imports done

    def feed():
        p.stdin.writelines(lines)
        p.stdin.close()

    t = time.perf_counter()
    threading.Thread(target=feed, daemon=True).start()
    n = sum(1 for _ in p.stdout)
    dt = time.perf_counter() - t
    p.wait()
    print(f"{path.name}: {n} answers in {dt:.3f} s = {n / dt:,.0f} answers/s")


if __name__ == "__main__":
    main()
