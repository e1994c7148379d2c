"""The embedded store's reads inside a write transaction: the rows it last wrote or read are kept
at hand (`sqlite._RecentRows`), never answering with what the file no longer holds; and the change
feed without its objects (`changes(objects=False)`)."""
from __future__ import annotations

import pytest

from instancetype.store.base import NotFound
from instancetype.store.sqlite import RECENT_ROWS, SqliteStore


def _ns(name: str, note: str = "") -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "annotations": {"note": note * 300}}}


@pytest.fixture
def store(tmp_path):
    s = SqliteStore(tmp_path / "state.db")
    yield s
    s.close()


def _statements(store: SqliteStore) -> list[str]:
    seen: list[str] = []
    store._db.set_trace_callback(seen.append)
    return seen


def test_a_row_written_is_read_back_without_a_query(store):
    with store.transaction() as tx:
        tx.create(_ns("a", "x"))
        seen = _statements(store)
        got = tx.get("Namespace", "a")
        got["metadata"]["annotations"]["note"] = "y"
        written = tx.update(got)
        again = tx.get("Namespace", "a")
        store._db.set_trace_callback(None)
    assert not [s for s in seen if s.startswith("SELECT id, uid, rv, data FROM objects")]
    assert again["metadata"]["annotations"]["note"] == "y"
    assert again == written and again["metadata"]["resourceVersion"] != got["metadata"]["resourceVersion"]
    assert store.get("Namespace", "a") == again


def test_each_read_is_a_fresh_object(store):
    with store.transaction() as tx:
        tx.create(_ns("a", "x"))
        first = tx.get("Namespace", "a")
        first["metadata"]["annotations"]["note"] = "changed by the caller"
        assert tx.get("Namespace", "a")["metadata"]["annotations"]["note"] == "x" * 300


def test_a_rolled_back_savepoint_forgets_what_it_wrote(store):
    store.create(_ns("a", "x"))
    with store.transaction() as tx:
        assert tx.get("Namespace", "a")["metadata"]["annotations"]["note"] == "x" * 300
        with pytest.raises(RuntimeError), tx.transaction():
            obj = tx.get("Namespace", "a")
            obj["metadata"]["annotations"]["note"] = "inner"
            tx.update(obj)
            tx.create(_ns("b"))
            raise RuntimeError("undo")
        assert tx.get("Namespace", "a")["metadata"]["annotations"]["note"] == "x" * 300
        with pytest.raises(NotFound):
            tx.get("Namespace", "b")


def test_a_deleted_row_is_not_found(store):
    with store.transaction() as tx:
        tx.create(_ns("a"))
        tx.get("Namespace", "a")
        tx.delete("Namespace", "a")
        with pytest.raises(NotFound):
            tx.get("Namespace", "a")


def test_another_connection_writes_between_transactions(store, tmp_path):
    store.create(_ns("a", "x"))
    with store.transaction() as tx:
        tx.get("Namespace", "a")
    other = SqliteStore(tmp_path / "state.db")
    obj = other.get("Namespace", "a")
    obj["metadata"]["annotations"]["note"] = "other"
    other.update(obj)
    other.close()
    with store.transaction() as tx:
        assert tx.get("Namespace", "a")["metadata"]["annotations"]["note"] == "other"


def test_the_rows_kept_are_bounded(store):
    with store.transaction() as tx:
        for i in range(RECENT_ROWS * 3):
            tx.create(_ns(f"n{i}", "x"))
        assert len(store._recent.rows) == RECENT_ROWS
        assert tx.get("Namespace", "n0")["metadata"]["name"] == "n0"      # read from the file
    assert not store._recent.rows


def test_the_feed_without_objects(store):
    since = store.resource_version()
    store.create(_ns("a", "x"))
    obj = store.get("Namespace", "a")
    obj["metadata"]["annotations"] = {"k": "v"}
    store.update(obj)
    store.delete("Namespace", "a")
    full = list(store.changes(since))
    bare = list(store.changes(since, objects=False))
    assert [(e.type, e.kind, e.namespace, e.name, e.uid, e.resource_version) for e in bare] == \
        [(e.type, e.kind, e.namespace, e.name, e.uid, e.resource_version) for e in full]
    assert [e.type for e in bare] == ["ADDED", "MODIFIED", "DELETED"]
    assert all(e.object is None for e in bare)
    assert full[-1].object is not None


def _sequence(store: SqliteStore) -> int:
    row = store._db.execute("SELECT seq FROM sqlite_sequence WHERE name='changes'").fetchone()
    return row[0] if row else 0


def test_the_resource_version_inside_a_write_transaction_needs_no_query(store, tmp_path):
    store.create(_ns("a"))
    with store.transaction() as tx:
        first = tx.resource_version()
        assert first == _sequence(store)
        seen = _statements(store)
        assert tx.resource_version() == first
        created = tx.create(_ns("b"))
        assert tx.resource_version() == int(created["metadata"]["resourceVersion"]) == first + 1
        store._db.set_trace_callback(None)
        assert not [s for s in seen if "sqlite_sequence" in s]
        with pytest.raises(RuntimeError), tx.transaction() as sp:
            sp.create(_ns("c"))
            assert sp.resource_version() == first + 2
            raise RuntimeError("undone")
        # The savepoint's resourceVersion is handed out again: the store says so.
        assert tx.resource_version() == _sequence(store) == first + 1
    # Outside a transaction another connection may have written: the file is asked.
    with SqliteStore(tmp_path / "state.db") as other:
        other.create(_ns("d"))
    assert store.resource_version() == first + 2


def _cr(name: str, namespace: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": name, "namespace": namespace},
            "data": {}, "revision": 1}


def test_a_create_asks_for_its_namespace_once_per_transaction_and_never_for_itself(store):
    from instancetype.store.base import AlreadyExists

    store.create(_ns("a"))
    with store.transaction() as tx:
        seen = _statements(store)
        tx.create(_cr("one", "a"))
        tx.create(_cr("two", "a"))
        store._db.set_trace_callback(None)
        assert len([s for s in seen if s.startswith("SELECT 1 FROM objects WHERE kind='Namespace'")]) == 1
        assert not [s for s in seen if "EXISTS" in s]
        rv = tx.resource_version()
        with pytest.raises(AlreadyExists):
            tx.create(_cr("one", "a"))
        assert tx.resource_version() == rv            # nothing written: no change logged
        assert [e.name for e in tx.changes(rv - 2)] == ["one", "two"]
    # A namespace deleted in the transaction is asked for again.
    with store.transaction() as tx:
        tx.create(_cr("three", "a"))
        tx.delete("Namespace", "a")
        with pytest.raises(NotFound):
            tx.create(_cr("four", "a"))


def _feed(store: SqliteStore, since, **kw) -> list[tuple]:
    return [(e.type, e.kind, e.namespace, e.name, e.uid, e.resource_version) for e in store.changes(since, **kw)]


def _cr(name: str, ns: str = "default") -> dict:
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": name, "namespace": ns},
            "revision": 1}


def _same_feeds(store: SqliteStore, since) -> None:
    """The feed without objects (kept at hand inside a transaction) names what the file's feed does,
    for a kind written since, one written only before (`_RecentRows.last_of_kind`) and one never."""
    for kw in ({}, {"kind": "ControllerRevision"}, {"kind": "Namespace"}, {"kind": "Node"},
               {"kind": "ControllerRevision", "namespace": "b"}):
        assert _feed(store, since, objects=False, **kw) == _feed(store, since, objects=True, **kw), kw


def test_the_feed_without_objects_inside_a_transaction_needs_no_query(store):
    start = store.resource_version()
    with store.transaction() as tx:
        tx.create(_ns("b"))
        tx.create(_cr("one", "b"))
        mid = tx.resource_version()
        tx.patch("ControllerRevision", "one", {"revision": 2}, "b")
        tx.create(_cr("two"))
        seen = _statements(store)
        feeds = [_feed(tx, since, objects=False) for since in (start, mid, tx.resource_version())]
        store._db.set_trace_callback(None)
        assert not [s for s in seen if "FROM changes" in s]
        assert [len(f) for f in feeds] == [4, 2, 0]
        for since in (0, start, mid, mid + 1, tx.resource_version()):
            _same_feeds(tx, since)
        tx.delete("ControllerRevision", "two")
        _same_feeds(tx, mid)
        try:
            with tx.transaction():
                tx.create(_cr("three"))
                _same_feeds(tx, mid)
                raise RuntimeError
        except RuntimeError:
            pass
        _same_feeds(tx, mid)        # the rolled-back create is in neither
        tx.create(_cr("four"))      # its resourceVersion is the rolled-back one's
        _same_feeds(tx, mid)
        _same_feeds(tx, start)


def test_the_feed_kept_at_hand_is_bounded(store):
    from instancetype.store.sqlite import RECENT_CHANGES

    with store.transaction() as tx:
        start = tx.resource_version()
        for i in range(RECENT_CHANGES + 10):
            tx.create(_cr(f"cm-{i}"))
        assert len(store._recent.log) == RECENT_CHANGES
        _same_feeds(tx, start)                  # older than what is kept: read from the file
        _same_feeds(tx, tx.resource_version() - 5)
        assert len(_feed(tx, start, objects=False)) == RECENT_CHANGES + 10
