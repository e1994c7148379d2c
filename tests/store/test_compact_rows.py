"""State-file format 2: long rows stored deflated; format-1 files read and written as they were."""
from __future__ import annotations

import sqlite3

from instancetype.store.sqlite import COMPRESS_MIN, FORMAT_VERSION, SqliteStore


def _cm(name: str, size: int) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "annotations": {"k": "v" * size}}}


def _storage(path, name: str) -> str:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT typeof(data) FROM objects WHERE name=?", (name,)).fetchone()[0]
    finally:
        db.close()


def test_a_new_file_is_format_2_and_deflates_long_rows(tmp_path):
    path = tmp_path / "state.db"
    s = SqliteStore(path)
    s.create(_cm("big", 4 * COMPRESS_MIN))
    s.create(_cm("small", 8))
    assert s.get("Namespace", "big")["metadata"]["annotations"]["k"] == "v" * 4 * COMPRESS_MIN
    ns = s.get("Namespace", "big")
    ns["metadata"]["annotations"] = {"k": "w" * 3000}
    s.update(ns)
    assert s.get("Namespace", "big")["metadata"]["annotations"]["k"] == "w" * 3000
    s.delete("Namespace", "small")
    assert [e.object["metadata"]["name"] for e in s.changes(0) if e.type == "DELETED"] == ["small"]
    s.close()
    assert FORMAT_VERSION == 2
    assert _storage(path, "big") == "blob" and _storage(path, "default") == "text"
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 2
    assert db.execute("SELECT length(data) FROM objects WHERE name='big'").fetchone()[0] < 200
    db.close()


def test_a_format_1_file_is_read_and_stays_format_1(tmp_path):
    path = tmp_path / "old.db"
    s = SqliteStore(path)
    s.close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=1")       # as the releases before format 2 made it (TEXT rows only)
    db.close()
    s = SqliteStore(path)
    s.create(_cm("big", 4 * COMPRESS_MIN))
    assert s.get("Namespace", "big")["metadata"]["annotations"]["k"] == "v" * 4 * COMPRESS_MIN
    s.close()
    assert _storage(path, "big") == "text"
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    db.close()
