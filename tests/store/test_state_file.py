"""The state file under damage and odd circumstances: one clear line naming the file and what to
do, never a silent reset, never `internal error:`; reading still works where writing cannot."""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys

import pytest
from tests.builders import vm

from instancetype.controller import Cluster
from instancetype.errors import StoreError
from instancetype.store.base import StateFileError
from instancetype.store.sqlite import SqliteStore

CLI = [sys.executable, "-m", "instancetype"]
PVC = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "p1"}, "spec": {}}


def _cli(*args, **kw):
    return subprocess.run(CLI + list(args), capture_output=True, text=True, timeout=60, **kw)


def _vm(i: int) -> dict:
    return vm(f"vm-{i}", domain={"devices": {}}, namespace=None, runStrategy="Halted")


def test_an_empty_state_path_is_an_error_not_the_default_file(tmp_path):
    with pytest.raises(StateFileError, match="the state file path is empty"):
        SqliteStore("")
    r = _cli("--state", "", "get", "vm", env={**os.environ, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)})
    assert r.returncode == 1
    # the CLI refuses the empty option before the store is opened (cli/entry.py)
    assert r.stderr.startswith("error: --state: the path is empty"), r.stderr
    assert list(tmp_path.iterdir()) == []          # the default file was not made either


def test_a_truncated_state_file_is_refused_through_the_cli(tmp_path):
    state = tmp_path / "state.db"
    assert _cli("--state", str(state), "apply", "-f", "-", input='{"apiVersion": "v1", "kind": '
                '"PersistentVolumeClaim", "metadata": {"name": "p1"}}').returncode == 0
    os.truncate(state, 0)
    r = _cli("--state", str(state), "get", "pvc")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr == (f"error: state file {state} is empty (0 bytes: truncated, or not a state file); restore a "
                        "backup, or move it aside (a new, empty state file is made where none exists); `sqlite3 FILE "
                        ".recover` may save part of it\n")
    assert os.path.getsize(state) == 0


def test_a_damaged_row_is_one_line_naming_the_object_and_can_be_deleted(tmp_path):
    state = tmp_path / "state.db"
    with Cluster.open(str(state)) as c:
        c.apply(PVC)
        c.apply({**PVC, "metadata": {"name": "p2"}})
    db = sqlite3.connect(state)
    db.execute("UPDATE objects SET data='{\"kind\": \"Persist' WHERE name='p1'")
    db.commit()
    db.close()
    for args in (["get", "pvc", "p1"], ["get", "pvc"], ["describe", "pvc", "p1"], ["get", "pvc", "-o", "yaml"]):
        r = _cli("--state", str(state), *args)
        assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, (args, r.stderr)
        assert r.stderr.startswith(f"error: state file {state} is damaged: the stored persistentvolumeclaims "
                                   "default/p1 cannot be read ("), r.stderr
        assert "internal error" not in r.stderr
    r = _cli("--state", str(state), "delete", "pvc", "p1")
    assert (r.returncode, r.stdout) == (0, 'persistentvolumeclaim "p1" deleted from default namespace\n'), r.stderr
    r = _cli("--state", str(state), "get", "pvc", "-o", "name")
    assert (r.returncode, r.stdout) == (0, "persistentvolumeclaim/p2\n")


def test_a_damaged_index_page_is_found_when_the_file_is_opened(tmp_path):
    state = tmp_path / "state.db"
    with SqliteStore(state) as s, s.transaction() as tx:
        for i in range(400):
            tx.create({**_vm(i), "metadata": {"name": f"vm-{i}", "labels": {"app": f"a{i % 7}", "i": str(i)}}})
    db = sqlite3.connect(state)
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name='labels_by_key'").fetchone()[0]
    db.close()
    with open(state, "r+b") as f:              # scribble over the cells at the end of the index's root page
        f.seek(root * page_size - 1024)
        f.write(bytes(range(256)) * 4)
    with pytest.raises(StateFileError) as e:
        SqliteStore(state)
    assert str(state) in str(e.value) and "is damaged" in str(e.value) and "restore a backup" in str(e.value)


def test_a_big_file_is_checked_on_a_schedule(tmp_path, monkeypatch):
    from instancetype.store import sqlite as sqlite_store

    state = tmp_path / "state.db"
    SqliteStore(state).close()
    monkeypatch.setattr(sqlite_store, "QUICK_CHECK_ALWAYS_BYTES", 0)     # every file counts as big
    stamp = tmp_path / "state.db.checked"
    SqliteStore(state).close()
    assert stamp.exists()                       # checked, and the good check stamped
    os.utime(stamp, (0, 0))                     # long ago: due again
    SqliteStore(state).close()
    assert stamp.stat().st_mtime > 0


def test_a_full_disk_during_a_large_apply_says_so_and_keeps_nothing_of_the_batch(tmp_path):
    state = tmp_path / "state.db"
    with Cluster.open(str(state)) as c:
        pages = c.store._db.execute("PRAGMA page_count").fetchone()[0]
        # SQLite's own limit on the file's size: it fails exactly as on a full disk (SQLITE_FULL)
        c.store._db.execute(f"PRAGMA max_page_count={pages + 40}")
        with pytest.raises(StateFileError) as e:
            c.apply_all([_vm(i) for i in range(500)])
        assert str(e.value) == (f"state file {state}: disk full (database or disk is full); nothing of this write "
                                "was kept")
        assert c.store.count("VirtualMachine") == 0
        c.store._db.execute("PRAGMA max_page_count=1073741823")
        assert all(r.action == "created" for r in c.apply_all([_vm(i) for i in range(5)]))


def _limit_file_size():
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (3 << 20, 3 << 20))


def test_a_write_failing_during_a_cli_apply_is_one_clear_line(tmp_path):
    import json

    state = tmp_path / "state.db"
    assert _cli("--state", str(state), "get", "vm").returncode == 0
    import base64

    manifest = tmp_path / "vms.json"
    # random padding: the store deflates long rows (format 2), so the pad must not compress
    manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                    "items": [{**_vm(i), "metadata": {**_vm(i)["metadata"], "annotations": {
                                        "pad": base64.b64encode(os.urandom(3000)).decode()}}}
                                              for i in range(1500)]}))
    r = _cli("--state", str(state), "apply", "-f", str(manifest), preexec_fn=_limit_file_size)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [f"error: state file {state}: writing to the disk failed (disk I/O error, "
                                     "SQLITE_IOERR_WRITE: a full disk, a file size limit or a failing device); "
                                     "nothing of this write was kept"], r.stderr
    r = _cli("--state", str(state), "get", "vm", "-o", "name")
    assert r.returncode == 0 and r.stdout.count("\n") % 256 == 0      # whole chunks, never half of one


def _without_dac_override():
    """Run as root without the power to write into a directory whose mode forbids it."""
    if not shutil.which("setpriv"):
        pytest.skip("setpriv is not installed")
    probe = subprocess.run(["setpriv", "--bounding-set=-dac_override,-dac_read_search", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("capabilities cannot be dropped here")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def test_a_state_file_in_a_read_only_directory_can_still_be_read(tmp_path):
    prefix = _without_dac_override() if os.geteuid() == 0 else []
    folder = tmp_path / "ro"
    folder.mkdir()
    state = folder / "state.db"
    with Cluster.open(str(state)) as c:
        c.apply(PVC)
    folder.chmod(0o555)
    try:
        cli = prefix + CLI + ["--state", str(state)]
        r = subprocess.run(cli + ["get", "pvc", "-o", "name"], capture_output=True, text=True, timeout=60)
        assert (r.returncode, r.stdout) == (0, "persistentvolumeclaim/p1\n"), r.stderr
        r = subprocess.run(cli + ["describe", "pvc", "p1"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.startswith("Name:"), r.stderr
        r = subprocess.run(cli + ["delete", "pvc", "p1"], capture_output=True, text=True, timeout=60)
        assert (r.returncode, r.stderr) == (1, f"error: state file {state} cannot be written here (its directory is "
                                               "read-only): it can be read, not changed\n")
        assert sorted(p.name for p in folder.iterdir()) == ["state.db"]
    finally:
        folder.chmod(0o755)


def test_python_api_type_errors_are_store_errors_naming_the_field(tmp_path):
    with Cluster.open(str(tmp_path / "state.db")) as c:
        cases = [
            (lambda: c.apply({**PVC, "metadata": [1]}), "metadata is not a JSON object"),
            (lambda: c.apply({**PVC, "spec": {1: 2}}), "spec: key 1 is not a string"),
            (lambda: c.apply({**PVC, "metadata": {"name": "p", 3: "x"}}), "metadata: key 3 is not a string"),
            (lambda: c.apply({**PVC, "spec": {"a": [b"x"]}}), "spec.a[0]: a bytes value is not JSON"),
            (lambda: c.create({**PVC, "spec": {"a": {1.5: 1}}}), "spec.a: key 1.5 is not a string"),
            (lambda: c.update({**PVC, "spec": {"a": object()}}), "spec.a: a object value is not JSON"),
            (lambda: list(c.list("VirtualMachine", label_selector=5)), "label_selector: must be a selector"),
            (lambda: list(c.list("VirtualMachine", field_selector=[1])), "field_selector: must be a selector"),
            (lambda: c.create(None), "expected a JSON object"),
            (lambda: c.update(None), "expected a JSON object with metadata"),
            (lambda: c.apply({**PVC, "metadata": {"name": 5}}), "ObjectMeta.metadata.name of type string"),
            (lambda: c.store.create({**PVC, "metadata": {"name": "p", "namespace": ["x"]}}),
             "ObjectMeta.metadata.namespace of type string"),
            (lambda: c.create(PVC, namespace=5), "namespace: must be a string, not int"),
        ]
        for call, text in cases:
            with pytest.raises(StoreError) as e:
                call()
            assert text in str(e.value), (text, str(e.value))
        assert c.store.count("PersistentVolumeClaim") == 0


def test_wrong_types_anywhere_in_the_python_api_are_instancetype_errors(tmp_path):
    """Every pair of wrong-typed arguments to the cluster's and the store's methods."""
    import itertools

    from instancetype.errors import Error, InternalError

    bad = [None, 5, 1.5, True, b"x", [1], {"a": 1}, {1: 2}, "", "x", object(), ("t",), "VirtualMachine", "../x"]
    with Cluster.open(str(tmp_path / "state.db")) as c:
        calls = [
            lambda a, b: c.get(a, b), lambda a, b: c.get("VirtualMachine", a, b),
            lambda a, b: list(c.list(a, b)), lambda a, b: list(c.list("VirtualMachine", a, label_selector=b)),
            lambda a, b: list(c.list("VirtualMachine", field_selector=a)),
            lambda a, b: c.apply(a, namespace=b),
            lambda a, b: c.apply({**PVC, "metadata": {"name": "p", "labels": a}}, namespace=b),
            lambda a, b: c.create({**PVC, "metadata": {"name": "q", "annotations": a}}, namespace=b),
            lambda a, b: c.update({**PVC, "kind": a, "metadata": {"name": b}}),
            lambda a, b: c.delete(a, b), lambda a, b: c.delete("PersistentVolumeClaim", "p", a),
            lambda a, b: c.start(a, b), lambda a, b: c.expand_vm(a, b),
            lambda a, b: c.store.patch("PersistentVolumeClaim", "p", a),
            lambda a, b: c.store.delete("PersistentVolumeClaim", "p", propagation=a, resource_version=b),
            lambda a, b: c.store.update({**PVC, "metadata": {"name": "p", "resourceVersion": a}}, subresource=b),
            lambda a, b: list(c.store.changes(a, kind=b)),
            lambda a, b: c.apply_all([a, b]),
        ]
        for call in calls:
            for a, b in itertools.product(bad, bad):
                try:
                    call(a, b)
                except InternalError:
                    raise
                except Error:
                    pass


OPENER = r"""
import sys
from instancetype.controller import Cluster
with Cluster.open(sys.argv[1]) as c:
    c.apply({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": sys.argv[2]}, "spec": {}})
"""


def test_processes_making_the_same_new_state_file_at_once_all_use_one_file(tmp_path):
    state = tmp_path / "state.db"
    procs = [subprocess.Popen([sys.executable, "-c", OPENER, str(state), f"p{i}"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(6)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with Cluster.open(str(state)) as c:
        assert sorted(p["metadata"]["name"] for p in c.list("PersistentVolumeClaim")) == [f"p{i}" for i in range(6)]
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".new")]


def test_a_damaged_claim_row_does_not_stop_the_cluster_opening(tmp_path):
    """Uploaded images are swept on every opening; that reads claim uids from their column, so a
    damaged claim stays deletable (the way out) instead of failing every command."""
    state, image = tmp_path / "state.db", tmp_path / "i.img"
    image.write_bytes(b"x" * 100)
    assert _cli("--state", str(state), "image-upload", "pvc", "p1", "--size=1Mi", f"--image-path={image}").returncode == 0
    db = sqlite3.connect(state)
    db.execute("UPDATE objects SET data='[' WHERE name='p1'")
    db.commit()
    db.close()
    r = _cli("--state", str(state), "delete", "pvc", "p1")
    assert (r.returncode, r.stdout) == (0, 'persistentvolumeclaim "p1" deleted from default namespace\n'), r.stderr
    assert list((tmp_path / "state.db.images").iterdir()) == []


def test_a_full_check_finds_an_index_that_disagrees_with_its_table(tmp_path):
    state = tmp_path / "state.db"
    with SqliteStore(state) as s:
        s.create({**PVC, "metadata": {"name": "p1", "labels": {"app": "a"}}})
        s.check(full=True)
    db = sqlite3.connect(state)        # an index entry changed behind the table's back
    db.execute("PRAGMA writable_schema=ON")
    db.execute("UPDATE sqlite_master SET sql='CREATE INDEX labels_by_key ON labels (value, key, oid)' "
               "WHERE name='labels_by_key'")
    db.commit()
    db.close()
    with SqliteStore(state) as s:
        with pytest.raises(StateFileError) as e:
            s.check(full=True)
    assert str(state) in str(e.value) and "is damaged" in str(e.value)
