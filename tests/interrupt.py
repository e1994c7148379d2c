"""Children that take Ctrl-C as a shell's would."""
from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def interruptible_children() -> Iterator[None]:
    """Processes started inside this block get SIGINT's default disposition, so Python turns it
    into KeyboardInterrupt there: an ignored signal stays ignored across exec, and a test run
    launched with SIGINT ignored (`nohup`, a background job of a shell without job control) would
    otherwise pass that on, and a child told to stop by SIGINT would never stop."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
