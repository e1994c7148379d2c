"""What the VMIs on each node request, and which VMIs wait for a node: kube-scheduler's cache of
bound and assumed pods, kept so that placing a VMI never reads every VMI again.

A driver owns one (`Cluster` per open store, `VMController` per process) and binds it around its
reconciles, as it binds its shared revisions; unbound (a one-off call), a fresh one is built from
the store. It learns of VMIs two ways:
* a store with transactions (the embedded one) is read through its change feed (`sync`): the VMI
  events since the last one seen; if that event is gone (a rolled-back write gave its
  resourceVersion to another), everything is read again;
* a cluster's controller is handed the informers' VMI events (`observe`).
A placement is `assume`d at once (the next worker must not count the capacity as free), and the
events that follow confirm it.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from instancetype.engine import launcher_pod
from instancetype.engine.cache import ContentCache, content_key
from instancetype.engine.launcher_pod import pod_requests
from instancetype.engine.scheduler import NodeFacts, Pod, Usage, node_facts, schedule
from instancetype.store.base import Store

from .kept import Kept

VMI = "VirtualMachineInstance"
Key = tuple[str, str]


def _key(vmi: dict) -> Key:
    meta = vmi.get("metadata") or {}
    return (meta.get("namespace") or "default", meta.get("name") or "")


def node_of(vmi: dict) -> str | None:
    return (vmi.get("status") or {}).get("nodeName") or None


def waiting(vmi: dict) -> bool:
    """The VMI waits for a node: created, not placed, not on its way out."""
    meta = vmi.get("metadata") or {}
    return node_of(vmi) is None and not meta.get("deletionTimestamp") and (
        (vmi.get("status") or {}).get("phase") in ("Scheduling", "Pending"))


def scheduled_message(vmi: dict) -> str | None:
    """The message of the VMI's PodScheduled condition (the scheduler's last answer), if any."""
    for c in (vmi.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == "PodScheduled":
            message = c.get("message")
            return message if isinstance(message, str) else None
    return None


# Pods by the content of what they are rendered from: the VMIs of one instancetype and template
# ask the same of a node (only their names and firmware uuids differ).
_PODS: ContentCache[Pod] = ContentCache(256)


def pod_of(vmi: dict, config: dict | None) -> Pod:
    """What kube-scheduler's filters read of the VMI's virt-launcher pod; shared between the VMIs
    that ask the same (by `launcher_pod.pod_key`), so only read."""
    key = launcher_pod.pod_key(vmi, config)
    if key is None:
        return _render_pod(vmi, config)
    # Rendered from what the key holds (a private copy): the pod kept shares nothing with `vmi`.
    return _PODS.get_or_build(key, lambda: _render_pod(*launcher_pod.pod_inputs(key)))


def _render_pod(vmi: dict, config: dict | None) -> Pod:
    return Pod(pod_requests(vmi, config), launcher_pod.pod_node_selector(vmi, config),
               launcher_pod.required_node_affinity(vmi), launcher_pod.pod_tolerations(vmi))


class Answers:
    """kube-scheduler's answers in one round of retries (`NodeUsage.refused_again`): one per pod
    (by content), and the nodes they were given for, kept while nothing placed changes (`version`)."""

    __slots__ = ("version", "nodes", "by_pod")

    def __init__(self) -> None:
        self.version: int | None = None
        self.nodes: list[NodeFacts] = []
        self.by_pod: dict[bytes, tuple[str | None, str]] = {}


class NodeUsage:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.version = 0            # counts the changes of what is placed: a scheduler answer's age
        self.placed: dict[Key, tuple[str, str | None, dict[str, int]]] = {}    # key -> (node, uid, requests)
        self.by_node: dict[str, Usage] = {}
        self.pending: dict[Key, str | None] = {}                                # key -> uid
        self._anchor: tuple[int, str | None] | None = None                      # (rv, uid) of the last event
        self._nodes = Kept("Node")
        self._facts: tuple[list[dict], list[NodeFacts]] = ([], [])     # the kept nodes, and their facts

    # --- what is known ----------------------------------------------------------------------------

    def usage(self) -> dict[str, Usage]:
        return self.by_node

    def _drop(self, key: Key, uid: str | None = None) -> None:
        old = self.placed.get(key)
        if old is not None and (uid is None or old[1] in (None, uid)):
            self.version += 1
            del self.placed[key]
            self.by_node.setdefault(old[0], Usage()).add(old[2], -1)
        if uid is None or self.pending.get(key) in (None, uid):
            self.pending.pop(key, None)

    def _put(self, key: Key, node: str, uid: str | None, requests: dict[str, int]) -> None:
        self._drop(key)
        self.version += 1
        self.placed[key] = (node, uid, requests)
        self.by_node.setdefault(node, Usage()).add(requests)

    def observe(self, event_type: str, vmi: dict, config: dict | None | Callable[[], dict | None] = None) -> None:
        """A VMI event: placed (its requests counted on its node, again after a live update),
        waiting, or gone. `config` (the KubeVirt configuration, or what reads it) is read only
        for a placed VMI."""
        key, uid = _key(vmi), (vmi.get("metadata") or {}).get("uid")
        with self.lock:
            if event_type == "DELETED":
                self._drop(key, uid)
                return
            node = node_of(vmi)
            if node is not None:
                self._put(key, node, uid, pod_requests(vmi, config() if callable(config) else config))
                self.pending.pop(key, None)
            else:
                self._drop(key, uid)
                if waiting(vmi):
                    self.pending[key] = uid

    def assume(self, vmi: dict, node: str, requests: dict[str, int]) -> None:
        with self.lock:
            self._put(_key(vmi), node, (vmi.get("metadata") or {}).get("uid"), requests)

    def created(self, vmi: dict) -> None:
        """The VMI the controller just created (`vmi` as stored): on the node its placement was
        assumed on, the placement takes its uid; waiting for a node, it is pending. Either way
        the feed's ADDED event for it (`_follow`) is then known without reading the VMI again."""
        with self.lock:
            key = _key(vmi)
            uid = (vmi.get("metadata") or {}).get("uid")
            if not uid:
                return
            node = node_of(vmi)
            placed = self.placed.get(key)
            if node is not None and placed is not None and placed[1] is None and placed[0] == node:
                self.placed[key] = (node, uid, placed[2])
            elif node is None and placed is None and waiting(vmi):
                self.pending[key] = uid

    def _known(self, key: Key, uid: str) -> bool:
        """The VMI of this ADDED event is counted already (`created`)."""
        placed = self.placed.get(key)
        return (placed is not None and placed[1] == uid) or (placed is None and self.pending.get(key) == uid)

    def forget(self, vmi: dict) -> None:
        """An assumed placement whose VMI was not created after all."""
        with self.lock:
            key = _key(vmi)
            if key in self.placed and self.placed[key][1] is None:
                self._drop(key)

    def refused_again(self, store: Store, vmi: dict, config: dict | None, answers: Answers) -> bool:
        """`vmi` waits for a node and kube-scheduler would refuse its pod again with the message
        its PodScheduled condition holds, so retrying it would write nothing
        (vmsync/placement.py). A driver asks this before reconciling each waiting VMI's VM when
        capacity appears, so that a freed slot costs a scheduling answer per distinct pod, not a
        whole reconcile per waiting VMI. `answers` is the caller's, one per round of retries."""
        recorded = scheduled_message(vmi)
        if recorded is None or not waiting(vmi):
            return False
        with self.lock:
            if answers.version != self.version:
                answers.version, answers.nodes, answers.by_pod = self.version, self.node_facts(store), {}
            pod = pod_of(vmi, config)
            key = content_key((pod.requests, pod.node_selector, pod.affinity_terms, pod.tolerations))
            answer = answers.by_pod.get(key) if key is not None else None
            if answer is None:
                answer = schedule(pod, answers.nodes, self.by_node)
                if key is not None:
                    answers.by_pod[key] = answer
        return answer[0] is None and answer[1] == recorded

    # --- the change feed of a store with transactions -----------------------------------------------

    def sync(self, store: Store, config: dict | None = None) -> None:
        if not store.transactional:
            return          # fed by events
        with self.lock:
            if self._anchor is None or not self._follow(store, config):
                self._rebuild(store, config)

    def _rebuild(self, store: Store, config: dict | None) -> None:
        self.placed.clear()
        self.by_node.clear()
        self.pending.clear()
        self.version += 1
        rv = int(store.resource_version() or 0)
        for vmi in store.list(VMI):
            self.observe("ADDED", vmi, config)
        self._anchor = (rv, None)

    def _follow(self, store: Store, config: dict | None) -> bool:
        assert self._anchor is not None
        rv, uid = self._anchor
        # The feed without its objects: a VMI is read only for an event not already known (not
        # a deletion, which names its key and uid, nor the ADDED of a VMI this controller
        # created on its assumed placement: `created`).
        if uid is None:
            if int(store.resource_version() or 0) < rv:
                return False
            events = store.changes(rv, kind=VMI, objects=False)
        else:
            events = store.changes(rv - 1, kind=VMI, objects=False)
            first = next(iter(events), None)
            if first is None or int(first.resource_version) != rv or first.uid != uid:
                return False
        for ev in events:
            key = (ev.namespace or "default", ev.name)
            if ev.type == "DELETED":
                self._drop(key, ev.uid)
            elif not (ev.type == "ADDED" and self._known(key, ev.uid)):
                vmi = ev.object if ev.object is not None else store.find(VMI, ev.name, ev.namespace)
                if vmi is not None and (vmi.get("metadata") or {}).get("uid") == ev.uid:   # else gone since
                    self.observe(ev.type, vmi, config)
            self._anchor = (int(ev.resource_version), ev.uid)
        return True

    # --- the nodes ---------------------------------------------------------------------------------

    def nodes(self, store: Store) -> list[dict]:
        """The Node objects, as stored; shared between placements, so read only. On a store with
        transactions they are kept and followed through its change feed (controller/kept.py: a
        node written by anyone is read again at the next placement), not listed and decoded at
        every placement."""
        with self.lock:
            return self._nodes.objects(store)

    def node_facts(self, store: Store) -> list[NodeFacts]:
        """What the scheduler reads of the nodes (engine/scheduler.py `NodeFacts`), read again
        only when a node changed: the kept objects are the same objects until then."""
        with self.lock:
            nodes = self._nodes.objects(store)
            kept, facts = self._facts
            if len(kept) != len(nodes) or any(a is not b for a, b in zip(kept, nodes)):
                facts = node_facts(nodes)
                self._facts = (nodes, facts)
            return facts

    # --- binding ------------------------------------------------------------------------------------

    @contextmanager
    def bound(self) -> Iterator[NodeUsage]:
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)


_CURRENT: ContextVar[NodeUsage | None] = ContextVar("node_usage", default=None)


def current() -> NodeUsage:
    """The driver's bound usage; unbound, a fresh one (read whole from a store with transactions)."""
    usage = _CURRENT.get()
    return usage if usage is not None else NodeUsage()
