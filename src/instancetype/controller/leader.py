"""Leader election with a coordination.k8s.io/v1 Lease, as client-go's `leaderelection` does it.

Candidates race to write their identity into one Lease with optimistic concurrency; the holder
renews it every `retry_period`. A candidate takes the lease only when its record has not changed
for `lease_duration` as measured by the candidate's own clock since it last saw it change
(client-go's `observedTime`, so clocks need not agree). A leader whose renewals have failed for
`renew_deadline` (shorter than the lease duration) stops acting: `is_leading()` is also false
once `renew_deadline` has passed since the start of the last successful renewal, so a leader cut
off from the API server stops before any other candidate may take over. On a clean shutdown the
lease is released (holder cleared, duration 1 s) so another replica takes over at once.

client-go's defaults (kube components, KubeVirt's virt-controller): lease 15 s, renew deadline
10 s, retry period 2 s; a different lease duration scales the other two alike.
"""
from __future__ import annotations

import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from instancetype.api import kinds
from instancetype.errors import Error
from instancetype.store.base import AlreadyExists, APIError, Conflict, NotFound, Store

log = logging.getLogger("instancetype.leader")

DEFAULT_LEASE_DURATION = 15.0
LEASE_NAME = "virt-controller"          # KubeVirt's virt-controller lease
LEASE_NAMESPACE = kinds.INSTALL_NAMESPACE   # install's namespace (deploy.rbac: the Role on leases)


def default_identity() -> str:
    """client-go's convention: `<hostname>_<uuid>`."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def micro_time(t: float | None = None) -> str:
    """metav1.MicroTime's RFC 3339 text with microseconds."""
    dt = datetime.fromtimestamp(time.time() if t is None else t, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    def __init__(self, store: Store, *, identity: str | None = None, name: str = LEASE_NAME,
                 namespace: str = LEASE_NAMESPACE, lease_duration: float = DEFAULT_LEASE_DURATION,
                 renew_deadline: float | None = None, retry_period: float | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.store = store
        self.identity = identity or default_identity()
        self.name, self.namespace = name, namespace
        self.lease_duration = float(lease_duration)
        scale = self.lease_duration / DEFAULT_LEASE_DURATION
        self.renew_deadline = renew_deadline if renew_deadline is not None else 10.0 * scale
        self.retry_period = retry_period if retry_period is not None else 2.0 * scale
        if not (self.lease_duration > self.renew_deadline > self.retry_period > 0):
            raise Error("leader election: the lease duration must be greater than the renew deadline, "
                        "and that greater than the retry period")
        self._clock = clock
        self._observed: dict | None = None          # the lease spec last seen
        self._observed_at = 0.0                     # when it was first seen (our clock)
        self._renewed_at: float | None = None       # start of our last successful acquire/renew
        self._lock = threading.Lock()
        self.acquired = threading.Event()
        self.lost = threading.Event()
        self.transitions_seen = 0

    # --- the fence ----------------------------------------------------------------------------------

    def is_leading(self) -> bool:
        with self._lock:
            return (self._renewed_at is not None and not self.lost.is_set()
                    and self._clock() - self._renewed_at < self.renew_deadline)

    # --- one attempt (client-go's tryAcquireOrRenew) -------------------------------------------------

    def try_acquire_or_renew(self) -> bool:
        started = self._clock()
        wall = micro_time()
        try:
            lease = self.store.get("Lease", self.name, self.namespace)
        except NotFound:
            spec: dict[str, Any] = {"holderIdentity": self.identity, "leaseDurationSeconds": int(round(self.lease_duration)),
                    "acquireTime": wall, "renewTime": wall, "leaseTransitions": 0}
            try:
                created = self.store.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                             "metadata": {"name": self.name, "namespace": self.namespace},
                                             "spec": spec})
            except (AlreadyExists, Conflict):
                return False
            self._observe(created.get("spec") or {}, started)
            self._renewed(started)
            return True
        spec = dict(lease.get("spec") or {})
        if spec != self._observed:
            self._observe(spec, started)
        holder = spec.get("holderIdentity") or ""
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        if holder and holder != self.identity and self._observed_at + duration > self._clock():
            return False            # held by another, and not expired as we measure it
        new: dict[str, Any] = {"holderIdentity": self.identity, "leaseDurationSeconds": int(round(self.lease_duration)),
                               "renewTime": wall, "acquireTime": spec.get("acquireTime") or wall,
               "leaseTransitions": int(spec.get("leaseTransitions") or 0)}
        if holder != self.identity:
            new["acquireTime"] = wall
            new["leaseTransitions"] += 1
        lease["spec"] = new
        try:
            updated = self.store.update(lease)
        except (Conflict, NotFound):
            return False
        self._observe(updated.get("spec") or {}, started)
        self._renewed(started)
        return True

    def _observe(self, spec: dict, at: float) -> None:
        self._observed = dict(spec)
        self._observed_at = at

    def _renewed(self, at: float) -> None:
        with self._lock:
            self._renewed_at = at

    # --- the loops ----------------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Acquire (retrying every `retry_period`), then renew until `stop` or the lease is lost."""
        while not stop.is_set():
            if self._attempt():
                break
            stop.wait(self.retry_period)
        if stop.is_set():
            return
        log.info("%s: became the leader (lease %s/%s)", self.identity, self.namespace, self.name)
        self.acquired.set()
        while not stop.wait(self.retry_period):
            renewed = self._renewed_at
            assert renewed is not None      # set by the acquire that made us the leader, and by each renewal
            deadline = renewed + self.renew_deadline
            while not stop.is_set():
                if self._attempt():
                    break
                if self._clock() >= deadline:
                    log.warning("%s: failed to renew the lease within %.1fs: leadership lost",
                                self.identity, self.renew_deadline)
                    self.lost.set()
                    return
                stop.wait(min(self.retry_period / 2, max(0.0, deadline - self._clock())))

    def _attempt(self) -> bool:
        try:
            return self.try_acquire_or_renew()
        except (APIError, Error, OSError) as e:
            log.info("%s: lease %s/%s: %s", self.identity, self.namespace, self.name, e)
            return False

    def release(self) -> bool:
        """Give the lease up if we hold it (client-go's `release`): holder cleared, duration 1 s."""
        if not self.is_leading():
            return False
        with self._lock:
            self._renewed_at = None
        self.lost.set()
        try:
            lease = self.store.get("Lease", self.name, self.namespace)
            spec = dict(lease.get("spec") or {})
            if spec.get("holderIdentity") != self.identity:
                return False
            wall = micro_time()
            lease["spec"] = {"holderIdentity": "", "leaseDurationSeconds": 1, "acquireTime": wall,
                             "renewTime": wall, "leaseTransitions": int(spec.get("leaseTransitions") or 0)}
            self.store.update(lease)
            return True
        except (APIError, Error, OSError) as e:
            log.info("%s: releasing lease %s/%s: %s", self.identity, self.namespace, self.name, e)
            return False


def parse_duration(text: str) -> float:
    """A Go `time.Duration` text ("15s", "1m30s", "500ms", "2h") in seconds."""
    import re

    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    s = text.strip()
    if s in ("0", ""):
        if s == "0":
            return 0.0
        raise ValueError("empty duration")
    parts = re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", s)
    if not parts or "".join(n + u for n, u in parts) != s:
        raise ValueError(f'time: invalid duration "{text}"')
    return sum(float(n) * units[u] for n, u in parts)


__all__ = ["LeaderElector", "parse_duration", "default_identity", "micro_time"]
