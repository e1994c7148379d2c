"""State-file formats: format 3 (msgpack rows, long ones deflated against their kind's
dictionary); format-2 (deflated JSON) and format-1 (JSON TEXT) files read and written as they were."""
from __future__ import annotations

import sqlite3
import zlib

import msgspec
import pytest

from instancetype.store.base import StateFileError
from instancetype.store.rows import DICTIONARY_TAG, dictionary_name
from instancetype.store.sqlite import COMPRESS_MIN, DEFLATE_WBITS, FORMAT_VERSION, SqliteStore


def _cm(name: str, size: int) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "annotations": {"k": "v" * size}}}


def _storage(path, name: str) -> str:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT typeof(data) FROM objects WHERE name=?", (name,)).fetchone()[0]
    finally:
        db.close()


def _older(path, version: int) -> None:
    """Make the new (empty) file at `path` one of an older format, as the releases before made it."""
    SqliteStore(path).close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE dictionaries")      # an empty file: the default namespace's row is short
    (data,), = db.execute("SELECT data FROM objects WHERE name='default'").fetchall()
    db.execute("UPDATE objects SET data=? WHERE name='default'",
               (msgspec.json.encode(msgspec.msgpack.decode(data)).decode(),))
    db.execute(f"PRAGMA user_version={version}")
    db.commit()
    db.close()


def test_a_new_file_is_format_3_and_deflates_long_rows_against_a_dictionary(tmp_path):
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
    assert FORMAT_VERSION == 3
    assert _storage(path, "big") == "blob" and _storage(path, "default") == "blob"
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 3
    big = db.execute("SELECT data FROM objects WHERE name='big'").fetchone()[0]
    assert len(big) < 200 and big[0] == DICTIONARY_TAG
    (did, data), = db.execute("SELECT id, data FROM dictionaries WHERE name='Namespace'").fetchall()
    assert big[1] == did and len(data) <= 1 << DEFLATE_WBITS
    # The row's raw deflate stream against that dictionary is the object's msgpack.
    plain = zlib.decompressobj(-DEFLATE_WBITS, zdict=data).decompress(big[2:])
    assert msgspec.msgpack.decode(plain)["metadata"]["annotations"]["k"] == "w" * 3000
    short = db.execute("SELECT data FROM objects WHERE name='default'").fetchone()[0]
    assert msgspec.msgpack.decode(short)["metadata"]["name"] == "default"
    db.close()


@pytest.mark.parametrize("size", [8, 4 * COMPRESS_MIN])
def test_an_integer_msgpack_cannot_hold_is_stored_as_json_and_read_back(tmp_path, size):
    # JSON (and formats 1 and 2) keep integers of any size; msgpack stops at int64/uint64
    big, low = 2 ** 70, -(2 ** 64)
    obj = _cm("huge", size)
    obj["metadata"]["annotations"]["n"] = "x"
    obj["spec"] = {"a": big, "b": [low, 1.5]}
    s = SqliteStore(tmp_path / "state.db")
    s.create(obj)
    assert s.get("Namespace", "huge")["spec"] == {"a": big, "b": [low, 1.5]}
    s.close()
    s = SqliteStore(tmp_path / "state.db")
    assert s.get("Namespace", "huge")["spec"] == {"a": big, "b": [low, 1.5]}
    s.close()


def test_rows_of_a_kind_share_one_dictionary_across_connections(tmp_path):
    """A dictionary once made is the kind's for good: another connection, which asked before it
    was made, finds it in the file instead of making a second one."""
    path = tmp_path / "state.db"
    a, b = SqliteStore(path), SqliteStore(path)
    b.create(_cm("first", 8))
    a.create(_cm("one", 4 * COMPRESS_MIN))
    b.create(_cm("two", 5 * COMPRESS_MIN))
    for s in (a, b):
        assert s.get("Namespace", "one")["metadata"]["annotations"]["k"] == "v" * 4 * COMPRESS_MIN
        assert s.get("Namespace", "two")["metadata"]["annotations"]["k"] == "v" * 5 * COMPRESS_MIN
    a.close()
    b.close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*) FROM dictionaries").fetchone()[0] == 1
    db.close()


def test_a_dictionary_made_in_a_rolled_back_write_is_forgotten(tmp_path):
    path = tmp_path / "state.db"
    s = SqliteStore(path)
    with pytest.raises(RuntimeError), s.transaction() as tx:
        tx.create(_cm("gone", 4 * COMPRESS_MIN))
        tx.list("Namespace")                       # a read of the file: the row is written, its dictionary made
        assert list(tx.list("Namespace"))
        raise RuntimeError("roll back")
    with s.transaction() as tx:
        tx.create(_cm("kept", 8))
        with pytest.raises(RuntimeError), tx.transaction() as inner:
            inner.create(_cm("gone", 4 * COMPRESS_MIN))
            assert len(list(inner.list("Namespace"))) == 3
            raise RuntimeError("roll the savepoint back")
        tx.create(_cm("big", 6 * COMPRESS_MIN))
    s.close()
    s = SqliteStore(path)
    assert s.get("Namespace", "big")["metadata"]["annotations"]["k"] == "v" * 6 * COMPRESS_MIN
    assert sorted(o["metadata"]["name"] for o in s.list("Namespace")) == ["big", "default", "kept"]
    s.close()


def test_a_row_whose_dictionary_is_missing_is_damage_naming_the_object(tmp_path):
    path = tmp_path / "state.db"
    s = SqliteStore(path)
    s.create(_cm("big", 4 * COMPRESS_MIN))
    s.close()
    db = sqlite3.connect(path)
    db.execute("DELETE FROM dictionaries")
    db.commit()
    db.close()
    s = SqliteStore(path)
    with pytest.raises(StateFileError, match="namespaces big cannot be read"):
        s.get("Namespace", "big")
    s.delete("Namespace", "big")               # the way out of the damage
    s.close()


def test_a_format_2_file_is_read_and_stays_format_2(tmp_path):
    """A file the previous release wrote (JSON rows, long ones zlib streams of it, a deleted
    object's JSON in the change log) opens and reads the same, and is written as format 2."""
    path = tmp_path / "old.db"
    _older(path, 2)
    db = sqlite3.connect(path)
    objects = {"big": _cm("big", 4 * COMPRESS_MIN), "small": _cm("small", 8)}
    for i, (name, obj) in enumerate(objects.items()):
        obj["metadata"] |= {"uid": f"uid-{name}", "resourceVersion": str(i + 2)}
        text = msgspec.json.encode(obj)
        data = zlib.compress(text, 1) if len(text) >= COMPRESS_MIN else text.decode()
        db.execute("INSERT INTO changes (type, kind, namespace, name, uid) VALUES ('ADDED','Namespace','',?,?)",
                   (name, f"uid-{name}"))
        db.execute("INSERT INTO objects (kind, namespace, name, uid, rv, data) VALUES ('Namespace','',?,?,?,?)",
                   (name, f"uid-{name}", i + 2, data))
    gone = _cm("gone", 4 * COMPRESS_MIN)
    gone["metadata"] |= {"uid": "uid-gone", "resourceVersion": "4"}
    db.execute("INSERT INTO changes (type, kind, namespace, name, uid, data) VALUES "
               "('DELETED','Namespace','','gone','uid-gone',?)", (zlib.compress(msgspec.json.encode(gone), 1),))
    db.commit()
    db.close()
    s = SqliteStore(path)
    for name, obj in objects.items():
        assert s.get("Namespace", name) == obj
    assert [e.object for e in s.changes(0) if e.type == "DELETED"] == [gone]
    with s.transaction() as tx:                  # read and rewritten within one transaction (kept rows)
        ns = tx.get("Namespace", "big")
        ns["metadata"]["labels"] = {"new": "label"}
        tx.update(ns)
        assert tx.get("Namespace", "big")["metadata"]["labels"] == {"new": "label"}
    s.create(_cm("new", 4 * COMPRESS_MIN))
    s.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 2
    for name in ("big", "new"):
        data = db.execute("SELECT data FROM objects WHERE name=?", (name,)).fetchone()[0]
        assert msgspec.json.decode(zlib.decompress(data))["metadata"]["name"] == name
    assert _storage(path, "small") == "text"
    db.close()


def test_a_format_1_file_is_read_and_stays_format_1(tmp_path):
    path = tmp_path / "old.db"
    _older(path, 1)                           # as the releases before format 2 made it (TEXT rows only)
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
    """A format-2 row's deflate stream uses a 4 KiB window (zlib's header says so: CINFO = wbits -
    8), and the reader, which takes any window, reads it back whole, long rows and their updates alike."""
    path = tmp_path / "state.db"
    _older(path, 2)
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
    _older(path, 2)
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


def test_revisions_of_different_kinds_of_object_have_their_own_dictionaries():
    def revision(held):
        return {"kind": "ControllerRevision", "data": {"kind": held}}
    assert dictionary_name(revision("VirtualMachineClusterInstancetype")) == \
        "ControllerRevision/VirtualMachineClusterInstancetype"
    assert dictionary_name(revision("VirtualMachine")) == "ControllerRevision/VirtualMachine"
    # Not a kind of ours (anything a user stores): the kind's dictionary, so their number stays bounded.
    assert dictionary_name(revision("Something-" + "x" * 100)) == "ControllerRevision"
    assert dictionary_name({"kind": "ControllerRevision", "data": "text"}) == "ControllerRevision"
    assert dictionary_name({"kind": "VirtualMachine", "data": {"kind": "VirtualMachine"}}) == "VirtualMachine"
