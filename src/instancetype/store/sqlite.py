"""The embedded store: one SQLite file (WAL mode) shared safely by concurrent processes.

Layout (format 3, recorded in `PRAGMA user_version`, file marked by `PRAGMA application_id`):
  objects(id, kind, namespace, name, uid, rv, data)   data = the object (`store.rows`): format 3
                                                       its msgpack, from COMPRESS_MIN bytes on
                                                       deflated against its kind's dictionary (a
                                                       VM or VMI's 2 KB would otherwise fill a
                                                       4 KiB page alone); formats 1 and 2 JSON
  labels(oid, key, value)                              label selectors run in SQL
  owners(owner_uid, oid)                               ownerReferences, for cascading deletes
  changes(rv, type, kind, namespace, name, uid, data)  the change feed; rv is the resourceVersion
                                                       (AUTOINCREMENT: never reused), data only
                                                       for DELETED (as objects.data)
  dictionaries(id, name, data)                         format 3: each kind's preset dictionary for
                                                       deflating its rows (`rows.Dictionaries`)
Formats 1 (JSON TEXT only) and 2 (JSON, long rows deflated) are read as they are and written in
their own format (a format-1 or -2 file stays readable by the releases that made it); every row
says its own encoding (`rows.Codec.decode`). New files are format 3.

Every write runs inside `BEGIN IMMEDIATE` (the write lock is taken up front, so a transaction
never fails half-way on a lock); waits use SQLite's busy timeout plus a retry loop, and a lock
held too long becomes a `StateFileError` naming the file, never `database is locked`.
`synchronous=NORMAL` in WAL mode: a commit does not fsync, so a batch of 10,000 objects costs
one transaction and no fsync per object (the WAL is synced at checkpoints).
A `SqliteStore` (one connection) belongs to one thread; processes each open their own.

Opening: a new state file is made whole under a temporary name and linked into place, so an
empty file under the name is always damage (`statefile.check_file`), never a fresh cluster;
SQLite's `quick_check` runs on opening (see `_quick_check` for its schedule); a row whose JSON
cannot be read is a `StateFileError` naming the object (and the row can still be deleted). A
state file in a directory this user cannot write opens read-only: reads work, writes are refused.
"""
from __future__ import annotations

import builtins
import collections
import os
import secrets
import sqlite3
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from instancetype.api.kinds import BY_KIND, Resource
from instancetype.errors import StoreError
from instancetype.store import finalizers
from instancetype.store.base import (
    DEFAULT_NAMESPACE,
    UNDELETABLE_NAMESPACES,
    BadRequest,
    Event,
    Forbidden,
    NotFound,
    StateFileError,
    Store,
    already_exists,
    conflict,
    default_state_path,
    fields_match,
    is_mapping,
    merge_patch,
    not_found,
    now,
    owner_uids,
    parse_field_selector,
    parse_label_selector,
    prepare_create,
    prepare_update,
    resource,
    same_object,
)
from instancetype.store.rows import (
    COMPRESS_MIN,
    DEFLATE_MEM_LEVEL,
    DEFLATE_WBITS,
    Codec,
    DamagedRow,
    dictionary_name,
)
from instancetype.store.statefile import RECOVER, check_file, size_with_wal, unwritable_dir

__all__ = ["COMPRESS_MIN", "DEFLATE_MEM_LEVEL", "DEFLATE_WBITS", "FORMAT_VERSION", "SqliteStore", "open_store"]

FORMAT_VERSION = 3
APPLICATION_ID = 0x49545354          # "ITST": this file is an instancetype state file
LOCK_TIMEOUT = float(os.environ.get("INSTANCETYPE_LOCK_TIMEOUT", "120"))
_CHUNK = 500                         # rows per query when iterating (memory stays flat)
# A label selector's `key=value` carried by at most this many objects is read from the label
# index (one page: each page's query sorts what it finds), more by the kind's index (`_where`).
LABEL_DRIVEN_MAX = _CHUNK
QUICK_CHECK_ALWAYS_BYTES = 16 << 20  # files up to this size are checked at every opening (<= ~40 ms)
QUICK_CHECK_INTERVAL = 3600.0        # bigger ones at most once an hour (seconds)

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
CREATE TABLE dictionaries (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, data BLOB NOT NULL);
"""
_TABLES = {"objects", "labels", "owners", "changes"}
_TABLES_3 = _TABLES | {"dictionaries"}
# A create's read of its namespace (`SqliteStore.create`; whether it exists itself, the insert says).
_NAMESPACE_PROBE = "SELECT 1 FROM objects WHERE kind='Namespace' AND namespace='' AND name=?"

def _describe(e: DamagedRow) -> str:
    """What a damaged row is, and how to be rid of it (the start of a StateFileError's text)."""
    res = BY_KIND.get(e.kind)
    if res is None:
        return f"a stored object cannot be read ({e.reason});"
    where = f"{e.namespace}/{e.name}" if e.namespace else e.name
    ns_flag = f" -n {e.namespace}" if e.namespace else ""
    return (f"the stored {res.qualified} {where} cannot be read ({e.reason}); delete it "
            f"(`instancetype delete {res.plural} {e.name}{ns_flag}`) or")


# Kinds whose rows a create inserts whole instead of writing them behind (`_RecentRows`): the
# controller writes them once (a pinned or start revision), so a second write at the flush
# would be all the write-behind brings (3 of a start's 5 rows).
WRITTEN_WHOLE = frozenset({"ControllerRevision"})

# `_where`'s condition no row meets, known without asking the file.
_NONE = "0"

# How many rows a transaction keeps at hand (`_RecentRows`): the few a reconcile writes and reads
# again (a start's VM, revisions, VMI, its instancetype and preference), not a batch's thousands.
RECENT_ROWS = 64

# How many change-log entries a transaction keeps at hand (`_RecentRows.log`): a write's
# triggers read the feed since a little before it.
RECENT_CHANGES = 256

_Key = tuple[str, str, str]                 # (kind, namespace, name)
_Change = tuple[int, str, str, str, str, str]   # (rv, type, kind, namespace, name, uid)
_Row = tuple[int, str, int, Any]            # (id, uid, rv, data): data in its plain form when kept


class _RecentRows:
    """The rows this connection last wrote or read inside its write transaction, by (kind,
    namespace, name), as `(id, uid, rv, plain form)` (`rows.Codec.inflate`: msgpack or JSON bytes,
    or a TEXT row's JSON as it is): a reconcile reads back what it has just
    written (an update reads the row it replaces; a VM start reads its instancetype and preference
    twice, its start revision once), and such a read costs neither a query nor inflating a
    deflated row. Sound only under the write lock (`BEGIN IMMEDIATE`: no other connection writes
    the file meanwhile) and while every write of `objects` goes through `put` or `clear`; emptied
    when the transaction ends and when a savepoint is rolled back. At most RECENT_ROWS rows (the
    least recently used go first), so a batch's memory stays flat.

    Write-behind: a row written here is `dirty` until the file holds it: its `data` and `rv`
    columns are written (deflated) once, by `SqliteStore._flush`, however many times the
    transaction wrote the object (a VM start writes its VM four times). The other columns, the
    change log and the label and owner tables are written at each write as before, so only a
    read of `data` or `rv` from the file has to flush first (a list, the feed with its objects, a
    deletion's paths); a dirty row pushed out of the bound is written then (`put` returns it).

    `seq`: the change log's last resourceVersion, once read or written in the transaction (no
    other connection writes meanwhile), so that `resource_version()` needs no query; forgotten
    with the rows (a savepoint rolled back hands its resourceVersions out again). `namespaces`:
    the namespaces a create found there, asked once; forgotten with the rows (a deletion's paths
    forget them: a namespace removed is asked for again).

    `log`: the change-log entries this transaction last wrote (at most RECENT_CHANGES), and
    `log_base`, the resourceVersion below the oldest of them: every change after `log_base` is
    in `log` (no other connection writes meanwhile), so the feed without objects from there on
    needs no query (a start's triggers and caches asked it five times); `last_of_kind`, the
    resourceVersion of each kind's last entry in it, answers for a kind not written since without
    a scan. Forgotten with the rows: a savepoint rolled back hands its resourceVersions out again."""

    __slots__ = ("rows", "dirty", "seq", "namespaces", "log", "log_base", "last_of_kind")

    def __init__(self) -> None:
        self.rows: dict[_Key, _Row] = {}
        self.dirty: dict[_Key, str] = {}           # keys whose row the file does not hold yet, and
                                                   # the dictionary to deflate it against (`rows.dictionary_name`)
        self.seq: int | None = None
        self.namespaces: set[str] = set()          # namespaces a create found (none is deleted meanwhile)
        self.log: collections.deque[_Change] = collections.deque()
        self.log_base: int | None = None
        self.last_of_kind: dict[str, int] = {}     # kind -> the resourceVersion of its last entry logged

    def logged(self, change: _Change) -> None:
        """`change` was written to the change log (its resourceVersion the next in sequence)."""
        log = self.log
        if self.log_base is None:
            self.log_base = change[0] - 1
        elif len(log) >= RECENT_CHANGES:
            self.log_base = log.popleft()[0]
        log.append(change)
        self.last_of_kind[change[2]] = change[0]

    def changes_since(self, since: int, kind: str | None = None) -> builtins.list[_Change] | None:
        """The changes after `since`, oldest first, when all of them are in `log` (else None);
        with `kind`, none when no change of it was logged after `since` (a controller's caches ask
        about kinds a start does not write: nodes, the KubeVirt object)."""
        if self.log_base is None or since < self.log_base:
            return None
        if kind and self.last_of_kind.get(kind, since) <= since:
            return []
        out = []
        for change in reversed(self.log):       # from the newest: a caller asks for the last few
            if change[0] <= since:
                break
            out.append(change)
        out.reverse()
        return out

    def get(self, key: _Key) -> _Row | None:
        row = self.rows.pop(key, None)
        if row is not None:
            self.rows[key] = row          # most recently used last
        return row

    def put(self, key: _Key, row: _Row, dirty: str | None = None) -> tuple[str, _Row] | None:
        """Keep `row` (`dirty`: not yet in the file, to be deflated against that dictionary); a
        dirty row pushed out, for the caller to write."""
        self.rows.pop(key, None)
        self.rows[key] = row
        if dirty is not None:
            self.dirty[key] = dirty
        else:
            self.dirty.pop(key, None)
        if len(self.rows) > RECENT_ROWS:
            oldest = next(iter(self.rows))
            old = self.rows.pop(oldest)
            if oldest in self.dirty:
                return self.dirty.pop(oldest), old
        return None

    def take_dirty(self, kind: str | None = None) -> builtins.list[tuple[str, _Row]]:
        """The dirty rows (of `kind`, or all) with their dictionaries, now counted as written."""
        if kind is None:
            out = [(name, self.rows[k]) for k, name in self.dirty.items()]
            self.dirty.clear()
            return out
        keys = [k for k in self.dirty if k[0] == kind]
        return [(self.dirty.pop(k), self.rows[k]) for k in keys]

    def clear(self) -> None:
        """Forget every row, dirty ones included (the caller has flushed or rolled them back)."""
        self.rows.clear()
        self.dirty.clear()
        self.seq = None
        self.namespaces.clear()
        self.log.clear()
        self.log_base = None
        self.last_of_kind.clear()


def open_store(path: str | os.PathLike | None = None) -> SqliteStore:
    """The store at `path`, else at `default_state_path()` (created with its directory if missing)."""
    return SqliteStore(path)


class SqliteStore(Store):
    path: Path       # always a state file here
    transactional = True

    def __init__(self, path: str | os.PathLike | None = None, *, lock_timeout: float = LOCK_TIMEOUT,
                 _new: bool = False):
        explicit = path is not None
        if explicit and not isinstance(path, (str, os.PathLike)):
            raise StateFileError(f"the state file path must be a string, not {type(path).__name__}")
        if path is not None and not os.fspath(path):
            raise StateFileError("the state file path is empty: name a file (--state PATH), or leave the option "
                                 "out for the default")
        self.path = default_state_path(path)   # `~` expanded, as for $INSTANCETYPE_STATE
        self.lock_timeout = lock_timeout
        self._guard = _Errors(self)
        self.read_only = False
        self._depth = 0
        self._recent = _RecentRows()
        if not explicit:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        if not _new:
            check_file(self.path)
            if not self.path.exists():
                _create_state_file(self.path, lock_timeout)
        try:
            self._db = sqlite3.connect(self.path, timeout=min(5.0, lock_timeout), isolation_level=None)
        except sqlite3.Error as e:
            raise StateFileError(f"cannot open state file {self.path}: {e}") from None
        self._codec = Codec(self._db, None)
        try:
            self._setup()
        except StateFileError:
            self._db.close()
            if _new or not unwritable_dir(self.path):
                raise
            self._open_read_only()
        except BaseException:
            self._db.close()
            raise

    def _open_read_only(self) -> None:
        """A state file in a directory this user cannot write (no WAL index can be made there):
        opened read-only and immutable, so get and describe still work; any write is refused."""
        # Without a WAL file the main file is all there is: immutable (no lock, no -shm to make).
        immutable = "" if Path(f"{self.path}-wal").exists() else "&immutable=1"
        uri = "file:" + urllib.parse.quote(str(self.path.absolute())) + "?mode=ro" + immutable
        try:
            self._db = sqlite3.connect(uri, uri=True, timeout=min(5.0, self.lock_timeout), isolation_level=None)
        except sqlite3.Error as e:
            raise StateFileError(f"cannot open state file {self.path}: {e}") from None
        self.read_only = True
        try:
            with self._errors():
                version = self._format()
                if version is None:
                    raise StateFileError(f"state file {self.path} is empty and its directory is read-only")
                self._codec = Codec(self._db, version)
                self._quick_check()
        except BaseException:
            self._db.close()
            raise

    # --- opening -----------------------------------------------------------------------------------

    def _setup(self) -> None:
        with self._errors():
            self._retry(lambda: self._db.execute("PRAGMA journal_mode=WAL").fetchone())
            self._db.execute("PRAGMA synchronous=NORMAL")
            version = self._retry(self._format)
            self._codec = Codec(self._db, version)
            if version is not None:
                self._retry(self._quick_check)
            else:
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
        if version < 1 or not (_TABLES_3 if version >= 3 else _TABLES) <= tables:
            raise StateFileError(f"state file {self.path} is damaged (its tables are missing); {RECOVER}")
        return version

    def _quick_check(self, *, always: bool = False) -> None:
        """SQLite's `quick_check` (b-trees, pages, records; not index contents against rows):
        damage is found when the file is opened, not by a later command half-way through.

        It reads the whole file (about 2-8 ms per MB: 0.25 s for 10,000 VMs in 112 MB), so a
        file up to QUICK_CHECK_ALWAYS_BYTES is checked at every opening and a bigger one at
        most once per QUICK_CHECK_INTERVAL, the last good check stamped in `<file>.checked`."""
        stamp = Path(f"{self.path}.checked")
        if not always and not self._check_due(stamp):
            return
        rows = self._db.execute("PRAGMA quick_check(3)").fetchall()
        problems = [r[0] for r in rows if r[0] != "ok"]
        if problems:
            raise StateFileError(f"state file {self.path} is damaged (SQLite's integrity check: "
                                 f"{'; '.join(problems)}); {RECOVER}")
        if size_with_wal(self.path) > QUICK_CHECK_ALWAYS_BYTES:
            try:
                stamp.touch()
            except OSError:
                pass      # a read-only directory: checked again next time

    def _check_due(self, stamp: Path) -> bool:
        try:
            if size_with_wal(self.path) <= QUICK_CHECK_ALWAYS_BYTES:
                return True
            return time.time() - stamp.stat().st_mtime >= QUICK_CHECK_INTERVAL
        except OSError:
            return True

    def check(self, *, full: bool = False) -> None:
        """Check the file now, whatever the schedule: `quick_check`, or with `full` SQLite's
        `integrity_check`, which also compares every index with its table (0.5-0.6 s for 10,000
        VMs). A StateFileError when damaged."""
        with self._errors():
            if not full:
                self._quick_check(always=True)
                return
            problems = [r[0] for r in self._db.execute("PRAGMA integrity_check(3)").fetchall() if r[0] != "ok"]
            if problems:
                raise StateFileError(f"state file {self.path} is damaged (SQLite's integrity check: "
                                     f"{'; '.join(problems)}); {RECOVER}")

    def close(self) -> None:
        # The closed connection stays: using the store afterwards is a clear StoreError.
        if getattr(self, "_db", None) is not None:
            self._db.close()

    # --- transactions and errors -------------------------------------------------------------------

    def _errors(self) -> _Errors:
        """SQLite failures as StoreErrors that name the file (a `with` block around each use)."""
        return self._guard

    def _translated(self, e: BaseException) -> BaseException | None:
        """The StoreError that says what `e` means for the state file, or None to let `e` go."""
        if isinstance(e, StoreError):
            return None
        if isinstance(e, DamagedRow):
            return StateFileError(f"state file {self.path} is damaged: {_describe(e)} {RECOVER}")
        if isinstance(e, sqlite3.OperationalError):
            if _locked(e):
                return StateFileError(f"state file {self.path} is busy: another process held its lock for more "
                                      f"than {self.lock_timeout:g}s")
            code = getattr(e, "sqlite_errorname", "")
            if "full" in str(e):
                return StateFileError(f"state file {self.path}: disk full ({e}); nothing of this write was kept")
            if code.startswith("SQLITE_IOERR_WRITE") or code.startswith("SQLITE_IOERR_FSYNC"):
                return StateFileError(f"state file {self.path}: writing to the disk failed ({e}, {code}: a full disk, "
                                      "a file size limit or a failing device); nothing of this write was kept")
            if "readonly" in str(e):
                return StateFileError(f"state file {self.path} cannot be written here ({e}): it can be read, "
                                      "not changed")
            return StateFileError(f"state file {self.path}: {e}")
        if isinstance(e, (sqlite3.ProgrammingError, sqlite3.InterfaceError, sqlite3.IntegrityError)):
            return StoreError(f"state file {self.path}: {e}")
        if isinstance(e, sqlite3.DatabaseError):   # "file is not a database", "database disk image is malformed"
            return StateFileError(f"state file {self.path} is damaged ({e}); {RECOVER}")
        return None

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
            # The rows written behind so far go to the file first: a rollback to this savepoint
            # then forgets only rows written after it (`_RecentRows.clear`).
            with self._errors():
                self._flush()
            self._db.execute(f"SAVEPOINT {sp}")
            mark = self._codec.dictionaries.mark()
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                self._recent.clear()
                self._codec.dictionaries.rolled_back(mark)
                self.rollbacks += 1
                if not self._db.in_transaction:
                    # SQLite rolled the whole transaction back itself (a full disk, an I/O error):
                    # there is no savepoint to return to, and the error that did it is the news.
                    raise
                with self._errors():
                    self._db.execute(f"ROLLBACK TO {sp}")
                    self._db.execute(f"RELEASE {sp}")
                raise
            self._depth -= 1
            with self._errors():
                self._db.execute(f"RELEASE {sp}")
            return
        if self.read_only:
            raise StateFileError(f"state file {self.path} cannot be written here (its directory is read-only): "
                                 "it can be read, not changed")
        with self._errors():
            self._retry(lambda: self._db.execute("BEGIN IMMEDIATE"))
        self._depth = 1
        self._recent.clear()
        try:
            with self._errors():
                yield self
                self._flush()
        except BaseException:
            self._depth = 0
            self._recent.clear()
            self._codec.dictionaries.rolled_back()
            self.rollbacks += 1
            try:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
            except sqlite3.Error:
                pass     # the original error says more (a damaged file fails here too)
            raise
        self._depth = 0
        self._recent.clear()          # other processes may write once the lock is released
        try:
            with self._errors():
                self._retry(lambda: self._db.execute("COMMIT"))
        except BaseException:
            self._codec.dictionaries.rolled_back()
            raise
        self._codec.dictionaries.committed()

    def _keep(self, key: _Key, row: _Row, dirty: str | None) -> None:
        """Keep `row` at hand (`_RecentRows`); a dirty row it pushes out is written now."""
        out = self._recent.put(key, row, dirty)
        if out is not None:
            self._write_rows([out])

    def _flush(self, kind: str | None = None) -> None:
        """Write the rows written behind (of `kind`, or all) to the file: before a read of the
        file's `data` or `rv` columns, a savepoint, a deletion's paths and the commit."""
        if self._recent.dirty:
            self._write_rows(self._recent.take_dirty(kind))

    def _write_rows(self, rows: builtins.list[tuple[str, _Row]]) -> None:
        pack = self._codec.pack
        self._db.executemany("UPDATE objects SET rv=?, data=? WHERE id=?",
                             [(rv, pack(plain, name), oid) for name, (oid, _, rv, plain) in rows])

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def _write(self):
        """A transaction around one operation, unless the caller already holds one."""
        return self.transaction() if not self._depth else _NOOP

    # --- reads -------------------------------------------------------------------------------------

    def _row(self, res: Resource, name: str, namespace: str | None):
        ns = (namespace or DEFAULT_NAMESPACE) if res.namespaced else ""
        if not self._depth:
            return self._db.execute("SELECT id, uid, rv, data FROM objects WHERE kind=? AND namespace=? AND name=?",
                                    (res.kind, ns, name)).fetchone()
        key = (res.kind, ns, name)
        row = self._recent.get(key)
        if row is not None:
            return row
        row = self._db.execute("SELECT id, uid, rv, data FROM objects WHERE kind=? AND namespace=? AND name=?",
                               (res.kind, ns, name)).fetchone()
        if row is not None:
            try:
                plain = self._codec.inflate(row[3])
            except Exception:
                return row          # damaged: the caller's decode says so
            row = (row[0], row[1], row[2], plain)
            self._keep(key, row, None)
        return row

    def get(self, kind, name, namespace=None):
        res = resource(kind)
        obj = self._read(res, name, namespace)
        if obj is None:
            raise not_found(res, name)
        return obj

    def find(self, kind, name, namespace=None):
        # `get` without a NotFound raised and caught: a start asks for its VM and VMI before
        # they exist.
        if not name:
            return None
        try:
            res = resource(kind)
        except NotFound:
            return None         # a kind not stored: as `get`'s NotFound
        return self._read(res, name, namespace)

    def _read(self, res: Resource, name: str, namespace: str | None) -> dict | None:
        with self._errors():
            row = self._row(res, name, namespace)
            if row is None:
                return None
            return self._codec.decode(row[3], res.kind, (namespace or DEFAULT_NAMESPACE) if res.namespaced else "",
                                      name)

    def _where(self, res: Resource, namespace, label_selector, field_selector):
        """The SQL condition of a list or count, its parameters, and the field requirements SQL
        does not answer (checked on the decoded objects).

        Label requirements are EXISTS probes of each row the (kind, namespace, name) index
        yields, except one: the first `key=value` / `key in (...)` that few objects carry
        (`_labelled`) drives the query from the label index instead, and the kind and
        namespace are then tested on the rows it finds (`+o.kind`: not through their index).
        Without it, a controller finding a VM's start revisions by their label read every
        revision of the namespace: a start cost time in proportion to the VMs already there."""
        requirements = parse_label_selector(label_selector)
        fields = parse_field_selector(field_selector)       # (refused first, whatever matches)
        driver, carried = None, 0
        for r in requirements:
            if r.op in ("=", "in"):
                carried = self._labelled(r.key, r.values)
                if carried <= LABEL_DRIVEN_MAX:
                    driver = r
                    break
        if driver is not None and not carried:
            # No object carries it: no row can match (a new VM's start revisions), asked of
            # no statement (`_NONE`).
            return _NONE, [], []
        plus = "+" if driver is not None else ""
        sql, params = [f"{plus}o.kind=?"], [res.kind]
        if res.namespaced and namespace:
            sql.append(f"{plus}o.namespace=?")
            params.append(namespace)
        if driver is not None:
            sql.append(f"o.id IN (SELECT oid FROM labels WHERE key=? AND value IN ({','.join('?' * len(driver.values))}))")
            params += [driver.key, *driver.values]
        args: tuple[str | int, ...]
        for r in requirements:
            if r is driver:
                continue
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
        for f in fields:
            columns: dict[tuple[str, ...], str] = {("metadata", "name"): "o.name", ("metadata", "namespace"): "o.namespace"}
            column = columns.get(f.path)
            if column:
                sql.append(f"{column}{'=' if f.equal else '!='}?")
                params.append(f.value)
            else:
                rest.append(f)
        return " AND ".join(sql), params, rest

    def _labelled(self, key: str, values: tuple[str, ...]) -> int:
        """How many objects (of any kind) carry `key` with one of `values`, counted in the label
        index up to one past LABEL_DRIVEN_MAX."""
        with self._errors():
            return self._db.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM labels WHERE key=? AND value IN ({','.join('?' * len(values))}) "
                f"LIMIT {LABEL_DRIVEN_MAX + 1})", (key, *values)).fetchone()[0]

    def list(self, kind, namespace=None, *, label_selector=None, field_selector=None):
        # Selectors are checked now; the rows are read as the caller iterates.
        res = resource(kind)
        return self._iterate(*self._where(res, namespace, label_selector, field_selector), kind=res.kind,
                             one_namespace=bool(res.namespaced and namespace))

    def _iterate(self, where: str, params: builtins.list, rest: builtins.list, *, kind: str = "",
                 one_namespace: bool = False) -> Iterator[dict]:
        # Within one namespace the page key is the name alone: a (namespace, name) row value there
        # makes SQLite sort all of the namespace's rows again for every page.
        if where is _NONE:
            return
        key = "o.name > ?" if one_namespace else "(o.namespace, o.name) > (?, ?)"
        query = (f"SELECT o.namespace, o.name, o.data FROM objects o WHERE {where} AND {key} "
                 f"ORDER BY o.namespace, o.name LIMIT {_CHUNK}")
        after: tuple[str, ...] = ("",) if one_namespace else ("", "")
        while True:
            # Keyset pages: no statement stays open between yields, so the caller may write meanwhile.
            with self._errors():
                if self._recent.dirty:
                    self._flush(kind or None)
                rows = self._db.execute(query, (*params, *after)).fetchall()
            for ns, name, data in rows:
                with self._errors():
                    obj = self._codec.decode(data, kind, ns, name)
                if not rest or fields_match(obj, rest):
                    yield obj
            if len(rows) < _CHUNK:
                return
            after = (rows[-1][1],) if one_namespace else (rows[-1][0], rows[-1][1])

    def count(self, kind, namespace=None, *, label_selector=None, field_selector=None):
        res = resource(kind)
        where, params, rest = self._where(res, namespace, label_selector, field_selector)
        if where is _NONE:
            return 0
        if rest:
            return sum(1 for _ in self.list(kind, namespace, label_selector=label_selector,
                                            field_selector=field_selector))
        with self._errors():
            return self._db.execute(f"SELECT count(*) FROM objects o WHERE {where}", params).fetchone()[0]

    def uids(self, kind):
        res = resource(kind)
        with self._errors():     # from the column: a damaged row's JSON is not read
            return {r[0] for r in self._db.execute("SELECT uid FROM objects WHERE kind=?", (res.kind,))}

    def resource_version(self):
        if self._depth and self._recent.seq is not None:
            return self._recent.seq         # known in this write transaction (`_RecentRows.seq`)
        with self._errors():
            row = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name='changes'").fetchone()
        seq = row[0] if row else 0
        if self._depth:
            self._recent.seq = seq
        return seq

    def changes(self, since=0, *, kind=None, namespace=None, objects=True):
        if not objects and self._depth and type(since) is int:
            # Inside the write transaction, what it wrote itself is at hand (`_RecentRows.log`).
            recent = self._recent.changes_since(since, kind)
            if recent is not None:
                for rv, typ, k, ns, name, uid in recent:
                    if (not kind or k == kind) and (not namespace or ns == namespace):
                        yield Event(typ, k, ns, name, uid, rv, None)
                return
        cond, params = "c.rv > ?", []
        if kind:
            cond += " AND c.kind=?"
            params.append(kind)
        if namespace:
            cond += " AND c.namespace=?"
            params.append(namespace)
        # Without objects the feed is the changes table alone: no row of `objects` is joined,
        # read or decoded (a write's triggers ask only which kinds and types changed).
        data = "coalesce(c.data, o.data)" if objects else "NULL"
        join = "LEFT JOIN objects o ON c.type != 'DELETED' AND o.uid = c.uid " if objects else ""
        query = (f"SELECT c.rv, c.type, c.kind, c.namespace, c.name, c.uid, {data} FROM changes c {join}"
                 f"WHERE {cond} ORDER BY c.rv LIMIT {_CHUNK}")
        while True:
            with self._errors():
                if objects and self._recent.dirty:
                    self._flush(kind or None)
                rows = self._db.execute(query, (since, *params)).fetchall()
            for rv, typ, k, ns, name, uid, data in rows:
                with self._errors():
                    obj = self._codec.decode(data, k, ns, name) if data else None
                yield Event(typ, k, ns, name, uid, rv, obj)
            if len(rows) < _CHUNK:
                return
            since = rows[-1][0]

    def watch(self, kind=None, namespace=None, *, since=None, timeout=None, poll=0.05):
        """The change feed as it grows: read, then sleep until the kernel says the file or its WAL
        was written (`file_events`), then read again; no polling while nothing changes. The
        watch on the directory is set before the first read, so no commit falls between."""
        from .file_events import FileEvents

        events = FileEvents.open(self.path) if self.path is not None else None
        if events is None:
            yield from super().watch(kind, namespace, since=since, timeout=timeout, poll=poll)
            return
        with events:
            since = self.resource_version() if since is None else since
            while True:
                for ev in self.changes(since, kind=kind, namespace=namespace):
                    since = ev.resource_version
                    yield ev
                if not events.wait(timeout):
                    return

    # --- writes ------------------------------------------------------------------------------------

    def _log(self, typ: str, obj: dict, data: str | None = None, rv: int | None = None) -> int:
        """The change-log entry of a write; `rv`: its resourceVersion, handed out before (the
        next in sequence, `resource_version() + 1`), else the one the insert takes."""
        meta = obj["metadata"]
        entry = (typ, obj["kind"], meta.get("namespace", ""), meta["name"], meta["uid"])
        if rv is None:
            rowid = self._db.execute("INSERT INTO changes (type, kind, namespace, name, uid, data) "
                                     "VALUES (?,?,?,?,?,?)", (*entry, data)).lastrowid
            assert rowid is not None        # an INSERT sets it
        else:
            self._db.execute("INSERT INTO changes (rv, type, kind, namespace, name, uid, data) VALUES (?,?,?,?,?,?,?)",
                             (rv, *entry, data))
            rowid = rv
        self._recent.seq = rowid        # AUTOINCREMENT: the sequence is now this row's
        self._recent.logged((rowid, *entry))
        return rowid

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
        return self._create(obj, namespace, False)

    def create_handed_over(self, obj, *, namespace=None):
        return self._create(obj, namespace, True)

    def _create(self, obj: Any, namespace: str | None, handed_over: bool) -> dict:
        res, obj = prepare_create(obj, namespace, json_checked=self.json_checked, handed_over=handed_over)
        meta = obj["metadata"]
        obj["kind"] = res.kind
        with self._write(), self._errors():
            namespace = meta.get("namespace") or ""
            # Its namespace must exist: asked once per write transaction (`_RecentRows.namespaces`).
            if res.namespaced and namespace not in self._recent.namespaces:
                if self._db.execute(_NAMESPACE_PROBE, (namespace,)).fetchone() is None:
                    raise not_found(BY_KIND["Namespace"], namespace)
                self._recent.namespaces.add(namespace)
            # The row's columns now, its rv and data written behind (`_RecentRows`, `_flush`): an
            # empty text until then, which no read sees (7.42 M instructions per VM start against
            # 7.54 M with the data inserted at once, a VM being written again three times). A kind
            # the controller writes once (`WRITTEN_WHOLE`) is inserted whole: its row is not
            # written a second time at the flush. Kind, namespace and name are unique: an object
            # already there is this insert's failure, before anything is written (no probe first).
            whole = res.kind in WRITTEN_WHOLE
            rv = plain = None
            if whole:
                rv = self.resource_version() + 1
                meta["resourceVersion"] = str(rv)       # (taken off again if the insert fails)
                plain = self._codec.plain(obj)
            try:
                oid = self._db.execute(
                    "INSERT INTO objects (kind, namespace, name, uid, rv, data) VALUES (?,?,?,?,?,?)",
                    (res.kind, namespace, meta["name"], meta["uid"], rv or 0,
                     "" if plain is None else self._codec.pack(plain, dictionary_name(obj)))).lastrowid
            except sqlite3.IntegrityError as e:
                meta.pop("resourceVersion", None)
                if "objects.kind" in str(e):
                    raise already_exists(res, meta["name"]) from None
                raise
            assert oid is not None
            rv = self._log("ADDED", obj, rv=rv)
            meta["resourceVersion"] = str(rv)
            key = (res.kind, namespace, meta["name"])
            if plain is not None:
                self._keep(key, (oid, meta["uid"], rv, plain), None)
            else:
                self._keep(key, (oid, meta["uid"], rv, self._codec.plain(obj)), dictionary_name(obj))
            self._index(oid, obj, None)
        return obj

    def _replace(self, res: Resource, row, stored: dict, new: Any, subresource: str | None, wanted_rv: Any,
                 new_owned: bool = False) -> dict:
        """Write `new` over `stored` (decoded from `row` for this write: its parts are taken into
        the result as they are, not copied; `new_owned`: so are `new`'s, a dict made here)."""
        name = stored["metadata"]["name"]
        if wanted_rv not in (None, "") and str(wanted_rv) != str(row[2]):
            raise conflict(res, name)
        out = prepare_update(res, stored, new, subresource, json_checked=self.json_checked,
                             stored_owned=True, new_owned=new_owned)
        if same_object(out, stored):
            return stored
        out["kind"] = res.kind
        if finalizers.releasable(out):
            # The write took the last finalizer off an object being deleted: it goes now, as
            # it is written (the feed says DELETED), and what it owns is collected.
            return self._remove((row[0], row[1], row[2], self._codec.plain(out)), True)
        rv = self._log("MODIFIED", out)
        meta = out["metadata"]
        meta["resourceVersion"] = str(rv)
        # Written behind (`_RecentRows`): the file gets the row once, at `_flush`.
        self._keep((res.kind, meta.get("namespace") or "", name), (row[0], row[1], rv, self._codec.plain(out)),
                   dictionary_name(out))
        self._index(row[0], out, stored)
        return out

    def update(self, obj, *, subresource=None):
        if not is_mapping(obj) or not is_mapping(obj.get("metadata")):
            raise BadRequest("Object is not a valid Kubernetes object: expected a JSON object with metadata")
        res = resource(obj.get("kind"))
        meta = obj["metadata"]
        name = meta.get("name") or ""
        with self._write(), self._errors():
            row = self._row(res, name, meta.get("namespace"))
            if row is None:
                raise not_found(res, name)
            stored = self._codec.decode(row[3], res.kind, meta.get("namespace") or DEFAULT_NAMESPACE, name)
            return self._replace(res, row, stored, obj, subresource, meta.get("resourceVersion"))

    def patch(self, kind, name, patch, namespace=None, *, subresource=None):
        res = resource(kind)
        if not is_mapping(patch):
            raise BadRequest("the body of the request was in an unknown format - accepted media types include: "
                             "application/merge-patch+json")
        wanted = (patch.get("metadata") or {}).get("resourceVersion") if is_mapping(patch.get("metadata")) \
            else None
        with self._write(), self._errors():
            row = self._row(res, name, namespace)
            if row is None:
                raise not_found(res, name)
            stored = self._codec.decode(row[3], res.kind, namespace or DEFAULT_NAMESPACE, name)
            return self._replace(res, row, stored, merge_patch(stored, dict(patch)), subresource, wanted, True)

    def delete(self, kind, name, namespace=None, *, propagation="Background", resource_version=None, uid=None,
               grace_period=None):
        res = resource(kind)
        if propagation not in finalizers.PROPAGATIONS:
            raise BadRequest(f'unsupported propagation policy "{propagation}"')
        if grace_period is not None and (not isinstance(grace_period, int) or isinstance(grace_period, bool)):
            raise BadRequest("gracePeriodSeconds: must be an integer")
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
            return self._delete_row(row, propagation)

    def _delete_row(self, row, propagation: str) -> dict:
        """The API server's delete of one object, with the garbage collector's part of the
        propagation policy done at once (`store.finalizers`): removed when nothing holds it,
        else marked and returned marked. A namespace, and a damaged row, go outright."""
        oid, uid, _, data = row
        try:
            obj = self._codec.decode(data)
        except DamagedRow:
            return self._remove(row, True)
        if obj.get("kind") == "Namespace":
            return self._remove(row, True)
        if propagation == "Orphan":
            self._orphan_dependents(uid)
        elif propagation == "Foreground":
            for dep_id in self._dependent_ids(uid):
                dep = self._by_id(dep_id)
                if dep is not None and not self._held_elsewhere(dep, uid):
                    self._delete_row(dep, "Foreground")
        held = finalizers.finalizers_of(obj)
        if propagation == "Foreground" and self._dependent_ids(uid) and finalizers.FOREGROUND not in held:
            held.append(finalizers.FOREGROUND)
        if not held:
            return self._remove(row, propagation != "Orphan")
        if finalizers.marked(obj) and held == finalizers.finalizers_of(obj):
            return obj          # deleted before: nothing changes
        return self._rewrite(row, obj, finalizers.mark(obj, held, now()))

    def _rewrite(self, row, stored: dict, out: dict) -> dict:
        """Store `out` over `stored` as the server writes its own fields (no update rules)."""
        self._flush()
        self._recent.clear()      # a deletion's path: rare, and simpler forgotten than kept
        rv = self._log("MODIFIED", out)
        out["metadata"]["resourceVersion"] = str(rv)
        self._db.execute("UPDATE objects SET rv=?, data=? WHERE id=?",
                         (rv, self._codec.pack(self._codec.plain(out), dictionary_name(out)), row[0]))
        self._index(row[0], out, stored)
        return out

    def _dependent_ids(self, uid: str) -> builtins.list[int]:
        return [r[0] for r in self._db.execute("SELECT oid FROM owners WHERE owner_uid=?", (uid,))]

    def _held_elsewhere(self, dep, uid: str) -> bool:
        """Another owner of `dep` (not `uid`) still exists: the collector keeps `dep`."""
        others = [u for u in owner_uids(self._codec.decode(dep[3])) if u != uid]
        return bool(others) and self._db.execute(
            f"SELECT 1 FROM objects WHERE uid IN ({','.join('?' * len(others))}) LIMIT 1", others).fetchone() is not None

    def _orphan_dependents(self, uid: str) -> None:
        """The collector's `orphan` finalizer: dependents lose their reference to `uid`."""
        for dep_id in self._dependent_ids(uid):
            dep = self._by_id(dep_id)
            if dep is None:
                continue
            dobj = self._codec.decode(dep[3])
            refs = [r for r in dobj["metadata"].get("ownerReferences") or () if r.get("uid") != uid]
            self._replace(BY_KIND[dobj["kind"]], dep, dobj,
                          merge_patch(dobj, {"metadata": {"ownerReferences": refs or None}}), None, None)

    def _remove(self, row, cascade: bool) -> dict:
        """Delete one object; then its dependents (garbage collection: each deleted as the API
        server deletes it, so one with finalizers is marked) or, orphaning, their owner refs; then
        the owners waiting in the foreground for it to go."""
        oid, uid, _, data = row
        self._flush()
        self._recent.clear()      # as in _rewrite
        try:
            obj = self._codec.decode(data)
        except DamagedRow:
            # A damaged row can still be deleted (the way out of the damage): what the feed
            # records of it comes from the row's columns.
            kind, ns, name = self._db.execute("SELECT kind, namespace, name FROM objects WHERE id=?",
                                              (oid,)).fetchone()
            obj = {"kind": kind, "metadata": {"name": name, "uid": uid, **({"namespace": ns} if ns else {})}}
        self._db.execute("DELETE FROM objects WHERE id=?", (oid,))
        self._db.execute("DELETE FROM labels WHERE oid=?", (oid,))
        self._db.execute("DELETE FROM owners WHERE oid=?", (oid,))
        rv = self._log("DELETED", obj)
        obj["metadata"]["resourceVersion"] = str(rv)
        self._db.execute("UPDATE changes SET data=? WHERE rv=?", (self._codec.pack(self._codec.plain(obj), dictionary_name(obj)), rv))
        for dep_id in self._dependent_ids(uid):
            dep = self._by_id(dep_id)     # read now: an earlier cascade may have changed or removed it
            if dep is None:
                continue
            if cascade and not self._held_elsewhere(dep, uid):
                self._delete_row(dep, "Background")
            else:
                # Kubernetes' GC keeps an object another owner still holds; it only drops the dangling ref.
                dobj = self._codec.decode(dep[3])
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
        self._release_foreground(owner_uids(obj))
        return obj

    def _release_foreground(self, owners: builtins.list[str]) -> None:
        """An owner deleted in the foreground loses `foregroundDeletion` once its last dependent
        is gone, and goes itself when nothing else holds it."""
        self._flush()
        for owner_uid in owners:
            row = self._db.execute("SELECT id, uid, rv, data FROM objects WHERE uid=?", (owner_uid,)).fetchone()
            if row is None or self._dependent_ids(owner_uid):
                continue
            owner = self._codec.decode(row[3])
            held = finalizers.finalizers_of(owner)
            if not finalizers.marked(owner) or finalizers.FOREGROUND not in held:
                continue
            held.remove(finalizers.FOREGROUND)
            if held:
                self._rewrite(row, owner, finalizers.mark(owner, held, now()))
            else:
                self._remove(row, True)

    def _by_id(self, oid: int):
        self._flush()
        return self._db.execute("SELECT id, uid, rv, data FROM objects WHERE id=?", (oid,)).fetchone()


class _Errors:
    """`SqliteStore._errors()`: one per store, reused by every block (a class, not a generator
    context manager: a start runs some 40 of these blocks, and a generator's set-up per block
    was a measurable part of the store's own time)."""

    __slots__ = ("store",)

    def __init__(self, store: SqliteStore):
        self.store = store

    def __enter__(self) -> None:
        return None

    def __exit__(self, typ, e, tb) -> None:
        if e is None:
            return              # (None: never swallows an exception)
        translated = self.store._translated(e)
        if translated is not None:
            raise translated from None


class _Noop:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


_NOOP = _Noop()


def _locked(e: sqlite3.OperationalError) -> bool:
    text = str(e)
    return "locked" in text or "busy" in text


def _create_state_file(path: Path, lock_timeout: float) -> None:
    """Make a new state file whole (schema, format, default namespace) under a temporary name,
    then link it into place: no process ever sees an empty file under the state file's name.
    Another process that got there first wins; its file is used."""
    if not path.parent.is_dir():
        raise StateFileError(f"cannot open state file {path}: its directory does not exist")
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.new")
    try:
        try:
            SqliteStore(tmp, lock_timeout=lock_timeout, _new=True).close()   # the last close folds the WAL in
        except StateFileError as e:
            raise StateFileError(str(e).replace(str(tmp), str(path))) from None
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
    except OSError as e:
        raise StateFileError(f"cannot create state file {path}: {e.strerror or e}") from None
    finally:
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            try:
                leftover.unlink()
            except OSError:
                pass


