"""Several real processes on one state file: no lost writes, exact conflicts, no `database is locked`."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import threading

import pytest
from tests.builders import vm_object

from instancetype.store.base import StateFileError
from instancetype.store.sqlite import SqliteStore

# Each worker: open the store, say "ready", wait at the start gate (all begin together), act, print JSON.
WORKER = r"""
import json, os, sys
from instancetype.store.sqlite import SqliteStore
from instancetype.errors import Error
from tests.builders import vm_object
path, gate, action, arg = sys.argv[1], int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
store = SqliteStore(path, lock_timeout=arg.get("lock_timeout", 120))
print("ready", flush=True)
os.read(gate, 1)        # returns (EOF) when the test closes the gate's write end: all start at once
out = {"ok": [], "errors": []}
try:
    if action == "create":
        for j in range(arg["count"]):
            o = store.create(vm_object(f"{arg['prefix']}-{j}", {"n": j}, namespace=None))
            o = store.patch("VirtualMachine", o["metadata"]["name"], {"spec": {"touched": True}})
            out["ok"].append(o["metadata"]["resourceVersion"])
    elif action == "update":
        obj = arg["object"]
        obj["spec"] = {"writer": arg["writer"]}
        out["ok"].append(store.update(obj)["metadata"]["resourceVersion"])
    elif action == "hold":
        with store.transaction() as tx:
            held = tx.create(vm_object(arg["name"], namespace=None))
            print("holding", flush=True)
            sys.stdin.readline()        # the lock is held until the test closes our stdin
        out["ok"].append(held["metadata"]["resourceVersion"])
    elif action == "increment":
        from instancetype.store.base import Conflict
        done = 0
        while done < arg["count"]:
            obj = store.get("VirtualMachine", "counter")
            obj["spec"]["n"] += 1
            try:
                store.update(obj)
                done += 1
            except Conflict:
                out["errors"].append(["retried", ""])
    elif action == "open":
        out["ok"].append(store.count("Namespace"))
except Error as e:
    out["errors"].append([type(e).__name__, str(e)])
print(json.dumps(out), flush=True)
"""
ROOT = str(pathlib.Path(__file__).resolve().parents[2])


class Gate:
    """The workers' start line: a pipe whose read end each worker blocks on; closing the write
    end (`open`) wakes them all at once, an event rather than a file polled for."""

    def __init__(self) -> None:
        self.read_fd, self._write_fd = os.pipe()

    def open(self) -> None:
        if self._write_fd is not None:
            os.close(self._write_fd)
            self._write_fd = None

    def close(self) -> None:
        self.open()
        os.close(self.read_fd)


@pytest.fixture
def go():
    gate = Gate()
    yield gate
    gate.close()


def start(path, go: Gate, action, **arg):
    # the worker imports tests.builders: the checkout's root goes first on its path
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    return subprocess.Popen([sys.executable, "-c", WORKER, str(path), str(go.read_fd), action, json.dumps(arg)], env=env,
                            pass_fds=(go.read_fd,),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def ready(*procs):
    """Wait until every worker has opened the store (so the gate starts them together)."""
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()


def finish(proc, timeout=120):
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    assert "database is locked" not in out + err
    return json.loads(out.strip().splitlines()[-1])


def test_fresh_file_opened_by_many_processes_at_once(tmp_path, go):
    go.open()
    procs = [start(tmp_path / "s.db", go, "open") for _ in range(6)]
    results = [finish(p) for p in procs]
    assert all(r == {"ok": [1], "errors": []} for r in results), results


def test_writers_of_different_objects_all_succeed(tmp_path, go):
    path = tmp_path / "s.db"
    SqliteStore(path).close()
    procs = [start(path, go, "create", prefix=f"p{i}", count=40) for i in range(6)]
    ready(*procs)
    go.open()
    results = [finish(p) for p in procs]
    assert all(not r["errors"] for r in results), results
    rvs = [rv for r in results for rv in r["ok"]]
    assert len(rvs) == len(set(rvs)) == 240
    with SqliteStore(path) as s:
        objs = list(s.list("VirtualMachine"))
        assert len(objs) == 240
        assert all(o["spec"]["touched"] and o["metadata"]["generation"] == 2 for o in objs)


def test_two_writers_from_one_resource_version_one_conflicts(tmp_path, go):
    path = tmp_path / "s.db"
    with SqliteStore(path) as s:
        obj = s.create(vm_object("vm1", namespace=None))
    procs = [start(path, go, "update", object=obj, writer=w) for w in ("a", "b")]
    ready(*procs)
    go.open()
    results = [finish(p) for p in procs]
    oks = [r for r in results if r["ok"]]
    errors = [e for r in results for e in r["errors"]]
    assert len(oks) == 1 and len(errors) == 1, results
    assert errors[0] == ["Conflict", 'Operation cannot be fulfilled on virtualmachines.kubevirt.io "vm1": the object '
                         "has been modified; please apply your changes to the latest version and try again"]
    with SqliteStore(path) as s:
        final = s.get("VirtualMachine", "vm1")
        winner = "a" if results[0]["ok"] else "b"
        assert final["spec"] == {"writer": winner}
        assert final["metadata"]["resourceVersion"] == oks[0]["ok"][0]


def test_read_modify_write_with_retries_loses_nothing(tmp_path, go):
    path = tmp_path / "s.db"
    with SqliteStore(path) as s:
        s.create(vm_object("counter", {"n": 0}, namespace=None))
    procs = [start(path, go, "increment", count=30) for _ in range(4)]
    ready(*procs)
    go.open()
    results = [finish(p) for p in procs]
    assert all(e[0] == "retried" for r in results for e in r["errors"]), results
    with SqliteStore(path) as s:
        counter = s.get("VirtualMachine", "counter")
        assert counter["spec"]["n"] == 120
        assert counter["metadata"]["generation"] == 121


def holding(tmp_path, go: Gate):
    """A fresh state file and a worker holding its write lock (until `finish`)."""
    path = tmp_path / "s.db"
    SqliteStore(path).close()
    go.open()
    holder = start(path, go, "hold", name="held")
    ready(holder)
    assert holder.stdout.readline().strip() == "holding"
    return path, holder


def test_a_writer_waits_for_a_long_transaction(tmp_path, go):
    path, holder = holding(tmp_path, go)
    asked = threading.Event()
    answer: dict = {}

    def write():
        try:
            with SqliteStore(path) as s:
                # SQLite traces a statement as it starts, before BEGIN IMMEDIATE asks for the lock
                s._db.set_trace_callback(lambda sql: sql.startswith("BEGIN IMMEDIATE") and asked.set())
                answer["created"] = s.create(vm_object("waiter", namespace=None))
        except BaseException as e:      # noqa: BLE001 - reported by the test thread below
            answer["error"] = e

    writer = threading.Thread(target=write)
    writer.start()
    assert asked.wait(60), "the writer never asked for the lock"
    assert answer == {}                 # it cannot have the lock while the holder has it ...
    held = finish(holder)               # ... closing the holder's stdin commits and releases it
    writer.join(60)
    assert not writer.is_alive() and "error" not in answer, answer
    assert held["errors"] == []
    # the waiter's write came after the held one, and both are there
    assert int(answer["created"]["metadata"]["resourceVersion"]) > int(held["ok"][0])
    with SqliteStore(path) as s:
        assert {o["metadata"]["name"] for o in s.list("VirtualMachine")} == {"held", "waiter"}


def test_a_lock_held_too_long_is_a_clear_error(tmp_path, go):
    path, holder = holding(tmp_path, go)
    with SqliteStore(path, lock_timeout=0.3) as s:
        with pytest.raises(StateFileError) as e:
            s.create(vm_object("impatient", namespace=None))
        assert str(path) in str(e.value) and "busy" in str(e.value)
        assert "database is locked" not in str(e.value)
        assert s.count("VirtualMachine") == 0          # reads never wait for writers (WAL)
    finish(holder)
