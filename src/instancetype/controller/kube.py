"""The VM controller on a Kubernetes API server (KubeVirt's virt-controller): the wiring.

    KubeStore (requests) ─┬─ InformerSet (list+watch of WATCHED_KINDS) ─> CachedStore (reads)
                          │        └─ handlers ─> VMController.handle ─> WorkQueue ─> workers
                          └─ LeaderElector (a coordination.k8s.io Lease, read and written live)

The informers start at once (warm caches, as virt-controller's); the workers and the catalogue
deployment start once this replica leads and stop the moment it does not: every write first asks
the elector (`VMController.may_write`), and on leadership lost the process ends (client-go's
`OnStoppedLeading` in Kubernetes' components) so that a supervisor restarts it as a candidate.
Deletion of a VM needs little here: its VMI and own revisions carry it as their controller owner
and Kubernetes' garbage collector removes them; shared revisions, which no VM owns, are swept by
the controller (controller/runner.py, SHARED_SWEEP).
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

from instancetype.api.kinds import FLAVOR_KINDS
from instancetype.errors import Error
from instancetype.store.kube.flavor import FLAVOR_INFORMER_KINDS

from .leader import DEFAULT_LEASE_DURATION, LEASE_NAME, LEASE_NAMESPACE, LeaderElector
from .runner import WATCHED_KINDS, VMController

log = logging.getLogger("instancetype.controller")

SYNC_TIMEOUT = 120.0        # how long the first list of every watched kind may take
# A start is five writes made one after another, so a worker spends nearly all its time waiting
# for the API server (bench/cluster.py: about 0.4 CPU s of the controller per wall-clock s at 4
# workers). Enough workers keep the API server's write capacity busy; up to 20 they share the
# keep-alive connections of one client (httpx's pool keeps 20 open).
DEFAULT_WORKERS = 16


class LeadershipLost(Error):
    """The lease was lost: this replica stopped acting."""


@dataclass
class Options:
    kubeconfig: str | None = None
    context: str | None = None
    workers: int = DEFAULT_WORKERS
    leader_elect: bool = False
    lease_duration: float = DEFAULT_LEASE_DURATION
    lease_name: str = LEASE_NAME
    lease_namespace: str = LEASE_NAMESPACE
    identity: str | None = None
    catalog: bool = True
    kinds: tuple[str, ...] = field(default=(*WATCHED_KINDS, *FLAVOR_INFORMER_KINDS))


def run(opts: Options, stop: threading.Event, *, on_ready=None) -> None:
    """Run until `stop` is set (then release the lease) or leadership is lost (LeadershipLost).
    `on_ready(controller)` is called once the workers run (for the caller's status line)."""
    from instancetype.store.kube import CachedStore, InformerSet, KubeStore

    api = KubeStore(opts.kubeconfig, opts.context)
    elector = None
    informers = None
    ctl: VMController | None = None
    election_stop = threading.Event()
    election: threading.Thread | None = None
    heartbeat: threading.Thread | None = None
    try:
        api.ping()
        informers = InformerSet(api, list(opts.kinds))
        cached = CachedStore(api, informers)
        if opts.leader_elect:
            elector = LeaderElector(api, identity=opts.identity, name=opts.lease_name,
                                    namespace=opts.lease_namespace, lease_duration=opts.lease_duration)
            may_write = elector.is_leading
        else:
            def may_write() -> bool:
                return True
        from instancetype.lifecycle.catalog_sync import CLUSTER_REGISTRY  # as `install` deployed it

        ctl = VMController(cached, workers=opts.workers, may_write=may_write, catalog=opts.catalog,
                           catalog_registry=CLUSTER_REGISTRY)
        for inf in informers.informers.values():
            # a flavor object's events are those of the kind it stands for (a failed VM may now find it)
            kind = FLAVOR_KINDS[inf.kind] if inf.key in FLAVOR_INFORMER_KINDS else inf.kind
            inf.add_handler(on_add=_handler(ctl, kind, "ADDED"),
                            on_update=lambda old, new, _k=kind: ctl.handle(_k, "MODIFIED", new),
                            on_delete=_handler(ctl, kind, "DELETED"))
        informers.start()
        if not _wait(lambda: informers.wait_for_sync(0.5), stop, SYNC_TIMEOUT):
            if stop.is_set():
                return
            raise Error("the informers did not sync within %ds: %s" % (SYNC_TIMEOUT, "; ".join(informers.failures())
                                                                        or "no answer"))
        if elector is not None:
            election = threading.Thread(target=elector.run, args=(election_stop,), name="leader-election",
                                        daemon=True)
            election.start()
            while not stop.is_set() and not elector.acquired.wait(0.2):
                pass
            if stop.is_set():
                return
        import instancetype
        _ = instancetype.build_vmi    # the engine imported now: not by the first VM to start, within its start
        ctl.start()
        # The simulated nodes' Leases renewed (KWOK's heartbeat), so that a node lifecycle
        # controller keeps them Ready and untainted. Its own thread: its own connections.
        from .nodes import heartbeat as node_heartbeat

        heartbeat = threading.Thread(target=node_heartbeat, args=(api, election_stop),
                                     kwargs={"may_write": may_write}, name="node-heartbeat", daemon=True)
        heartbeat.start()
        if on_ready is not None:
            on_ready(ctl)
        while not stop.wait(0.2):
            if elector is not None and not elector.is_leading():
                ctl.stop(timeout=0)
                raise LeadershipLost(f"leader election lost: {elector.identity} no longer holds "
                                     f"lease {opts.lease_namespace}/{opts.lease_name}")
    finally:
        if ctl is not None:
            ctl.stop()
        election_stop.set()
        if election is not None:
            election.join(5)
        if heartbeat is not None:
            heartbeat.join(5)
        if elector is not None:
            elector.release()
        if informers is not None:
            informers.stop()
        api.close()


def _handler(ctl: VMController, kind: str, event: str):
    return lambda obj: ctl.handle(kind, event, obj)


def _wait(check, stop: threading.Event, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not stop.is_set() and time.monotonic() < deadline:
        if check():
            return True
    return False
