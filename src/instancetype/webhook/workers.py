"""`serve`'s admission workers: reviews are decoded and answered off the event loop.

* One huge review (a VM of 60,000 disks takes about a second) holds one worker; the others
  keep answering, and the event loop keeps accepting, reading and timing out connections.
* The workers are sized to the machine (its usable CPUs, at least two, so that one huge review
  never holds up every small one).
* Each worker thread has a stack big enough for the deepest object the API server accepts
  (10,000 levels: `review.MAX_OBJECT_DEPTH`): msgspec's decoder and encoder and the engine's few
  recursive walks go once per level, and the interpreter's recursion limit is raised to let them
  (it is the process's: the event loop's thread keeps its 8 MiB stack, on which msgspec decodes
  more than 20,000 levels without overflowing, so the raised limit is safe there too).
  Measured: a 10,000-deep VM is answered with 6 MiB of stack; 64 MiB leaves a wide margin and
  costs address space only, not memory.
"""
from __future__ import annotations

import concurrent.futures
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

from instancetype.engine import vm_decode
from instancetype.jsonutil import allow_deep_objects

STACK_SIZE = 64 << 20


def default_workers() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(2, cpus)


class AdmissionPool:
    """A fixed set of worker threads with big stacks, fed by `submit` (a concurrent Future each)."""

    def __init__(self, workers: int | None = None, *, name: str = "admission"):
        self.size = workers or default_workers()
        allow_deep_objects()
        vm_decode.warm_up()      # the engine's msgspec types, before several threads use them
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self.busy = 0            # jobs being run now (serve answers inline only at 0; tests wait on it)
        self._threads: list[threading.Thread] = []
        previous = threading.stack_size(STACK_SIZE)
        try:
            for i in range(self.size):
                t = threading.Thread(target=self._run, name=f"{name}-{i}", daemon=True)
                t.start()
                self._threads.append(t)
        finally:
            threading.stack_size(previous)      # other threads keep the default

    def submit(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._jobs.put((future, fn, args))
        return future

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            future, fn, args = job
            if not future.set_running_or_notify_cancel():
                continue
            with self._lock:
                self.busy += 1
            try:
                future.set_result(fn(*args))
            except BaseException as e:  # noqa: BLE001 - handed to the waiting request
                future.set_exception(e)
            finally:
                with self._lock:
                    self.busy -= 1

    def close(self, timeout: float = 10.0) -> None:
        """Stop the workers once the queued jobs are done (bounded wait)."""
        for _ in self._threads:
            self._jobs.put(None)
        for t in self._threads:
            t.join(timeout)
