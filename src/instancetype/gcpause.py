"""The cyclic garbage collector paused around work that makes many objects and no garbage.

One rule, one mechanism (`gc_paused`): inside the block the collector does not run; when the
block ends, what it made is frozen (`gc.freeze`: never walked again) if it lives as long as the
process (`keep`), and the collector runs again if it ran before. Each collection the block would
have triggered walks every live object of the process, and a pause alone only defers that work
(the first collection after it walks them all): hence the freeze.

Its users:

* The command line's start (`start()` ... `started()`, from `cli.entry.main` without argv until
  the command's module is loaded): imports (click, the command's module, the engine) make tens of
  thousands of long-lived objects (modules, classes, functions). The command line also freezes
  everything at exit (an `atexit` hook, which runs before the interpreter's last collection: that
  collection would walk every object once more only to free memory the process gives back
  anyway). Together about a tenth of `expand -f`'s instructions (BENCHMARKS.md). In-process
  callers of `entry.main(argv)` (the tests) never call `start()`, and keep their collector.
* The Kubernetes client's imports on the command line (lightkube, httpx2, httpcore2: about 100
  collections, 5% of `get`'s time), `keep=True`.
* The decoding of a list of objects (a page of 500 makes tens of thousands of dicts and lists;
  msgspec's advice for large messages), without `keep`: the objects are the caller's, and go.
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager


@contextmanager
def gc_paused(*, keep: bool = False) -> Iterator[None]:
    """No cyclic garbage collection inside the block; `keep`: what the block made lives as long as
    the process (modules, classes, a client), and is frozen before collection resumes. Nested
    blocks leave the collector off until the outermost one ends."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if keep:
            gc.freeze()
        if was_enabled:
            gc.enable()


# The command line's start: a `gc_paused(keep=True)` block that `start()` enters and `started()`
# leaves (the two calls are in different functions: cli.entry's and cli.main's), None when none is open.
_start: AbstractContextManager[None] | None = None


def start() -> None:
    """This process is the command line: pause the collector while the command loads (as
    `gc_paused(keep=True)`), and freeze every object at exit, before the interpreter's last
    collection. Does nothing while a start's pause is open."""
    global _start
    if _start is not None:
        return
    import atexit

    atexit.register(gc.freeze)
    _start = gc_paused(keep=True)
    _start.__enter__()


def started() -> None:
    """The command's module is loaded: end `start()`'s pause (freeze what it made, run the
    collector again). A no-op when no start's pause is open."""
    global _start
    if _start is not None:
        pause, _start = _start, None
        pause.__exit__(None, None, None)
