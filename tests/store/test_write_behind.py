"""The embedded store writes a row behind (`sqlite._RecentRows.dirty`, `SqliteStore._flush`): an
object written several times in one write transaction reaches the file once, yet every write keeps
its own resourceVersion and change-log entry, every read sees the last write, and a rollback (of
the transaction or of a savepoint) forgets exactly what it undoes."""
from __future__ import annotations

import sqlite3

import pytest

from instancetype.store.base import AlreadyExists, NotFound
from instancetype.store.sqlite import RECENT_ROWS, SqliteStore


def _ns(name: str, note: str = "x", labels: dict | None = None) -> dict:
    meta: dict = {"name": name, "annotations": {"note": note * 300}}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


@pytest.fixture
def store(tmp_path):
    s = SqliteStore(tmp_path / "state.db")
    yield s
    s.close()


def _file_rows(path) -> dict[str, tuple[int, object]]:
    """What the file holds (another connection: committed rows only), name -> (rv, data)."""
    db = sqlite3.connect(path)
    try:
        return {name: (rv, data) for name, rv, data in db.execute("SELECT name, rv, data FROM objects")}
    finally:
        db.close()


def _rewrite(tx, name: str, note: str) -> dict:
    obj = tx.get("Namespace", name)
    obj["metadata"]["annotations"]["note"] = note * 300
    return tx.update(obj)


def test_a_row_written_four_times_reaches_the_file_once(store):
    since = store.resource_version()
    seen: list[str] = []
    with store.transaction() as tx:
        store._db.set_trace_callback(seen.append)
        tx.create(_ns("a"))
        written = [_rewrite(tx, "a", note) for note in "yzw"]
    store._db.set_trace_callback(None)
    data_writes = [s for s in seen if s.startswith(("INSERT INTO objects", "UPDATE objects"))]
    assert len(data_writes) == 2          # the insert (its columns, no data yet), the data once
    events = list(store.changes(since))
    assert [e.type for e in events] == ["ADDED", "MODIFIED", "MODIFIED", "MODIFIED"]
    rvs = [e.resource_version for e in events]
    assert rvs == sorted(set(rvs))
    assert [w["metadata"]["resourceVersion"] for w in written] == [str(rv) for rv in rvs[1:]]
    got = store.get("Namespace", "a")
    assert got == written[-1]
    assert _file_rows(store.path)["a"][0] == rvs[-1]


def test_reads_inside_the_transaction_see_the_last_write(store):
    store.create(_ns("a", labels={"team": "red"}))
    since = store.resource_version()
    with store.transaction() as tx:
        obj = tx.get("Namespace", "a")
        obj["metadata"]["labels"] = {"team": "blue"}
        obj["metadata"]["annotations"]["note"] = "b" * 300
        tx.update(obj)
        tx.create(_ns("c", "c", labels={"team": "blue"}))
        blue = list(tx.list("Namespace", label_selector="team=blue"))
        assert [o["metadata"]["name"] for o in blue] == ["a", "c"]
        assert blue[0]["metadata"]["annotations"]["note"] == "b" * 300
        assert not list(tx.list("Namespace", label_selector="team=red"))
        feed = list(tx.changes(since))
        assert [(e.type, e.name, e.object["metadata"]["annotations"]["note"][0]) for e in feed] == \
            [("MODIFIED", "a", "b"), ("ADDED", "c", "c")]
        assert [(e.type, e.name, e.object) for e in tx.changes(since, objects=False)] == \
            [("MODIFIED", "a", None), ("ADDED", "c", None)]
        _rewrite(tx, "c", "d")            # written after the list: kept at hand again
        assert tx.get("Namespace", "c")["metadata"]["annotations"]["note"] == "d" * 300
        assert tx.count("Namespace", label_selector="team=blue") == 2
    assert store.get("Namespace", "c")["metadata"]["annotations"]["note"] == "d" * 300


def test_a_rolled_back_transaction_leaves_the_file_as_it_was(store):
    store.create(_ns("a"))
    before = _file_rows(store.path)
    rv = store.resource_version()
    with pytest.raises(RuntimeError), store.transaction() as tx:
        _rewrite(tx, "a", "y")
        tx.create(_ns("b"))
        raise RuntimeError("undo")
    assert not store._recent.rows and not store._recent.dirty
    assert _file_rows(store.path) == before
    assert store.resource_version() == rv
    assert store.get("Namespace", "a")["metadata"]["annotations"]["note"] == "x" * 300
    with pytest.raises(NotFound):
        store.get("Namespace", "b")


def test_a_rolled_back_savepoint_keeps_what_was_written_before_it(store):
    store.create(_ns("a"))
    with store.transaction() as tx:
        _rewrite(tx, "a", "y")            # written behind, before the savepoint
        tx.create(_ns("b", "b"))
        with pytest.raises(RuntimeError), tx.transaction():
            _rewrite(tx, "a", "z")
            _rewrite(tx, "b", "z")
            tx.create(_ns("c"))
            raise RuntimeError("undo")
        assert tx.get("Namespace", "a")["metadata"]["annotations"]["note"] == "y" * 300
        assert tx.get("Namespace", "b")["metadata"]["annotations"]["note"] == "b" * 300
        with pytest.raises(NotFound):
            tx.get("Namespace", "c")
        with tx.transaction():            # a savepoint that stays
            _rewrite(tx, "b", "v")
    assert store.get("Namespace", "a")["metadata"]["annotations"]["note"] == "y" * 300
    assert store.get("Namespace", "b")["metadata"]["annotations"]["note"] == "v" * 300
    assert sorted(o["metadata"]["name"] for o in store.list("Namespace")) == ["a", "b", "default"]


def test_more_dirty_rows_than_are_kept_all_reach_the_file(store):
    names = [f"n{i}" for i in range(RECENT_ROWS * 2 + 3)]
    with store.transaction() as tx:
        for name in names:
            tx.create(_ns(name))
            _rewrite(tx, name, "y")
        assert len(store._recent.rows) == RECENT_ROWS and len(store._recent.dirty) <= RECENT_ROWS
        assert tx.get("Namespace", names[0])["metadata"]["annotations"]["note"] == "y" * 300   # from the file
    rows = _file_rows(store.path)
    for name in names:
        assert rows[name][1] not in ("", None)
        assert store.get("Namespace", name)["metadata"]["annotations"]["note"] == "y" * 300


def test_deleting_a_row_written_behind(store):
    owner = store.create(_ns("owner"))
    since = store.resource_version()
    with store.transaction() as tx:
        tx.create(_ns("a"))
        last = _rewrite(tx, "a", "y")
        tx.delete("Namespace", "a")
        with pytest.raises(NotFound):
            tx.get("Namespace", "a")
        dep = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {
            "name": "cm", "namespace": "owner", "ownerReferences": [{
                "apiVersion": "v1", "kind": "Namespace", "name": "owner", "uid": owner["metadata"]["uid"]}]},
            "revision": 1, "data": {"k": "v" * 1000}}
        tx.create(dep)
        cm = tx.get("ControllerRevision", "cm", "owner")
        cm["metadata"]["labels"] = {"k": "w"}
        cm["data"]["k"] = "w" * 1000
        tx.update(cm)
        tx.delete("Namespace", "owner")          # its objects go with it, the last write read back
    deleted = {e.name: e.object for e in store.changes(since) if e.type == "DELETED"}
    assert deleted["a"]["metadata"]["annotations"] == last["metadata"]["annotations"]
    assert deleted["cm"]["data"]["k"] == "w" * 1000
    assert set(_file_rows(store.path)) == {"default"}


def test_format_1_rows_written_behind_stay_text(tmp_path):
    path = tmp_path / "old.db"
    SqliteStore(path).close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=1")
    db.close()
    s = SqliteStore(path)
    with s.transaction() as tx:
        tx.create(_ns("a"))
        _rewrite(tx, "a", "y")
    s.close()
    rv, data = _file_rows(path)["a"]
    assert isinstance(data, str) and ("y" * 300) in data


def test_a_row_created_behind_is_known_to_creates_counts_and_uids(store):
    with store.transaction() as tx:
        made = tx.create(_ns("a"))
        with pytest.raises(AlreadyExists):
            tx.create(_ns("a"))
        assert tx.count("Namespace") == 2
        assert made["metadata"]["uid"] in tx.uids("Namespace")
        tx.create({"apiVersion": "apps/v1", "kind": "ControllerRevision", "revision": 1,
                   "metadata": {"name": "r", "namespace": "a"}})       # inside the namespace just created
        with pytest.raises(NotFound):
            tx.create({"apiVersion": "apps/v1", "kind": "ControllerRevision", "revision": 1,
                       "metadata": {"name": "r", "namespace": "nowhere"}})
        assert tx.count("ControllerRevision", "a") == 1
    assert store.count("Namespace") == 2 and store.count("ControllerRevision") == 1


def test_rows_created_around_a_rolled_back_savepoint(store):
    with store.transaction() as tx:
        tx.create(_ns("a", labels={"x": "a"}))
        with pytest.raises(RuntimeError), tx.transaction():
            tx.create(_ns("b", labels={"x": "b"}))
            raise RuntimeError("undo")
        tx.create(_ns("c", labels={"x": "c"}))
        tx.create(_ns("b", labels={"x": "b2"}))
    db = sqlite3.connect(store.path)
    try:
        ids = dict(db.execute("SELECT name, id FROM objects"))
        dangling = db.execute("SELECT count(*) FROM labels l LEFT JOIN objects o ON o.id = l.oid "
                              "WHERE o.id IS NULL").fetchone()[0]
    finally:
        db.close()
    assert set(ids) == {"default", "a", "b", "c"} and len(set(ids.values())) == 4
    assert dangling == 0
    for value, names in (("a", ["a"]), ("b", []), ("b2", ["b"]), ("c", ["c"])):
        assert [o["metadata"]["name"] for o in store.list("Namespace", label_selector=f"x={value}")] == names
