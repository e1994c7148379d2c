"""The state file as a file: what can be told before SQLite reads it, and what to say when it is damaged.

SQLite notices a truncated or overwritten file only when it reads a missing page, possibly after
writing more into it; the header says how big the file must be. An empty file under the state
file's name is never a fresh cluster (new files are made whole first, `sqlite._create_state_file`).
"""
from __future__ import annotations

import os
from pathlib import Path

from instancetype.store.base import StateFileError

# What every message about a damaged file ends with.
RECOVER = ("restore a backup, or move it aside (a new, empty state file is made where none exists); "
           "`sqlite3 FILE .recover` may save part of it")


def check_file(path: Path) -> None:
    """Refuse, before SQLite touches it, a file that is empty, not an SQLite database, or cut short."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    except OSError as e:
        raise StateFileError(f"cannot open state file {path}: {e.strerror}") from None
    if path.is_dir():
        raise StateFileError(f"cannot open state file {path}: it is a directory")
    if size == 0:
        # New state files are made whole before they get their name (`_create_state_file`): an
        # empty file under the name is one that was truncated, never a fresh cluster.
        raise StateFileError(f"state file {path} is empty (0 bytes: truncated, or not a state file); "
                             f"{RECOVER}")
    try:
        with open(path, "rb") as f:
            head = f.read(100)
    except OSError as e:
        raise StateFileError(f"cannot open state file {path}: {e.strerror}") from None
    if not head.startswith(b"SQLite format 3\x00"):
        raise StateFileError(f"state file {path} is not an instancetype state file (not an SQLite database: "
                             f"overwritten or damaged); {RECOVER}")
    if len(head) < 100:
        raise StateFileError(f"state file {path} is damaged (truncated to {size} bytes); {RECOVER}")
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    header_valid = pages and head[24:28] == head[92:96]
    # With a -wal file present another process may be checkpointing (file growing); SQLite then
    # sizes the database itself, so only a quiescent file is measured against its header.
    wal = Path(f"{path}-wal")
    if header_valid and not wal.exists() and (size < pages * page or (page and size % page)):
        raise StateFileError(f"state file {path} is damaged (truncated: {size} bytes, its header says "
                             f"{pages * page}); {RECOVER}")


def unwritable_dir(path: Path) -> bool:
    return path.exists() and not os.access(path.parent, os.W_OK)


def size_with_wal(path: Path) -> int:
    """What a check reads: the main file and the log not yet folded into it."""
    try:
        wal = os.path.getsize(f"{path}-wal")
    except OSError:
        wal = 0
    return path.stat().st_size + wal
