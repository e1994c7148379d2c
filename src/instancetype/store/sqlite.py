"""The embedded store: one SQLite file (WAL mode) shared safely by concurrent processes.

Layout (format 1, recorded in `PRAGMA user_version`, file marked by `PRAGMA application_id`):
  objects(id, kind, namespace, name, uid, rv, data)   data = the object's JSON (msgspec)
  labels(oid, key, value)                              label selectors run in SQL
  owners(owner_uid, oid)                               ownerReferences, for cascading deletes
  changes(rv, type, kind, namespace, name, uid, data)  the change feed; rv is the resourceVersion
                                                       (AUTOINCREMENT: never reused), data only
                                                       for DELETED

Every write runs inside `BEGIN IMMEDIATE` (the write lock is taken up front, so a transaction
never fails half-way on a lock); waits use SQLite's busy timeout plus a retry loop, and a lock
held too long becomes a `StateFileError` naming the file, never `database is locked`.
`synchronous=NORMAL` in WAL mode: a commit does not fsync, so a batch of 10,000 objects costs
one transaction and no fsync per object (the WAL is synced at checkpoints).
A `SqliteStore` (one connection) belongs to one thread; processes each open their own.
"""
from __future__ import annotations

import os
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Iterator, Mapping
from typing import Any

import msgspec

from instancetype.api.kinds import BY_KIND, Resource
from instancetype.store.base import (
    DEFAULT_NAMESPACE, UNDELETABLE_NAMESPACES, BadRequest, Event, Forbidden, StateFileError, Store,
    already_exists, conflict, default_state_path, fields_match, merge_patch, not_found, owner_uids,
    parse_field_selector, parse_label_selector, prepare_create, prepare_update, resource, same_object,
)
from instancetype.errors import StoreError

FORMAT_VERSION = 1
APPLICATION_ID = 0x49545354          # "ITST": this file is an instancetype state file
LOCK_TIMEOUT = float(os.environ.get("INSTANCETYPE_LOCK_TIMEOUT", "120"))
_CHUNK = 500                         # rows per query when iterating (memory stays flat)

_SCHEMA = """
CREATE TABLE objects (
  id INTEGER PRIMARY KEY, kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
  uid TEXT NOT NULL UNIQUE, rv INTEGER NOT NULL, data TEXT NOT NULL,
  UNIQUE (kind, namespace, name));
CREATE TABLE labels (oid INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (oid, key)) WITHOUT ROWID;
CREATE INDEX labels_by_key ON labels (key, value, oid);
CREATE TABLE owners (owner_uid TEXT NOT NULL, oid INTEGER NOT NULL,
  PRIMARY KEY (owner_uid, oid)) WITHOUT ROWID;
CREATE INDEX owners_by_oid ON owners (oid);
CREATE TABLE changes (rv INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, kind TEXT NOT NULL,
  namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL, data TEXT);
"""
_TABLES = {"objects", "labels", "owners", "changes"}

_encode = msgspec.json.encode
_decode = msgspec.json.decode


def _dumps(obj: Any) -> str:
    return _encode(obj).decode()


def open_store(path: str | os.PathLike | None = None) -> "SqliteStore":
    """The store at `path`, else at `default_state_path()` (created with its directory if missing)."""
    return SqliteStore(path)


class SqliteStore(Store):
    def __init__(self, path: str | os.PathLike | None = None, *, lock_timeout: float = LOCK_TIMEOUT):
        explicit = path is not None
        self.path = default_state_path(path)   # `~` expanded, as for $INSTANCETYPE_STATE
        self.lock_timeout = lock_timeout
        self._depth = 0
        if not explicit:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        _check_file(self.path)
        try:
            self._db = sqlite3.connect(self.path, timeout=min(5.0, lock_timeout), isolation_level=None)
        except sqlite3.Error as e:
            raise StateFileError(f"cannot open state file {self.path}: {e}") from None
        try:
            self._setup()
        except BaseException:
            self._db.close()
            raise

    # --- opening -----------------------------------------------------------------------------------

    def _setup(self) -> None:
        with self._errors():
            self._retry(lambda: self._db.execute("PRAGMA journal_mode=WAL").fetchone())
            self._db.execute("PRAGMA synchronous=NORMAL")
            if self._retry(self._format) is None:
                with self.transaction():
                    if self._format() is None:   # re-check under the write lock: another process may have won
                        for statement in _SCHEMA.split(";"):
                            if statement.strip():
                                self._db.execute(statement)
                        self._db.execute(f"PRAGMA application_id={APPLICATION_ID}")
                        self._db.execute(f"PRAGMA user_version={FORMAT_VERSION}")
                        self.create({"apiVersion": "v1", "kind": "Namespace",
                                     "metadata": {"name": DEFAULT_NAMESPACE}})

    def _format(self) -> int | None:
        """The file's format version, None for a brand-new (empty) file; refuses foreign/newer files."""
        app = self._db.execute("PRAGMA application_id").fetchone()[0]
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if app == 0 and version == 0 and not tables:
            return None
        if app != APPLICATION_ID:
            raise StateFileError(f"state file {self.path} is an SQLite database but not an instancetype state "
                                 "file; move it aside or choose another path with --state")
        if version > FORMAT_VERSION:
            raise StateFileError(f"state file {self.path} was written by a newer instancetype (format {version}; "
                                 f"this version reads format {FORMAT_VERSION}); upgrade instancetype")
        if version < 1 or not _TABLES <= tables:
            raise StateFileError(f"state file {self.path} is damaged (its tables are missing); "
                                 "move it aside or restore a backup")
        return version

    def close(self) -> None:
        # The closed connection stays: using the store afterwards is a clear StoreError.
        if getattr(self, "_db", None) is not None:
            self._db.close()

    # --- transactions and errors -------------------------------------------------------------------

    @contextmanager
    def _errors(self):
        """SQLite failures as StoreErrors that name the file."""
        try:
            yield
        except StoreError:
            raise
        except sqlite3.OperationalError as e:
            if _locked(e):
                raise StateFileError(f"state file {self.path} is busy: another process held its lock for more "
                                     f"than {self.lock_timeout:g}s") from None
            raise StateFileError(f"state file {self.path}: {e}") from None
        except (sqlite3.ProgrammingError, sqlite3.InterfaceError, sqlite3.IntegrityError) as e:
            raise StoreError(f"state file {self.path}: {e}") from None
        except sqlite3.DatabaseError as e:   # "file is not a database", "database disk image is malformed"
            raise StateFileError(f"state file {self.path} is damaged ({e}); move it aside or restore a backup") from None

    def _retry(self, fn):
        """Run fn, waiting out other processes' locks (SQLite's busy timeout, then retries)."""
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.005
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as e:
                if not _locked(e) or time.monotonic() >= deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.1)

    @contextmanager
    def transaction(self):
        if self._depth:
            sp = f"sp{self._depth}"
            self._db.execute(f"SAVEPOINT {sp}")
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                with self._errors():
                    self._db.execute(f"ROLLBACK TO {sp}")
                    self._db.execute(f"RELEASE {sp}")
                raise
            self._depth -= 1
            self._db.execute(f"RELEASE {sp}")
            return
        with self._errors():
            self._retry(lambda: self._db.execute("BEGIN IMMEDIATE"))
        self._depth = 1
        try:
            with self._errors():
                yield self
        except BaseException:
            self._depth = 0
            try:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
            except sqlite3.Error:
                pass     # the original error says more (a damaged file fails here too)
            raise
        self._depth = 0
        with self._errors():
            self._retry(lambda: self._db.execute("COMMIT"))

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def _write(self):
        """A transaction around one operation, unless the caller already holds one."""
        return self.transaction() if not self._depth else _NOOP

    # --- reads -------------------------------------------------------------------------------------

    def _row(self, res: Resource, name: str, namespace: str | None):
        ns = (namespace or DEFAULT_NAMESPACE) if res.namespaced else ""
        return self._db.execute("SELECT id, uid, rv, data FROM objects WHERE kind=? AND namespace=? AND name=?",
                                (res.kind, ns, name)).fetchone()

    def get(self, kind, name, namespace=None):
        res = resource(kind)
        with self._errors():
            row = self._row(res, name, namespace)
        if row is None:
            raise not_found(res, name)
        return _decode(row[3])

    def _where(self, res: Resource, namespace, label_selector, field_selector):
        sql, params = ["o.kind=?"], [res.kind]
        if res.namespaced and namespace:
            sql.append("o.namespace=?")
            params.append(namespace)
        for r in parse_label_selector(label_selector):
            if r.op in (">", "<"):
                # Label values cannot carry a sign: digits only, compared as integers.
                cond, args = f"l.value != '' AND l.value NOT GLOB '*[^0-9]*' AND CAST(l.value AS INTEGER) {r.op} ?", \
                    (int(r.values[0]),)
            elif r.op in ("in", "notin"):
                cond, args = f"l.value IN ({','.join('?' * len(r.values))})", r.values
            elif r.op in ("=", "!="):
                cond, args = "l.value=?", r.values
            else:
                cond, args = "1", ()
            neg = "NOT " if r.op in ("!=", "notin", "!") else ""
            sql.append(f"{neg}EXISTS (SELECT 1 FROM labels l WHERE l.oid=o.id AND l.key=? AND {cond})")
            params += [r.key, *args]
        rest = []
        for f in parse_field_selector(field_selector):
            column = {("metadata", "name"): "o.name", ("metadata", "namespace"): "o.namespace"}.get(f.path)
            if column:
                sql.append(f"{column}{'=' if f.equal else '!='}?")
                params.append(f.value)
            else:
                rest.append(f)
        return " AND ".join(sql), params, rest

    def list(self, kind, namespace=None, *, label_selector=None, field_selector=None):
        # Selectors are checked now; the rows are read as the caller iterates.
        res = resource(kind)
        return self._iterate(*self._where(res, namespace, label_selector, field_selector))

    def _iterate(self, where: str, params: list, rest: list) -> Iterator[dict]:
        query = (f"SELECT o.namespace, o.name, o.data FROM objects o WHERE {where} AND (o.namespace, o.name) > (?, ?) "
                 f"ORDER BY o.namespace, o.name LIMIT {_CHUNK}")
        after: tuple[str, str] = ("", "")
        while True:
            # Keyset pages: no statement stays open between yields, so the caller may write meanwhile.
            with self._errors():
                rows = self._db.execute(query, (*params, *after)).fetchall()
            for ns, name, data in rows:
                obj = _decode(data)
                if not rest or fields_match(obj, rest):
                    yield obj
            if len(rows) < _CHUNK:
                return
            after = (rows[-1][0], rows[-1][1])

    def count(self, kind, namespace=None, *, label_selector=None, field_selector=None):
        res = resource(kind)
        where, params, rest = self._where(res, namespace, label_selector, field_selector)
        if rest:
            return sum(1 for _ in self.list(kind, namespace, label_selector=label_selector,
                                            field_selector=field_selector))
        with self._errors():
            return self._db.execute(f"SELECT count(*) FROM objects o WHERE {where}", params).fetchone()[0]

    def resource_version(self):
        with self._errors():
            row = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name='changes'").fetchone()
        return row[0] if row else 0

    def changes(self, since=0, *, kind=None, namespace=None):
        cond, params = "c.rv > ?", []
        if kind:
            cond += " AND c.kind=?"
            params.append(kind)
        if namespace:
            cond += " AND c.namespace=?"
            params.append(namespace)
        query = ("SELECT c.rv, c.type, c.kind, c.namespace, c.name, c.uid, coalesce(c.data, o.data) FROM changes c "
                 f"LEFT JOIN objects o ON c.type != 'DELETED' AND o.uid = c.uid WHERE {cond} ORDER BY c.rv LIMIT {_CHUNK}")
        while True:
            with self._errors():
                rows = self._db.execute(query, (since, *params)).fetchall()
            for rv, typ, k, ns, name, uid, data in rows:
                yield Event(typ, k, ns, name, uid, rv, _decode(data) if data else None)
            if len(rows) < _CHUNK:
                return
            since = rows[-1][0]

    # --- writes ------------------------------------------------------------------------------------

    def _log(self, typ: str, obj: dict, data: str | None = None) -> int:
        meta = obj["metadata"]
        return self._db.execute("INSERT INTO changes (type, kind, namespace, name, uid, data) VALUES (?,?,?,?,?,?)",
                                (typ, obj["kind"], meta.get("namespace", ""), meta["name"], meta["uid"],
                                 data)).lastrowid

    def _index(self, oid: int, obj: dict, old: dict | None) -> None:
        """Keep the label and owner tables in step with the object (only what changed)."""
        meta, ometa = obj["metadata"], (old or {}).get("metadata") or {}
        labels = meta.get("labels") or {}
        if old is None or labels != (ometa.get("labels") or {}):
            if old is not None:
                self._db.execute("DELETE FROM labels WHERE oid=?", (oid,))
            if labels:
                self._db.executemany("INSERT INTO labels (oid, key, value) VALUES (?,?,?)",
                                     [(oid, str(k), str(v)) for k, v in labels.items()])
        owners = owner_uids(obj)
        if old is None or owners != owner_uids(old):
            if old is not None:
                self._db.execute("DELETE FROM owners WHERE oid=?", (oid,))
            if owners:
                self._db.executemany("INSERT OR IGNORE INTO owners (owner_uid, oid) VALUES (?,?)",
                                     [(u, oid) for u in owners])

    def create(self, obj, *, namespace=None):
        res, obj = prepare_create(obj, namespace)
        meta = obj["metadata"]
        obj["kind"] = res.kind
        with self._write(), self._errors():
            if res.namespaced and self._row(BY_KIND["Namespace"], meta["namespace"], None) is None:
                raise not_found(BY_KIND["Namespace"], meta["namespace"])
            if self._row(res, meta["name"], meta.get("namespace")) is not None:
                raise already_exists(res, meta["name"])
            rv = self._log("ADDED", obj)
            meta["resourceVersion"] = str(rv)
            oid = self._db.execute(
                "INSERT INTO objects (kind, namespace, name, uid, rv, data) VALUES (?,?,?,?,?,?)",
                (res.kind, meta.get("namespace", ""), meta["name"], meta["uid"], rv, _dumps(obj))).lastrowid
            self._index(oid, obj, None)
        return obj

    def _replace(self, res: Resource, row, stored: dict, new: Any, subresource: str | None, wanted_rv: Any) -> dict:
        name = stored["metadata"]["name"]
        if wanted_rv not in (None, "") and str(wanted_rv) != str(row[2]):
            raise conflict(res, name)
        out = prepare_update(res, stored, new, subresource)
        if same_object(out, stored):
            return stored
        out["kind"] = res.kind
        rv = self._log("MODIFIED", out)
        out["metadata"]["resourceVersion"] = str(rv)
        self._db.execute("UPDATE objects SET rv=?, data=? WHERE id=?", (rv, _dumps(out), row[0]))
        self._index(row[0], out, stored)
        return out

    def update(self, obj, *, subresource=None):
        if not isinstance(obj, Mapping) or not isinstance(obj.get("metadata"), Mapping):
            raise BadRequest("Object is not a valid Kubernetes object: expected a JSON object with metadata")
        res = resource(obj.get("kind"))
        meta = obj["metadata"]
        name = meta.get("name") or ""
        with self._write(), self._errors():
            row = self._row(res, name, meta.get("namespace"))
            if row is None:
                raise not_found(res, name)
            return self._replace(res, row, _decode(row[3]), obj, subresource, meta.get("resourceVersion"))

    def patch(self, kind, name, patch, namespace=None, *, subresource=None):
        res = resource(kind)
        if not isinstance(patch, Mapping):
            raise BadRequest("the body of the request was in an unknown format - accepted media types include: "
                             "application/merge-patch+json")
        wanted = (patch.get("metadata") or {}).get("resourceVersion") if isinstance(patch.get("metadata"), Mapping) \
            else None
        with self._write(), self._errors():
            row = self._row(res, name, namespace)
            if row is None:
                raise not_found(res, name)
            stored = _decode(row[3])
            return self._replace(res, row, stored, merge_patch(stored, dict(patch)), subresource, wanted)

    def delete(self, kind, name, namespace=None, *, propagation="Background", resource_version=None, uid=None):
        res = resource(kind)
        if propagation not in ("Background", "Foreground", "Orphan"):
            raise BadRequest(f'unsupported propagation policy "{propagation}"')
        if res.kind == "Namespace" and name in UNDELETABLE_NAMESPACES:
            raise Forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted')
        with self._write(), self._errors():
            row = self._row(res, name, namespace)
            if row is None:
                raise not_found(res, name)
            if uid and uid != row[1]:
                raise conflict(res, name, f"Precondition failed: UID in precondition: {uid}, "
                                          f"UID in object meta: {row[1]}")
            if resource_version and str(resource_version) != str(row[2]):
                raise conflict(res, name, f"the ResourceVersion in the precondition ({resource_version}) does not "
                                          f"match the ResourceVersion in record ({row[2]}). The object might have "
                                          "been modified")
            return self._remove(row, propagation != "Orphan")

    def _remove(self, row, cascade: bool) -> dict:
        """Delete one object; then its dependents (garbage collection) or, orphaning, their owner refs."""
        oid, uid, _, data = row
        obj = _decode(data)
        self._db.execute("DELETE FROM objects WHERE id=?", (oid,))
        self._db.execute("DELETE FROM labels WHERE oid=?", (oid,))
        self._db.execute("DELETE FROM owners WHERE oid=?", (oid,))
        rv = self._log("DELETED", obj)
        obj["metadata"]["resourceVersion"] = str(rv)
        self._db.execute("UPDATE changes SET data=? WHERE rv=?", (_dumps(obj), rv))
        dependents = [r[0] for r in self._db.execute("SELECT oid FROM owners WHERE owner_uid=?", (uid,))]
        for dep_id in dependents:
            dep = self._by_id(dep_id)     # read now: an earlier cascade may have changed or removed it
            if dep is None:
                continue
            dobj = _decode(dep[3])
            others = [u for u in owner_uids(dobj) if u != uid]
            alive = others and self._db.execute(
                f"SELECT 1 FROM objects WHERE uid IN ({','.join('?' * len(others))}) LIMIT 1", others).fetchone()
            if cascade and not alive:
                self._remove(dep, True)
            else:
                # Kubernetes' GC keeps an object another owner still holds; it only drops the dangling ref.
                refs = [r for r in dobj["metadata"].get("ownerReferences") or () if r.get("uid") != uid]
                self._replace(BY_KIND[dobj["kind"]], dep, dobj,
                              merge_patch(dobj, {"metadata": {"ownerReferences": refs or None}}), None, None)
        if obj["kind"] == "Namespace":
            inside = [r[0] for r in self._db.execute("SELECT id FROM objects WHERE namespace=?",
                                                     (obj["metadata"]["name"],))]
            for inner_id in inside:
                inner = self._by_id(inner_id)
                if inner is not None:
                    self._remove(inner, True)
        return obj

    def _by_id(self, oid: int):
        return self._db.execute("SELECT id, uid, rv, data FROM objects WHERE id=?", (oid,)).fetchone()


class _Noop:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


_NOOP = _Noop()


def _locked(e: sqlite3.OperationalError) -> bool:
    text = str(e)
    return "locked" in text or "busy" in text


def _check_file(path: Path) -> None:
    """Refuse, before SQLite touches it, a file that is not an SQLite database or is cut short.

    SQLite itself only notices a truncated file when it reads a missing page, possibly after
    writing more into it; the header says how big the file must be."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    except OSError as e:
        raise StateFileError(f"cannot open state file {path}: {e.strerror}") from None
    if path.is_dir():
        raise StateFileError(f"cannot open state file {path}: it is a directory")
    if size == 0:
        return
    try:
        with open(path, "rb") as f:
            head = f.read(100)
    except OSError as e:
        raise StateFileError(f"cannot open state file {path}: {e.strerror}") from None
    if not head.startswith(b"SQLite format 3\x00"):
        raise StateFileError(f"state file {path} is not an instancetype state file (not an SQLite database: "
                             "overwritten or damaged); move it aside or restore a backup")
    if len(head) < 100:
        raise StateFileError(f"state file {path} is damaged (truncated to {size} bytes); move it aside or "
                             "restore a backup")
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    header_valid = pages and head[24:28] == head[92:96]
    # With a -wal file present another process may be checkpointing (file growing); SQLite then
    # sizes the database itself, so only a quiescent file is measured against its header.
    wal = Path(f"{path}-wal")
    if header_valid and not wal.exists() and (size < pages * page or (page and size % page)):
        raise StateFileError(f"state file {path} is damaged (truncated: {size} bytes, its header says "
                             f"{pages * page}); move it aside or restore a backup")
