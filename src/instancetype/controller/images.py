"""The bytes of disk images uploaded into the embedded cluster (virtctl image-upload).

They live beside the state file, in `<state file>.images/`, one file per PersistentVolumeClaim
named by the claim's uid (a UUID the store generated): no object name ever becomes a path.
A file is written under a temporary name (`.<uid>.<random>.part`, held under an exclusive
`flock` while written), fsynced and renamed into place, so a reader sees a whole image or
none. What nothing owns any more (the claim was deleted, or its writer was killed) is swept
away by `sweep`, which every opening of the cluster runs when the directory exists; images an
older instancetype kept by name (`<namespace>/<name>`) are moved to their claim's uid then.

`upload.py` beside this module plays CDI's part: which objects say what, and when.
"""
from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from instancetype.api import names
from instancetype.errors import StoreError

IMAGE_KINDS = ("PersistentVolumeClaim", "DataVolume")
_UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_PART = re.compile(r"\.(" + _UID.pattern + r")\.[0-9a-f]{16}\.part")
_CHUNK = 1 << 20


_ZERO = bytes(_CHUNK)


def copy_sparse(src: BinaryIO, fd: int, progress: Callable[[int], None] | None = None) -> int:
    """Copy `src` into the empty file `fd`, keeping holes: a disk image is mostly holes, and
    CDI's upload server keeps them (`cp --sparse=always`'s rule). On a regular file the data
    extents come from the file system (`SEEK_DATA`/`SEEK_HOLE`); within them, and on a stream,
    a chunk of zeros is skipped instead of written; the length is set at the end (`ftruncate`),
    so trailing holes stay holes. Returns the bytes the image holds (its apparent size)."""
    try:
        sfd = src.fileno()
        total = os.fstat(sfd).st_size
        regular = stat.S_ISREG(os.fstat(sfd).st_mode)
    except (AttributeError, OSError, ValueError):
        regular = False
    if not regular:
        return _copy_stream(src, fd, progress)
    offset = 0
    while offset < total:
        try:
            start = os.lseek(sfd, offset, os.SEEK_DATA)
        except OSError as e:
            if e.errno == errno.ENXIO:     # nothing but a hole from here to the end
                break
            raise
        end = os.lseek(sfd, start, os.SEEK_HOLE)
        while start < end:
            chunk = os.pread(sfd, min(_CHUNK, end - start), start)
            if not chunk:
                break
            if chunk != _ZERO[:len(chunk)]:
                os.pwrite(fd, chunk, start)
            start += len(chunk)
            if progress is not None:
                progress(start)
        offset = end
    os.ftruncate(fd, total)
    if progress is not None:
        progress(total)
    return total


def _copy_stream(src: BinaryIO, fd: int, progress: Callable[[int], None] | None) -> int:
    done = 0
    while True:
        chunk = src.read(_CHUNK)
        if not chunk:
            break
        if chunk != _ZERO[:len(chunk)]:
            os.pwrite(fd, chunk, done)
        done += len(chunk)
        if progress is not None:
            progress(done)
    os.ftruncate(fd, done)
    return done


class Images:
    """The image files of one state file."""

    def __init__(self, directory: str | os.PathLike):
        self.dir = Path(directory)

    @classmethod
    def beside(cls, state_path: str | os.PathLike) -> Images:
        return cls(Path(f"{state_path}.images"))

    def path(self, uid: str) -> Path:
        """Where the image of the claim with this uid lives (only a UUID is ever a file name)."""
        if not isinstance(uid, str) or not _UID.fullmatch(uid):
            raise StoreError(f"cannot keep an image for uid {uid!r}: not a UUID")
        return self.dir / uid

    def exists(self, uid: str) -> bool:
        return self.path(uid).is_file()

    # --- writing --------------------------------------------------------------------------------

    def write(self, uid: str, src: BinaryIO, progress: Callable[[int], None] | None = None) -> int:
        """Copy `src` into the image of `uid`: temporary file, fsync, rename, fsync of the
        directory. Returns the bytes written. On any failure (a full disk included) the
        temporary file is removed and the previous image, if any, is left as it was."""
        final = self.path(uid)
        self.dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = self._create_part(uid)
        try:
            done = copy_sparse(src, fd, progress)
            os.fsync(fd)
            os.replace(tmp, final)
            _fsync_dir(self.dir)
        except BaseException:
            _unlink(tmp)
            raise
        finally:
            os.close(fd)        # releases the flock
        return done

    def _create_part(self, uid: str) -> tuple[int, Path]:
        """A new temporary file, locked. A sweep may unlink a file between its creation and the
        lock (it takes the lock to judge the writer dead): then the file has no link left, and
        another is made."""
        while True:
            tmp = self.dir / f".{uid}.{secrets.token_hex(8)}.part"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_nlink > 0:
                return fd, tmp
            os.close(fd)

    # --- removing -------------------------------------------------------------------------------

    def remove(self, uids: Iterable[str]) -> None:
        """Remove the images of these claims (deleted), and their writers' leftovers. An image
        that cannot be removed is left for a later sweep, never an error for the deletion."""
        wanted = {u for u in uids if isinstance(u, str) and _UID.fullmatch(u)}
        if not wanted or not self.dir.is_dir():
            return
        for uid in wanted:
            _unlink(self.dir / uid)
        for entry in _entries(self.dir):
            m = _PART.fullmatch(entry.name)
            if m and m.group(1) in wanted:
                _remove_part_if_abandoned(entry)

    def sweep(self, live_uids: Callable[[], set[str]]) -> int:
        """Remove what no claim owns: images of claims that are gone, and temporary files whose
        writer is dead (its lock is free). `live_uids` is read after the directory is listed, so
        an image renamed into place meanwhile belongs to a claim already committed. Returns the
        number of files removed."""
        if not self.dir.is_dir():
            return 0
        entries = _entries(self.dir)
        if not entries:
            return 0
        live = live_uids()
        removed = 0
        for entry in entries:
            name = entry.name
            if _UID.fullmatch(name):
                if name not in live and _unlink(entry):
                    removed += 1
            elif _PART.fullmatch(name):
                removed += _remove_part_if_abandoned(entry)
        return removed


    def adopt_named(self, uid_of: Callable[[str, str], str | None]) -> int:
        """Images an older instancetype kept by name (`<namespace>/<name>`): each whose claim still
        exists moves to its uid; the rest stay where they are for the user to look at. Only
        names the API server accepts are looked up. Returns the number moved."""
        if not self.dir.is_dir():
            return 0
        moved = 0
        for folder in _entries(self.dir, dirs=True):
            if names.label_errors(folder.name):
                continue
            for entry in _entries(Path(folder.path)):
                if names.subdomain_errors(entry.name):
                    continue
                uid = uid_of(folder.name, entry.name)
                if uid and _UID.fullmatch(uid) and not self.exists(uid):
                    try:
                        os.replace(entry.path, self.path(uid))
                        moved += 1
                    except OSError:
                        pass
            try:
                os.rmdir(folder.path)
            except OSError:
                pass      # not empty: what is left stays
        return moved


def _entries(directory: Path, *, dirs: bool = False) -> list[os.DirEntry]:
    try:
        with os.scandir(directory) as it:
            if dirs:
                return [e for e in it if e.is_dir(follow_symlinks=False)]
            return [e for e in it if e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _remove_part_if_abandoned(path: os.DirEntry | Path) -> int:
    """Unlink a temporary file whose writer holds no lock on it (killed); 1 if removed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return 0
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0     # a writer is at work
        return 1 if _unlink(Path(path)) else 0
    finally:
        os.close(fd)


def _unlink(path: os.DirEntry | Path) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def _fsync_dir(directory: Path) -> None:
    """Make a rename inside `directory` durable."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
