"""The VMs the conformance vectors carry (each request's `vm` and `old`) and the benchmark's
typical VM: the corpus the engine's C paths are held to their Python counterparts on."""
from __future__ import annotations

import json
import pathlib
from functools import lru_cache

ROOT = pathlib.Path(__file__).resolve().parents[1]
VECTORS = ROOT / "tests" / "conformance"
TYPICAL = ROOT / "bench" / "typical-expand.json"


@lru_cache(maxsize=1)
def conformance_vms() -> list[dict]:
    """Read once per process; callers copy before they change one."""
    out = [json.loads(TYPICAL.read_text())["vm"]]
    for path in sorted(VECTORS.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                req = json.loads(line)["request"]
                out.extend(v for v in (req.get("vm"), req.get("old")) if isinstance(v, dict))
    return out
