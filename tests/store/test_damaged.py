"""A state file that cannot be used gives a clear StoreError naming the file, never a traceback."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest
from tests.builders import vm_object

from instancetype.errors import StoreError
from instancetype.store.base import StateFileError
from instancetype.store.sqlite import FORMAT_VERSION, SqliteStore


def filled(path, n=300):
    with SqliteStore(path) as s, s.transaction() as tx:
        for i in range(n):
            tx.create(vm_object(f"vm-{i}", {"pad": "x" * 500}, namespace=None, metadata={"labels": {"i": str(i)}}))
    assert not os.path.exists(f"{path}-wal")      # closed cleanly: everything is in the main file
    return path


def use(path):
    """Open and read everything, as any command would."""
    with SqliteStore(path) as s:
        return sum(1 for _ in s.list("VirtualMachine"))


def assert_clear(excinfo, path, *words):
    text = str(excinfo.value)
    assert isinstance(excinfo.value, StoreError)
    assert str(path) in text, text
    for w in words:
        assert w in text, text


def test_a_good_file_is_fine(tmp_path):
    assert use(filled(tmp_path / "s.db")) == 300


@pytest.mark.parametrize("keep", [0.5, 0.9, 50])
def test_truncated_file(tmp_path, keep):
    path = filled(tmp_path / "s.db")
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(int(size * keep) if keep < 1 else keep)
    with pytest.raises(StateFileError) as e:
        use(path)
    assert_clear(e, path, "damaged", "truncated")


def test_overwritten_file(tmp_path):
    path = filled(tmp_path / "s.db")
    path.write_bytes(b"apiVersion: v1\nkind: List\nitems: []\n" * 100)
    with pytest.raises(StateFileError) as e:
        use(path)
    assert_clear(e, path, "not an instancetype state file")


def test_pages_overwritten_inside_the_file(tmp_path):
    path = filled(tmp_path / "s.db")
    size = os.path.getsize(path)
    with open(path, "r+b") as f:               # keep the header, scribble over the b-trees
        f.seek(4096)
        f.write(b"\xa5" * (size - 4096))
    with pytest.raises(StateFileError) as e:
        use(path)
    assert_clear(e, path, "damaged")


def test_newer_format(tmp_path):
    path = filled(tmp_path / "s.db", 1)
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={FORMAT_VERSION + 1}")
    db.close()
    with pytest.raises(StateFileError) as e:
        use(path)
    assert_clear(e, path, "newer instancetype", f"format {FORMAT_VERSION + 1}")


def test_another_sqlite_database(tmp_path):
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(StateFileError) as e:
        use(path)
    assert_clear(e, path, "not an instancetype state file")


def test_an_empty_file_is_an_error_never_a_fresh_cluster(tmp_path):
    path = filled(tmp_path / "s.db")
    with open(path, "r+b") as f:
        f.truncate(0)
    with pytest.raises(StateFileError) as e:
        use(path)
    assert_clear(e, path, "empty (0 bytes", "restore a backup")
    assert os.path.getsize(path) == 0          # left as found, for the user to inspect


def test_a_new_state_file_is_never_seen_empty(tmp_path):
    path = tmp_path / "s.db"
    assert use(path) == 0
    assert os.path.getsize(path) > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]     # no temporary file left


def test_unusable_locations(tmp_path):
    with pytest.raises(StateFileError) as e:
        use(tmp_path)
    assert_clear(e, tmp_path, "directory")
    missing = tmp_path / "no" / "such" / "dir" / "s.db"
    with pytest.raises(StateFileError) as e:
        use(missing)
    assert_clear(e, missing, "cannot open")


def test_no_traceback_in_a_real_process(tmp_path):
    path = tmp_path / "s.db"
    path.write_bytes(b"\x00" * 8192)
    code = ("import sys\nfrom instancetype.store.sqlite import SqliteStore\nfrom instancetype.errors import Error\n"
            "try:\n    SqliteStore(sys.argv[1])\nexcept Error as e:\n    print(e)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    assert str(path) in proc.stdout and "not an instancetype state file" in proc.stdout
