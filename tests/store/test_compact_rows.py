"""State-file format 2: long rows stored deflated; format-1 files read and written as they were."""
from __future__ import annotations

import sqlite3
import zlib

from instancetype.store.sqlite import COMPRESS_MIN, DEFLATE_WBITS, FORMAT_VERSION, SqliteStore


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


def _deflated(path, name: str) -> bytes:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT data FROM objects WHERE name=?", (name,)).fetchone()[0]
    finally:
        db.close()


def test_rows_are_deflated_with_a_small_window_and_read_back(tmp_path):
    """A row's deflate stream uses a 4 KiB window (zlib's header says so: CINFO = wbits - 8), and
    the reader, which takes any window, reads it back whole, long rows and their updates alike."""
    path = tmp_path / "state.db"
    s = SqliteStore(path)
    text = "".join(f"line {i} of a long annotation; " for i in range(400))   # 12 KB: longer than the window
    s.create(_cm("big", 8) | {"metadata": {"name": "big", "annotations": {"k": text}}})
    assert s.get("Namespace", "big")["metadata"]["annotations"]["k"] == text
    s.close()
    data = _deflated(path, "big")
    assert isinstance(data, bytes)
    assert data[0] >> 4 == DEFLATE_WBITS - 8 == 4
    assert zlib.decompress(data)      # a plain zlib stream: what any format-2 reader reads


def test_rows_deflated_with_zlibs_default_window_stay_readable(tmp_path):
    """A file written before the window was made smaller (`zlib.compress`, a 32 KiB window) is
    read as it is: rows, the change feed's deleted objects, and updates of those rows."""
    path = tmp_path / "state.db"
    s = SqliteStore(path)
    s.create(_cm("big", 4 * COMPRESS_MIN))
    s.create(_cm("gone", 4 * COMPRESS_MIN))
    s.delete("Namespace", "gone")
    s.close()
    db = sqlite3.connect(path)
    for table, key in (("objects", "id"), ("changes", "rv")):
        rows = db.execute(f"SELECT {key}, data FROM {table} WHERE typeof(data)='blob'").fetchall()
        assert rows
        for rowid, data in rows:     # written again as the releases before wrote them
            db.execute(f"UPDATE {table} SET data=? WHERE {key}=?", (zlib.compress(zlib.decompress(data), 1), rowid))
    db.commit()
    assert db.execute("SELECT data FROM objects WHERE name='big'").fetchone()[0][0] >> 4 == 7
    db.close()
    s = SqliteStore(path)
    assert s.get("Namespace", "big")["metadata"]["annotations"]["k"] == "v" * 4 * COMPRESS_MIN
    assert [e.object["metadata"]["name"] for e in s.changes(0) if e.type == "DELETED"] == ["gone"]
    ns = s.get("Namespace", "big")
    ns["metadata"]["labels"] = {"new": "label"}
    s.update(ns)
    assert s.get("Namespace", "big")["metadata"]["labels"] == {"new": "label"}
    s.close()
    assert _deflated(path, "big")[0] >> 4 == DEFLATE_WBITS - 8
