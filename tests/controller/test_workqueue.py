"""The work queue without a cluster: dedup, per-key exclusivity, rate-limited retries, shutdown."""
from __future__ import annotations

import random
import threading

from instancetype.controller.workqueue import BucketRateLimiter, ExponentialRateLimiter, RateLimiter, WorkQueue


def test_a_waiting_key_is_queued_once():
    q = WorkQueue()
    for _ in range(3):
        q.add("a")
    q.add("b")
    assert len(q) == 2
    assert q.get(timeout=0) == "a" and q.get(timeout=0) == "b"
    assert q.get(timeout=0) is None


def test_a_key_being_processed_is_not_handed_out_again_until_done():
    q = WorkQueue()
    q.add("a")
    assert q.get(timeout=0) == "a"
    q.add("a")                      # changed while a worker holds it: dirty, not queued
    q.add("a")
    assert q.get(timeout=0) is None
    q.done("a")                     # then queued again, once
    assert q.get(timeout=0) == "a"
    q.done("a")
    assert q.get(timeout=0) is None and q.idle()


def test_no_key_is_ever_processed_by_two_workers_at_once():
    q = WorkQueue()
    keys = [f"k{i}" for i in range(8)]
    active: set[str] = set()
    lock = threading.Lock()
    overlaps: list[str] = []
    processed = [0]
    stop = threading.Event()

    def worker():
        while True:
            key = q.get()
            if key is None:
                return
            with lock:
                if key in active:
                    overlaps.append(key)
                active.add(key)
            stop.wait(0.0005)
            with lock:
                active.discard(key)
                processed[0] += 1
            q.done(key)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    rng = random.Random(7)
    for _ in range(3000):
        q.add(rng.choice(keys))
    for _ in range(2000):           # bounded: wait for the queue to drain
        if q.idle():
            break
        stop.wait(0.005)
    q.shutdown()
    for t in threads:
        t.join(10)
    assert not overlaps
    assert q.idle() and processed[0] >= len(keys)


def test_every_key_added_after_its_last_processing_is_processed_again():
    q = WorkQueue()
    q.add("a")
    assert q.get(timeout=0) == "a"
    q.add("a")
    q.done("a")
    assert q.get(timeout=0) == "a"  # the change seen while processing is not lost


def test_exponential_backoff_per_key_and_forget():
    limiter = ExponentialRateLimiter(base=0.005, cap=1.0)
    assert [limiter.when("a") for _ in range(4)] == [0.005, 0.01, 0.02, 0.04]
    assert limiter.when("b") == 0.005                 # per key
    for _ in range(20):
        limiter.when("a")
    assert limiter.when("a") == 1.0                   # capped
    assert limiter.retries("a") == 25
    limiter.forget("a")
    assert limiter.retries("a") == 0 and limiter.when("a") == 0.005


def test_the_bucket_limits_retries_overall():
    t = [0.0]
    bucket = BucketRateLimiter(qps=10, burst=2, clock=lambda: t[0])
    assert bucket.when() == 0 and bucket.when() == 0
    assert abs(bucket.when() - 0.1) < 1e-9            # the burst is spent: one token per 0.1 s
    t[0] += 1.0
    assert bucket.when() == 0


def test_add_rate_limited_holds_the_key_back_until_its_delay_passes():
    t = [100.0]
    q = WorkQueue(RateLimiter(base=1.0, cap=8.0), clock=lambda: t[0])
    q.add_rate_limited("a")
    assert q.get(timeout=0) is None and not q.idle()
    t[0] += 1.0
    assert q.get(timeout=0) == "a"
    q.done("a")
    q.add_rate_limited("a")          # second failure: 2 s
    t[0] += 1.5
    assert q.get(timeout=0) is None
    t[0] += 0.5
    assert q.get(timeout=0) == "a"
    q.done("a")
    q.forget("a")
    assert q.retries("a") == 0


def test_shutdown_wakes_a_waiting_worker():
    q = WorkQueue()
    got = []
    t = threading.Thread(target=lambda: got.append(q.get()))
    t.start()
    q.shutdown()
    t.join(10)
    assert got == [None]
    q.add("late")                    # nothing is queued after shutdown
    assert q.get(timeout=0) is None


def test_idle_within_ignores_only_the_retries_due_later():
    t = [100.0]
    q = WorkQueue(clock=lambda: t[0])
    q.add_after("a", 5.0)
    assert not q.idle() and not q.idle(within=6.0)
    assert q.idle(within=1.0)                         # due in 5 s: not "soon"
    t[0] += 4.5
    assert not q.idle(within=1.0)                     # due in 0.5 s now
    q.add("b")
    assert not q.idle(within=1.0) and not q.idle(within=0.0)


def test_no_overall_bucket_by_default_a_backlog_of_failed_keys_is_not_throttled():
    # client-go's default bucket (10/s) would hold the 1,000th failed key back 90 s; per-key
    # backoff alone holds each back only by its own failures.
    t = [0.0]
    q = WorkQueue(RateLimiter(), clock=lambda: t[0])
    for i in range(1000):
        q.add_rate_limited(i)
    t[0] += 0.005
    got = [q.get(timeout=0) for _ in range(1000)]
    assert got == list(range(1000))
    limited = RateLimiter(qps=10)          # the bucket, when asked for
    assert max(limited.when(i) for i in range(1000)) > 80


def test_recovered_queues_the_keys_an_outage_held_back_at_once_and_keeps_their_counts():
    t = [0.0]
    q = WorkQueue(RateLimiter(base=1.0, cap=1000.0), clock=lambda: t[0])
    for _ in range(10):                    # ten failures each: 512 s of backoff
        for key in ("a", "b"):
            q.add_rate_limited(key, outage=True)
    q.add_rate_limited("own")              # a failure of the key's own: not an outage
    assert q.get(timeout=0) is None
    assert q.recovered() == 2              # the API server answers again
    assert sorted([q.get(timeout=0), q.get(timeout=0)]) == ["a", "b"]
    assert q.get(timeout=0) is None        # "own" keeps its backoff
    assert q.retries("a") == 10            # a key that fails again waits longer
    assert q.recovered() == 0              # nothing held back any more
