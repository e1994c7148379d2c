"""A stored object's `data` column, in each state-file format: what a write puts there and how a
read tells what it finds.

- Format 1: the object's JSON as TEXT.
- Format 2: JSON as TEXT, or for JSON of at least COMPRESS_MIN bytes a BLOB of it deflated (a
  zlib stream: header, deflate, checksum).
- Format 3: the object's msgpack as a BLOB, and from COMPRESS_MIN bytes on deflated against a
  preset dictionary of its kind (`Dictionaries`, `dictionary_name`): `DICTIONARY_TAG`, the dictionary's id (one
  byte), then a raw deflate stream (no header, no checksum; the file's pages are checked by
  SQLite). Objects of one kind share most of their keys and values (a thousand VMs from one
  template differ in names, uids and times), so a row refers back to the dictionary instead of
  spelling them out: a batch start's five rows deflate to 0.6 KB instead of 3.8 KB, and the
  deflating costs a third of what it did (fewer, longer matches; no tree of literals to build).

A row read back is told by its first byte, whatever the file's format: TEXT is JSON; a BLOB
starting `{` is JSON, a msgpack map (0x80-0x8f, 0xde, 0xdf) is msgpack, DICTIONARY_TAG is format
3's deflated row, and a zlib header (0x08-0x78 with the low nibble 8) a deflated row whose content
is told the same way. The rows a transaction keeps at hand (`sqlite._RecentRows`) are held in
the same plain forms (`plain`: JSON bytes for formats 1 and 2, msgpack for 3).

The data column is never read by SQL (no `json_extract`): only by this module.
"""
from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Callable
from typing import Any

import msgspec

from instancetype.api.kinds import BY_KIND

COMPRESS_MIN = 512                   # a row this long or longer is stored deflated (formats 2, 3)

# Deflate's window, as zlib's `wbits`: 4 KiB (12) instead of its default 32 KiB (15). A row is
# 0.5-4 KB, so a larger window finds nothing more to refer back to (the same bytes come out for
# a batch start's rows, with or without a dictionary). A zlib stream says its window in its
# header, so `zlib.decompress` reads format 2's rows of any window alike.
DEFLATE_WBITS = 12
# Deflate's `memLevel`: its hash table of 2**(memLevel+7) entries, cleared for every row. Counted
# in instructions (callgrind, a batch start's five kinds of row, 1.1-2.6 KB), level 1 costs 241 k
# per row at zlib's default 8 and 192 k at 4 (a fifth less), for 0.2% more bytes (3,809 against
# 3,800 for the five); at 3 and below the table is too small and both time and size grow. The
# output differs from a default-memLevel stream's, not its format: the same reader reads both.
DEFLATE_MEM_LEVEL = 4
# Format 3's rows against a dictionary are deflated with fixed Huffman codes (`Z_FIXED`): what is
# left of a row once its dictionary is matched is some 100 bytes, for which building a block's
# own code tables costs more than it saves (-24 k instructions per batch start, the same 5.7 KiB
# of state per VM). The blocks are ordinary deflate: any reader reads them.
DEFLATE_STRATEGY = zlib.Z_FIXED

DICTIONARY_TAG = 0x01                # format 3: a row deflated against a dictionary
MAX_DICTIONARIES = 255               # ids fit the one byte after the tag; more kinds deflate plainly

_json_encode = msgspec.json.encode
_json_decode = msgspec.json.decode
_msgpack_encode = msgspec.msgpack.encode
_msgpack_decode = msgspec.msgpack.decode


def plain_format_3(obj: Any) -> bytes:
    """Format 3's plain form: msgpack, or JSON for an object msgpack cannot hold (an integer
    outside int64/uint64, which JSON and the formats before kept; a row says its encoding by its
    first byte, so the reader needs nothing more)."""
    try:
        return _msgpack_encode(obj)
    except OverflowError:
        return _json_encode(obj)


class DamagedRow(Exception):
    """A stored row that cannot be decoded (the store names the file and the object)."""

    def __init__(self, reason: str, kind: str = "", namespace: str = "", name: str = ""):
        super().__init__(reason)
        self.reason, self.kind, self.namespace, self.name = reason, kind, namespace, name


def dictionary_name(obj: dict) -> str:
    """The dictionary a row of `obj` is deflated against (format 3): its kind's; a
    ControllerRevision's by the kind of the object it holds too, when that is a kind of ours (an
    instancetype's, a preference's and a VM's revisions share little: against the first one's
    dictionary the others deflate to 380-390 bytes, against their own to about 80)."""
    kind = obj["kind"]
    if kind == "ControllerRevision":
        data = obj.get("data")
        held = data.get("kind") if type(data) is dict else None
        if type(held) is str and held in BY_KIND:
            return f"{kind}/{held}"
    return kind


def _deflate(raw: bytes) -> bytes:
    """Format 2's deflating: a zlib stream at level 1 (most of the gain, a fraction of the time
    of the default level; DEFLATE_WBITS, DEFLATE_MEM_LEVEL)."""
    deflate = zlib.compressobj(1, zlib.DEFLATED, DEFLATE_WBITS, DEFLATE_MEM_LEVEL)
    return deflate.compress(raw) + deflate.flush()


def pack_format_1(plain: bytes, name: str) -> str:
    return plain.decode()


def pack_format_2(plain: bytes, name: str) -> str | bytes:
    return plain.decode() if len(plain) < COMPRESS_MIN else _deflate(plain)


class Codec:
    """One connection's reading and writing of rows: `plain` (an object as a row's plain form)
    and `pack` (a plain form as the data column holds it) for the file's format; `decode` and
    `inflate` for every format. Format 3's dictionaries are read from the file as rows refer to
    them and made under the write lock (`Dictionaries`)."""

    __slots__ = ("plain", "pack", "dictionaries")

    def __init__(self, db: sqlite3.Connection, version: int | None):
        self.dictionaries = Dictionaries(db)
        self.plain: Callable[[Any], bytes]
        self.pack: Callable[[bytes, str], str | bytes]
        if version == 1:
            self.plain, self.pack = _json_encode, pack_format_1
        elif version == 2:
            self.plain, self.pack = _json_encode, pack_format_2
        else:
            self.plain, self.pack = plain_format_3, self.dictionaries.pack

    def inflate(self, data: Any) -> Any:
        """A row's data in its plain form (TEXT as it is): what a transaction keeps at hand."""
        if type(data) is not bytes or not data:
            return data
        first = data[0]
        if first == DICTIONARY_TAG:
            return self.dictionaries.inflate(data)
        if first & 0x0F == 8 and first <= 0x78:
            return zlib.decompress(data)
        return data

    def decode(self, data: Any, kind: str = "", namespace: str = "", name: str = "") -> Any:
        """A stored object; a row that cannot be read is damage in the file, said in one line."""
        try:
            if type(data) is bytes:
                data = self.inflate(data)
                if data[0] != 0x7B:         # not `{`: msgpack
                    return _msgpack_decode(data)
            return _json_decode(data)
        except (msgspec.DecodeError, TypeError, UnicodeDecodeError, zlib.error, IndexError, KeyError) as e:
            raise DamagedRow(str(e) or type(e).__name__, kind, namespace, name) from None


class Dictionaries:
    """Format 3's preset dictionaries, one per kind (`dictionary_name`), in the file's
    `dictionaries` table: the plain form (msgpack) of the first row of the kind that was long
    enough to deflate, its last
    2**DEFLATE_WBITS bytes (all the window reaches). A row is deflated against its kind's
    dictionary from a deflater primed with it once (`compressobj(zdict=...)`) and copied per row:
    priming costs about as much as deflating a row.

    The table only grows: a dictionary, once committed, never changes and is never deleted, so
    one read or made is kept for the connection's life. One made in a write transaction (under
    the write lock, after asking the file: another process may have made it meanwhile) is
    `new` until the commit, and forgotten if the transaction or a savepoint is rolled back (it
    may be gone from the file; the next use asks the file again)."""

    __slots__ = ("db", "by_name", "by_id", "new")

    def __init__(self, db: sqlite3.Connection):
        self.db = db
        self.by_name: dict[str, tuple[bytes, Any] | None] = {}   # name -> (row prefix, primed deflater)
        self.by_id: dict[int, bytes] = {}
        self.new: list[tuple[str, int]] = []

    def pack(self, plain: bytes, name: str) -> bytes:
        """Format 3's data column for `plain` (msgpack bytes), deflated against dictionary `name`."""
        if len(plain) < COMPRESS_MIN:
            return plain
        entry = self.by_name.get(name)
        if entry is None:
            entry = self._for_name(name, plain)
            if entry is None:
                return _deflate(plain)
        deflate = entry[1].copy()
        return entry[0] + deflate.compress(plain) + deflate.flush()

    def _for_name(self, name: str, plain: bytes) -> tuple[bytes, Any] | None:
        """Dictionary `name` from the file, else made from `plain` (under the write lock)."""
        if name in self.by_name:
            return None          # asked before: none can be made (MAX_DICTIONARIES reached)
        row = self.db.execute("SELECT id, data FROM dictionaries WHERE name=?", (name,)).fetchone()
        if row is None:
            count = self.db.execute("SELECT count(*) FROM dictionaries").fetchone()[0]
            if count >= MAX_DICTIONARIES:
                self.by_name[name] = None
                return None
            data = plain[-(1 << DEFLATE_WBITS):]
            oid = self.db.execute("INSERT INTO dictionaries (name, data) VALUES (?, ?)", (name, data)).lastrowid
            assert oid is not None
            row = (oid, data)
            self.new.append((name, oid))
        oid, data = row
        self.by_id[oid] = data
        entry = (bytes((DICTIONARY_TAG, oid)),
                 zlib.compressobj(1, zlib.DEFLATED, -DEFLATE_WBITS, DEFLATE_MEM_LEVEL, DEFLATE_STRATEGY, zdict=data))
        self.by_name[name] = entry
        return entry

    def inflate(self, data: bytes) -> bytes:
        """A format-3 deflated row's msgpack (KeyError: its dictionary is not in the file)."""
        oid = data[1]
        zdict = self.by_id.get(oid)
        if zdict is None:
            row = self.db.execute("SELECT data FROM dictionaries WHERE id=?", (oid,)).fetchone()
            if row is None:
                raise KeyError(f"deflated against dictionary {oid}, which the file does not hold")
            zdict = self.by_id[oid] = row[0]
        inflate = zlib.decompressobj(-DEFLATE_WBITS, zdict=zdict)
        out = inflate.decompress(memoryview(data)[2:])
        if not inflate.eof:
            raise zlib.error("the deflated row is cut short")
        return out

    def mark(self) -> int:
        """Where a savepoint starts: `rolled_back(mark)` forgets what was made after it."""
        return len(self.new)

    def committed(self) -> None:
        self.new.clear()

    def rolled_back(self, mark: int = 0) -> None:
        """Forget the dictionaries made since `mark` (0: since the last commit): gone from the file."""
        for name, oid in self.new[mark:]:
            self.by_name.pop(name, None)
            self.by_id.pop(oid, None)
        del self.new[mark:]
