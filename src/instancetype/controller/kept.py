"""Objects of one kind kept by a driver between writes and followed through the change feed of a
store with transactions (the embedded one), instead of listed and decoded at every write that
reads them: the nodes at every placement (`NodeUsage.nodes`), the KubeVirt object at every write
(`Cluster._settings`). An informer's cache, in miniature, for a store that has no watch thread.

An object written by anyone (this driver, another handle on the file, another process) is read
again at the next use: its event is in the feed. What is kept is dropped and read whole again
when the store rolled back a transaction or savepoint since (`Store.rollbacks`): an object read
inside it may have been undone, and the resourceVersions it used handed out again, so the feed
no longer tells what changed. A store without transactions (a cluster's, whose reads come from
its informers' caches) is simply listed.
"""
from __future__ import annotations

from instancetype.store.base import Store


class Kept:
    def __init__(self, kind: str, namespace: str | None = None) -> None:
        self.kind = kind
        self.namespace = namespace
        self._objects: dict[tuple[str, str], dict] = {}     # (namespace, name) -> object, read only
        self._anchor: tuple[int, int] | None = None         # (resourceVersion followed to, rollbacks then)

    def objects(self, store: Store) -> list[dict]:
        """The objects as stored, ordered by namespace then name, as `Store.list` orders them;
        shared between calls, so read only."""
        if not store.transactional:
            return list(store.list(self.kind, self.namespace))
        if not self._follow(store):
            rv = int(store.resource_version() or 0)
            self._objects = {_key(o): o for o in store.list(self.kind, self.namespace)}
            self._anchor = (rv, store.rollbacks)
        return [self._objects[k] for k in sorted(self._objects)]

    def _follow(self, store: Store) -> bool:
        """The events since the last use, applied; False when what is kept cannot be trusted
        (nothing kept yet, or a rollback since)."""
        anchor = self._anchor
        if anchor is None or anchor[1] != store.rollbacks:
            return False
        since, rollbacks = anchor
        # Followed up to the store's resourceVersion, not only to the kind's last event: the feed
        # has no index by kind, so each use then scans the few changes since the last one, not
        # every change since the kind was last written. Read before the feed: an event another
        # process commits in between is read now or at the next use.
        rv = int(store.resource_version() or 0)
        last: dict[tuple[str, str], str] = {}      # key -> the type of its last event (each read once)
        for ev in store.changes(since, kind=self.kind, namespace=self.namespace, objects=False):
            last[(ev.namespace or "", ev.name)] = ev.type
            rv = max(rv, int(ev.resource_version))
        for key, event_type in last.items():
            obj = None if event_type == "DELETED" else store.find(self.kind, key[1], key[0] or None)
            if obj is None:
                self._objects.pop(key, None)
            else:
                self._objects[key] = obj
        self._anchor = (rv, rollbacks)
        return True


def _key(obj: dict) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")
