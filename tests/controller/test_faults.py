"""Faults, for real: several processes on one state file, and kill -9 in the middle of a bulk apply."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from instancetype.controller import Cluster

from .test_cluster import IT, PREF, vm

WRITER = r"""
import json, sys
from instancetype.controller import Cluster
path, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
vm = json.loads(sys.argv[4])
with Cluster.open(path) as c:
    for i in range(n):
        v = json.loads(json.dumps(vm)); v["metadata"]["name"] = f"{prefix}-{i}"
        c.apply(v)
        print(i, flush=True)
"""


def _spawn(path, prefix, n):
    return subprocess.Popen([sys.executable, "-c", WRITER, str(path), prefix, str(n), json.dumps(vm())],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _setup(path):
    with Cluster.open(str(path)) as c:
        c.apply(IT)
        c.apply(PREF)


def _check_converged(path):
    with Cluster.open(str(path)) as c:
        vms = list(c.list("VirtualMachine"))
        vmis = {v["metadata"]["name"] for v in c.list("VirtualMachineInstance")}
        revs = list(c.list("ControllerRevision"))
        for v in vms:
            assert v["metadata"]["name"] in vmis, v["metadata"]["name"]
            assert v["status"]["printableStatus"] == "Running"
        assert len(vmis) == len(vms)
        assert len(revs) == 2 * len(vms)
        return len(vms)


def test_concurrent_writers_of_different_objects_all_succeed(tmp_path):
    path = tmp_path / "state.db"
    _setup(path)
    procs = [_spawn(path, f"w{k}", 15) for k in range(3)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert _check_converged(path) == 45


def test_kill_9_during_bulk_apply_leaves_a_consistent_store(tmp_path):
    path = tmp_path / "state.db"
    _setup(path)
    p = _spawn(path, "bulk", 400)
    # let it get some way in, then kill it without warning
    for _ in range(20):
        line = p.stdout.readline()
        if not line:
            break
    # a real clock passing is the subject: the kill lands inside a later apply, not between two
    time.sleep(0.05)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    n = _check_converged(path)
    assert 0 < n < 400
    # the next writer carries on on the same file
    q = _spawn(path, "after", 3)
    q.communicate(timeout=60)
    assert q.returncode == 0
    assert _check_converged(path) == n + 3
