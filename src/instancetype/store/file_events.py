"""Being woken when another process writes the state file: Linux inotify, through ctypes.

The embedded store's change feed is a table; a reader that wants the next change (`get -w`)
waits here for the kernel to say the file or its write-ahead log was written, then reads the
table again. No timer runs while nothing changes. Where inotify is missing (not Linux, a
file system that does not report), `FileEvents.open` returns None and the caller polls.

A wake-up only says "read again": it may come for a write that added no event the reader wants
(a checkpoint, another kind), and one wake-up may stand for several commits.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import struct
import time
from pathlib import Path

_IN_MODIFY = 0x00000002
_IN_CLOSE_WRITE = 0x00000008
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_EVENT = struct.Struct("iIII")      # struct inotify_event: wd, mask, cookie, len (then the name)


def _libc():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1, libc.inotify_add_watch  # noqa: B018 (present, or AttributeError)
        return libc
    except (OSError, AttributeError):
        return None


class FileEvents:
    """Writes to a few files of one directory (`names`), as a file descriptor to wait on."""

    def __init__(self, fd: int, names: frozenset[str]):
        self.fd, self.names = fd, names

    @classmethod
    def open(cls, path: Path) -> FileEvents | None:
        """Watch `path` and its SQLite companions (`-wal`, `-journal`); None where inotify is missing."""
        libc = _libc()
        if libc is None:
            return None
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            return None
        directory = os.fsencode(path.parent if str(path.parent) else ".")
        mask = _IN_MODIFY | _IN_CLOSE_WRITE | _IN_MOVED_TO | _IN_CREATE
        if libc.inotify_add_watch(fd, directory, mask) < 0:
            os.close(fd)
            return None
        base = path.name
        return cls(fd, frozenset({base, f"{base}-wal", f"{base}-journal"}))

    def wait(self, timeout: float | None) -> bool:
        """Block until one of the files is written (True) or `timeout` seconds pass (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                return False
            if self._drain():
                return True

    def _drain(self) -> bool:
        """Read the queued events; whether any was about one of the files."""
        hit = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return hit
            offset = 0
            while offset + _EVENT.size <= len(data):
                _wd, _mask, _cookie, length = _EVENT.unpack_from(data, offset)
                name = data[offset + _EVENT.size:offset + _EVENT.size + length].rstrip(b"\0")
                hit = hit or os.fsdecode(name) in self.names
                offset += _EVENT.size + length

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> FileEvents:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
