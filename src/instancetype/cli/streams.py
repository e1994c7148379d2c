"""The standard streams when they are closed, full or gone.

`run_guarded(body)` runs a command and flushes its output itself, so that a failure to write it
(`> /dev/full`, `>&-`, `| head -0`) becomes one clear line and exit status 1, never a traceback
or Python's "Exception ignored" at exit. Imported by the console script before anything else,
so it imports nothing but the standard library.
"""
from __future__ import annotations

import errno
import io
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn


class ClosedStream(io.TextIOBase):
    """Stands in for a standard stream that was closed when the process started (`cmd >&-`,
    `cmd <&-`): Python leaves `sys.stdout` None, and any write would fail with AttributeError.
    Reading or writing raises `OSError(EBADF)` instead; `discard` drops writes (for stderr, where
    there is nobody left to tell)."""

    def __init__(self, what: str, *, discard: bool = False):
        super().__init__()
        self.what = what
        self.discard = discard
        self.failed = False

    @property
    def buffer(self) -> ClosedStream:
        return self

    def _closed(self) -> OSError:
        self.failed = True
        return OSError(errno.EBADF, f"standard {self.what} is closed")

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> Any:
        raise self._closed()

    def readline(self, size: int | None = -1) -> Any:
        raise self._closed()

    def write(self, s: Any) -> int:
        if self.discard:
            return len(s)
        raise self._closed()

    def flush(self) -> None:
        if self.failed:
            raise self._closed()


class WatchedStream:
    """A standard output stream that remembers a failed write (`> /dev/full` fails once, and the
    next flush may succeed: without this, the failure could not be told from any other OSError)."""

    def __init__(self, stream: Any, state: dict | None = None):
        self._stream = stream
        self._state = state if state is not None else {"failed": None}

    @property
    def failed(self) -> OSError | None:
        return self._state["failed"]

    @property
    def buffer(self) -> WatchedStream:
        return WatchedStream(self._stream.buffer, self._state)

    def write(self, s: Any) -> int:
        try:
            return self._stream.write(s)
        except OSError as e:
            self._state["failed"] = e
            raise

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as e:
            self._state["failed"] = e
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def prepare_std_streams() -> None:
    """Closed standard descriptors get /dev/null (so that no file opened later takes number 0, 1 or
    2 and receives output meant for the terminal) and a `ClosedStream` that fails clearly."""
    for fd, name, what in ((0, "stdin", "input"), (1, "stdout", "output"), (2, "stderr", "error")):
        if getattr(sys, name) is not None:
            continue
        try:
            os.fstat(fd)
        except OSError:
            held = os.open(os.devnull, os.O_RDWR)
            if held != fd:
                os.dup2(held, fd)
                os.close(held)
        setattr(sys, name, ClosedStream(what, discard=fd == 2))
    if not isinstance(sys.stdout, (ClosedStream, WatchedStream)):
        sys.stdout = WatchedStream(sys.stdout)


def _flush(stream: Any) -> None:
    if stream is not None:
        stream.flush()


def _silence(stream: Any, fd: int) -> None:
    """After a failed write: send what is still buffered to /dev/null, so that the interpreter's
    last flush at exit does not fail again with a traceback."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except OSError:
        pass
    if isinstance(stream, ClosedStream):
        stream.failed = False
        stream.discard = True


def _broken(stream: Any) -> bool:
    if getattr(stream, "failed", None):
        return True
    try:
        _flush(stream)
    except OSError:
        return True
    return False


def _os_failure(exc: OSError) -> int:
    """An OSError that reached the top: the output could not be written (stdout closed, full, or
    its reader gone), or the machine refused something (a full disk): one line, status 1."""
    if _broken(sys.stdout) or _broken(sys.__stdout__):
        _silence(sys.stdout, 1)
        if exc.errno == errno.EPIPE:
            return 1              # the reader went away (`| head`): nothing to say, as every Unix tool
        message = f"error: cannot write the output: {exc.strerror or exc}"
    elif exc.filename:
        message = f"error: {exc.filename}: {exc.strerror or exc}"
    else:
        message = f"error: {exc.strerror or exc}"
    try:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    except (OSError, AttributeError):
        _silence(sys.stderr, 2)
    return 1


def run_guarded(body: Callable[[], Any]) -> NoReturn:
    """Run a command and exit with its status; the output is flushed here, so that a failure to
    write it (`> /dev/full`, `>&-`, `| head -0`) is one clear line and status 1, never a traceback."""
    saved = sys.stdout
    prepare_std_streams()
    try:
        try:
            code = body()
        except SystemExit as e:
            code = e.code
        _flush(sys.stdout)
        _flush(sys.stderr)
    except OSError as exc:
        code = _os_failure(exc)
    for stream, fd in ((sys.__stdout__, 1), (sys.__stderr__, 2)):
        if stream is not None and stream is not sys.stdout and stream is not sys.stderr and _broken(stream):
            _silence(stream, fd)      # replaced (click's pipe wrapper): the original still holds bytes
    if isinstance(sys.stdout, WatchedStream) and saved is not None:
        sys.stdout = saved            # in-process callers (tests) get their stream back
    sys.exit(code)
