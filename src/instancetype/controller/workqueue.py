"""A work queue of keys, as client-go's `workqueue.TypedRateLimitingInterface` behaves.

* A key waiting in the queue is queued once however often it is added (the dirty set).
* A key being processed is never handed to a second worker: added meanwhile, it is marked dirty
  and queued again when the first worker calls `done` (per-key exclusivity).
* `add_rate_limited` re-adds a key after a delay from the rate limiter: per key, exponential
  from 5 ms doubling to a cap (client-go's `ItemExponentialFailureRateLimiter`, 5 ms to 1000 s).
  client-go's default (`DefaultTypedControllerRateLimiter`) also takes a token from a bucket
  shared by every key (10/s, burst 100), whose debt grows with every failure: after an outage
  a backlog that now succeeds was drained at 10 keys a second by the failures before it. The
  bucket is kept (`RateLimiter(qps=10)`) but off by default.
* `add_rate_limited(key, outage=True)`: the key failed because the API server could not be
  reached or failed (5xx, 429). `recovered()` (a reconcile succeeded again) re-queues at once
  every key waiting on such a failure: the backlog an outage left drains at the workers' rate,
  not at the backoff that the outage's length gave each key. Their failure counts stay, so a key
  that fails again waits longer. `forget` resets a key's failures after a success.
* `shutdown` wakes every waiting worker; `get` then returns None.
"""
from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class ExponentialRateLimiter(Generic[K]):
    """Per-key delay `base * 2**failures`, capped (client-go: 5 ms to 1000 s)."""

    def __init__(self, base: float = 0.005, cap: float = 1000.0):
        self.base, self.cap = base, cap
        self._failures: dict[K, int] = {}
        self._lock = threading.Lock()

    def when(self, key: K) -> float:
        with self._lock:
            n = self._failures.get(key, 0)
            self._failures[key] = n + 1
        if n > 60:
            return self.cap
        return min(self.cap, self.base * (2 ** n))

    def retries(self, key: K) -> int:
        with self._lock:
            return self._failures.get(key, 0)

    def forget(self, key: K) -> None:
        with self._lock:
            self._failures.pop(key, None)


class BucketRateLimiter:
    """A token bucket shared by every key: `qps` tokens a second, `burst` at most (client-go's
    overall limiter, 10 qps and burst 100). `when` reserves a token and says how long to wait."""

    def __init__(self, qps: float = 10.0, burst: int = 100, clock: Callable[[], float] = time.monotonic):
        self.qps, self.burst, self._clock = qps, burst, clock
        self._tokens = float(burst)
        self._last = clock()
        self._lock = threading.Lock()

    def when(self, key: object = None) -> float:
        with self._lock:
            t = self._clock()
            self._tokens = min(self.burst, self._tokens + (t - self._last) * self.qps)
            self._last = t
            self._tokens -= 1
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def forget(self, key: object = None) -> None:
        pass


class RateLimiter(Generic[K]):
    """The per-key exponential delay; with `qps`, the longer of it and an overall bucket's."""

    def __init__(self, base: float = 0.005, cap: float = 1000.0, qps: float | None = None, burst: int = 100):
        self.item: ExponentialRateLimiter[K] = ExponentialRateLimiter(base, cap)
        self.bucket: BucketRateLimiter | None = BucketRateLimiter(qps, burst) if qps else None

    def when(self, key: K) -> float:
        delay = self.item.when(key)
        return delay if self.bucket is None else max(delay, self.bucket.when(key))

    def retries(self, key: K) -> int:
        return self.item.retries(key)

    def forget(self, key: K) -> None:
        self.item.forget(key)


class WorkQueue(Generic[K]):
    def __init__(self, rate_limiter: RateLimiter[K] | None = None, clock: Callable[[], float] = time.monotonic):
        self._limiter = rate_limiter or RateLimiter()
        self._clock = clock
        self._cond = threading.Condition()
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._waiting: list[tuple[float, int, K]] = []      # (ready at, sequence, key): add_after
        self._seq = itertools.count()
        self._outage: set[K] = set()      # keys waiting on a backoff an outage gave them
        self._shutting_down = False

    # --- adding -------------------------------------------------------------------------------

    def add(self, key: K) -> None:
        with self._cond:
            self._add_locked(key)

    def _add_locked(self, key: K) -> None:
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if key in self._processing:
            return          # queued again by done()
        self._queue.append(key)
        self._cond.notify()

    def add_after(self, key: K, delay: float) -> None:
        if delay <= 0:
            self.add(key)
            return
        with self._cond:
            if self._shutting_down:
                return
            heapq.heappush(self._waiting, (self._clock() + delay, next(self._seq), key))
            self._cond.notify()

    def add_rate_limited(self, key: K, *, outage: bool = False) -> None:
        delay = self._limiter.when(key)
        if outage and delay > 0:
            with self._cond:
                self._outage.add(key)
        self.add_after(key, delay)

    def recovered(self) -> int:
        """Queue now every key waiting on an outage's backoff; how many were."""
        with self._cond:
            if not self._outage:
                return 0
            keep, moved = [], set()
            for entry in self._waiting:
                if entry[2] in self._outage:
                    self._add_locked(entry[2])
                    moved.add(entry[2])
                else:
                    keep.append(entry)
            heapq.heapify(keep)
            self._waiting = keep
            self._outage.clear()
            return len(moved)

    def forget(self, key: K) -> None:
        self._limiter.forget(key)

    def retries(self, key: K) -> int:
        return self._limiter.retries(key)

    # --- taking -------------------------------------------------------------------------------

    def get(self, timeout: float | None = None) -> K | None:
        """The next key (now marked processing), or None on shutdown or after `timeout` seconds."""
        deadline = None if timeout is None else self._clock() + timeout
        with self._cond:
            while True:
                self._promote_locked()
                if self._queue:
                    key = self._queue.popleft()
                    self._processing.add(key)
                    self._dirty.discard(key)
                    return key
                if self._shutting_down:
                    return None
                wait = None
                if self._waiting:
                    wait = max(0.0, self._waiting[0][0] - self._clock())
                if deadline is not None:
                    left = deadline - self._clock()
                    if left <= 0:
                        return None
                    wait = left if wait is None else min(wait, left)
                self._cond.wait(wait)

    def _promote_locked(self) -> None:
        t = self._clock()
        while self._waiting and self._waiting[0][0] <= t:
            _, _, key = heapq.heappop(self._waiting)
            self._outage.discard(key)
            self._add_locked(key)

    def done(self, key: K) -> None:
        with self._cond:
            self._processing.discard(key)
            if key in self._dirty:
                self._queue.append(key)
                self._cond.notify()

    # --- state --------------------------------------------------------------------------------

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue)

    def idle(self, within: float | None = None) -> bool:
        """Nothing queued, waiting or being processed. With `within`, a key waiting (a retry's
        backoff) to be ready later than `within` seconds from now does not count."""
        with self._cond:
            if self._queue or self._processing:
                return False
            if within is None:
                return not self._waiting
            return not self._waiting or self._waiting[0][0] > self._clock() + within

    def shutdown(self) -> None:
        with self._cond:
            self._shutting_down = True
            self._cond.notify_all()

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down
