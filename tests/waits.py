"""The tests' one bounded wait on a condition.

Where a test can wait on an event (a pipe, a line a process prints, a `threading.Event`, the
controller's `wait_idle`) it does. What is left is a condition in another process or behind an
API server that offers no notification the test can subscribe to (a port answering, an object
reaching a state, a log line appearing): those are polled here, never longer than `seconds`.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def eventually(check: Callable[[], T], seconds: float = 60.0, *, interval: float = 0.2,
               what: str = "the condition") -> T:
    """check()'s first truthy result, polled every `interval` seconds for at most `seconds`;
    AssertionError naming `what` and check()'s last result after that."""
    deadline = time.monotonic() + max(0.0, seconds)
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what} did not hold within {seconds:g}s (last: {result!r})")
        # Polled, not awaited: the condition lives where no event reaches the test (see above).
        time.sleep(interval)
