"""An informer: one kind listed and then watched into memory, as client-go's shared informer.

A thread per informer runs client-go's reflector loop:
  list (paged) -> replace the cache, telling the handlers what was added, changed or removed
  watch from the list's resourceVersion, with bookmarks -> apply each event to the cache
  the server closes the stream (its timeout) -> watch again from the last resourceVersion seen
  410 Gone (the version was compacted) -> list again
  any other error -> wait (exponential backoff, bounded) and watch again from the last version
Reads (`get`, `list`) never make a request. Handlers run on the informer's thread, in event order;
an exception in a handler is logged and does not stop the informer.

The cache holds each object as compact bytes, not as the decoded dict: a VM's dict of dicts
costs tens of kilobytes of Python objects where its encoding costs one or two. The bytes are the
object's msgpack deflated against a preset dictionary, the msgpack of the first object the informer
cached (zlib's `zdict`): objects of one kind share most of their keys and values (a thousand VMs
made from one template differ in a name, a uid, a few timestamps), so a running VM of 1.3 KB
msgpack keeps about 400 bytes (its VMI 150), and the controller's live objects grow by about 2 KB
per VM with its VMI and revisions, not by tens (bench/cluster.py). Inflating is quicker than the msgpack decode that follows it. Every read
decodes, so a reader always gets its own copy (client-go hands out shared pointers that callers
must DeepCopy before changing; here there is nothing to forget). What no reader needs is dropped
before caching: `metadata.managedFields` (server-side apply's field ownership, several entries per
object; no reader here applies or inspects it, and an update that omits it keeps the stored one:
Kubernetes' fieldmanager). Keys share their strings (`sys.intern`): every object of a namespace
names it, and a VM and its VMI have one name.

The informer's thread makes every request of its own (relists, watches) on its own connections
(client.ApiClient keeps a pool per thread) and is the only thread that reads or closes them:
`stop()` sets a flag and wakes a blocked watch read (`WatchStream.abort`: a shutdown(2) of the
socket, not a close); the thread sees it, closes its response and its pool, and ends.
"""
from __future__ import annotations

import builtins
import logging
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from instancetype.api.kinds import STORAGE_KINDS
from instancetype.errors import StoreError
from instancetype.store.base import NotFound

if TYPE_CHECKING:
    from instancetype.store.kube.store import WatchStream

from .client import Gone, Unreachable, resource_of
from .flavor import FLAVOR_INFORMER_KINDS, split_key
from .store import KubeStore, meta_of

log = logging.getLogger("instancetype.informer")

Handler = Callable[..., None]
BACKOFF_START = 0.2      # seconds before the first retry after an error
BACKOFF_MAX = 10.0       # the longest wait between retries
WATCH_TIMEOUT = 300      # seconds the API server keeps one watch request open (then it is reopened)
DROPPED_METADATA = ("managedFields",)     # metadata no reader of the cache needs (see above)

ZDICT_MAX = 32 * 1024     # deflate's window: a longer preset dictionary is never looked at
DEFLATE_LEVEL = 6         # zlib's default; level 1 keeps a VM in about twice the bytes

_pack = msgspec.msgpack.Encoder().encode
_unpack = msgspec.msgpack.Decoder().decode


class Packer:
    """An informer's objects to and from the bytes its cache keeps (see the module's text). The
    preset dictionary is fixed by the first `pack` and kept for the informer's life: every cached
    object depends on it. Equal objects pack to equal bytes (a relist compares them)."""

    def __init__(self) -> None:
        self._zdict: bytes | None = None

    def pack(self, obj: dict) -> bytes:
        """`obj` (the caller's own, changed: the dropped metadata goes) as the cache keeps it."""
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            for k in DROPPED_METADATA:
                meta.pop(k, None)
        raw = _pack(obj)
        if self._zdict is None:
            self._zdict = raw[-ZDICT_MAX:]
        deflate = zlib.compressobj(DEFLATE_LEVEL, zdict=self._zdict)
        return deflate.compress(raw) + deflate.flush()

    def unpack(self, data: bytes) -> dict:
        """A fresh dict of a packed object."""
        assert self._zdict is not None     # set by the first pack, before any data exists
        return _unpack(zlib.decompressobj(zdict=self._zdict).decompress(data))


def key_of(obj: dict) -> tuple[str, str]:
    meta = meta_of(obj)
    return sys.intern(meta.get("namespace") or ""), sys.intern(meta.get("name") or "")


class Informer:
    """The objects of one kind (optionally one namespace / label selector), kept current.

    `kind` may name a served version of another group as `group/version/Kind` (seed 002's flavor
    kinds); that string is the informer's `key`. An `optional` kind the cluster does not serve
    (its CRD is absent: 404 on the list) counts as synced and empty, and is listed again later.

    `on_add(obj)`, `on_update(old, new)`, `on_delete(obj)` are called for every change, from
    the first list on (a relist reports its differences the same way). `has_synced` is true
    once the first list is in the cache; `wait_for_sync(timeout)` waits for it.
    """

    def __init__(self, store: KubeStore, kind: str, namespace: str | None = None, *,
                 label_selector: str | None = None, on_add: Handler | None = None,
                 on_update: Handler | None = None, on_delete: Handler | None = None,
                 backoff_start: float = BACKOFF_START, backoff_max: float = BACKOFF_MAX,
                 watch_timeout: int = WATCH_TIMEOUT, optional: bool = False):
        self.store = store
        self.key = kind
        kind, self.api_version = split_key(kind)
        self.res = resource_of(kind, self.api_version)
        self.kind = self.res.kind
        self.optional = optional
        self.namespace = namespace if self.res.namespaced else None
        self.label_selector = label_selector
        self.backoff_start, self.backoff_max = backoff_start, backoff_max
        self.watch_timeout = watch_timeout
        self._packer = Packer()
        self._cache: dict[tuple[str, str], bytes] = {}     # key -> the object, packed
        self._lock = threading.RLock()
        self._handlers: list[tuple[Handler | None, Handler | None, Handler | None]] = []
        if on_add or on_update or on_delete:
            self._handlers.append((on_add, on_update, on_delete))
        self._synced = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._stream: WatchStream | None = None
        self._next_version: str | None = None
        self.resource_version = ""     # the last resourceVersion seen (list, event or bookmark)
        self.lists = 0                 # how many times the kind was listed (1 + relists)
        self.errors = 0                # errors survived (each followed by a backoff)
        self.last_error: str = ""

    # --- life ------------------------------------------------------------------------------------

    def add_handler(self, on_add: Handler | None = None, on_update: Handler | None = None,
                    on_delete: Handler | None = None) -> None:
        """More handlers; added before `start()` they see every object, later ones only what changes."""
        with self._lock:
            self._handlers.append((on_add, on_update, on_delete))

    def start(self) -> Informer:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"informer-{self.kind}", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread and wait for it (at most `timeout`): it closes its own connections."""
        self._stop.set()
        stream = self._stream
        if stream is not None:
            stream.abort()               # ends a blocked watch read at once
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def reconnect(self, resource_version: str | None = None) -> None:
        """Drop the open watch; it is opened again from `resource_version` (default: the last
        one seen), as after a lost connection. A version the API server no longer keeps is
        answered 410 Gone, and the informer lists again."""
        if resource_version is not None:
            # Taken when the next watch opens: events still in flight on the old one do not undo it.
            self._next_version = resource_version
        stream = self._stream
        if stream is not None:
            stream.abort()

    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self._synced.wait(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # --- reads (no request) ------------------------------------------------------------------------

    def get(self, name: str, namespace: str | None = None) -> dict | None:
        """The cached object (a fresh copy: the caller's to change), or None."""
        ns = (namespace or "") if self.res.namespaced else ""
        raw = self._cache.get((ns, name))
        return None if raw is None else self._packer.unpack(raw)

    def list(self, namespace: str | None = None) -> list[dict]:
        """Cached objects (fresh copies), ordered by namespace then name; `namespace=None`: all."""
        return list(self.iter(namespace))

    def iter(self, namespace: str | None = None) -> Iterator[dict]:
        """`list`, decoded one object at a time as the caller goes (over the objects cached when it
        was called): a scan of thousands of VMs never holds them all as dicts."""
        unpack = self._packer.unpack
        return (unpack(raw) for _, raw in self._items(namespace))

    def keys(self, namespace: str | None = None) -> builtins.list[tuple[str, str]]:
        """(namespace, name) of the cached objects, ordered; nothing is decoded."""
        return [k for k, _ in self._items(namespace)]

    def _items(self, namespace: str | None) -> builtins.list[tuple[tuple[str, str], bytes]]:
        with self._lock:
            items = [(k, v) for k, v in self._cache.items() if namespace is None or k[0] == namespace]
        items.sort(key=lambda kv: kv[0])
        return items

    def __len__(self) -> int:
        return len(self._cache)

    # --- the reflector loop ---------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._reflect()
        finally:
            self.store.http.close_thread()      # this thread's connections, closed by this thread

    def _reflect(self) -> None:
        backoff = self.backoff_start
        need_list = True
        error: Exception
        while not self._stop.is_set():
            try:
                if need_list:
                    self._relist()
                    need_list = False
                self._watch()
                backoff = self.backoff_start
                continue
            except Gone:
                need_list = True         # the version was compacted: list again, at once
                continue
            except NotFound as e:
                if self.optional:
                    if need_list:
                        # Not served here (no CRD): empty until it is; listed again after the longest backoff.
                        self._unserved(str(e))
                        if self._stop.wait(self.backoff_max):
                            return
                    need_list = True     # a watch answered 404: the CRD went away, list again
                    continue
                error = e
            except Exception as e:       # the server went away, a bad answer: retry, bounded
                error = e
            if self._stop.is_set():
                return
            self.errors += 1
            self.last_error = str(error) if isinstance(error, StoreError) else f"{type(error).__name__}: {error}"
            log.warning("informer %s: %s (retrying in %.1fs)", self.key, self.last_error, backoff)
            if self._stop.wait(backoff):
                return
            backoff = min(backoff * 2, self.backoff_max)
            if not self.resource_version:
                need_list = True

    def _unserved(self, why: str) -> None:
        with self._lock:
            old, self._cache = self._cache, {}
            self.resource_version = ""
        for raw in old.values():
            self._emit(2, self._packer.unpack(raw))
        self.last_error = why
        self._synced.set()

    def _relist(self) -> None:
        # Each object is compacted as its page is decoded: a relist of thousands of objects never
        # holds them all as dicts at once.
        items, rv = self.store.list_at(self.kind, self.namespace, label_selector=self.label_selector,
                                       api_version=self.api_version,
                                       convert=lambda o: (key_of(o), self._packer.pack(o)))
        fresh: dict[tuple[str, str], bytes] = dict(items)
        del items
        with self._lock:
            old = self._cache
            self._cache = fresh
            self.resource_version = rv
            self.lists += 1
        if self._handlers:
            for key, raw in fresh.items():
                before = old.get(key)
                if before is None:
                    self._emit(0, self._packer.unpack(raw))
                elif before != raw:       # the same resourceVersion is the same encoding
                    self._emit(1, self._packer.unpack(before), self._packer.unpack(raw))
            for key, raw in old.items():
                if key not in fresh:
                    self._emit(2, self._packer.unpack(raw))
        self._synced.set()

    def _events(self) -> Iterator[tuple[str, dict]]:
        if self._next_version is not None:
            self.resource_version, self._next_version = self._next_version, None
        self._stream = self.store.open_watch(self.kind, self.namespace, since=self.resource_version,
                                             server_timeout=self.watch_timeout, label_selector=self.label_selector,
                                             api_version=self.api_version)
        if self._stop.is_set():
            return iter(())
        return iter(self._stream)

    def _watch(self) -> None:
        for etype, obj in self._events():
            if self._stop.is_set():
                return
            rv = meta_of(obj).get("resourceVersion")
            if etype == "BOOKMARK":
                if rv:
                    self.resource_version = rv
                continue
            key = key_of(obj)
            obj.setdefault("apiVersion", self.res.api_version)
            obj.setdefault("kind", self.kind)
            raw = self._packer.pack(obj)
            with self._lock:
                before = self._cache.get(key)
                if etype == "DELETED":
                    self._cache.pop(key, None)
                else:
                    self._cache[key] = raw
                if rv:
                    self.resource_version = rv
            if not self._handlers:
                continue
            if etype == "DELETED":
                self._emit(2, obj if before is None else self._packer.unpack(before))
            elif before is None:
                self._emit(0, obj)
            else:
                self._emit(1, self._packer.unpack(before), obj)

    def _emit(self, which: int, *args: Any) -> None:
        for handlers in list(self._handlers):
            fn = handlers[which]
            if fn is None:
                continue
            try:
                fn(*args)
            except Exception:            # a handler's bug must not stop the cache
                log.exception("informer %s: handler failed", self.kind)


class InformerSet:
    """Informers of several kinds on one store, started and waited for together."""

    def __init__(self, store: KubeStore, kinds: list[str] | tuple[str, ...], **kw: Any):
        self.store = store
        self.informers: dict[str, Informer] = {}
        for kind in kinds:
            # a kind of another project (CDI, snapshots, seed 002's flavors) may not be served
            optional = kind in FLAVOR_INFORMER_KINDS or kind in STORAGE_KINDS
            inf = Informer(store, kind, **{"optional": optional, **kw})
            self.informers[inf.key] = inf

    def __getitem__(self, kind: str) -> Informer:
        return self.informers[kind]

    def __contains__(self, kind: str) -> bool:
        return kind in self.informers

    def start(self) -> InformerSet:
        for inf in self.informers.values():
            inf.start()
        return self

    def stop(self) -> None:
        for inf in self.informers.values():
            inf._stop.set()
        for inf in self.informers.values():
            inf.stop()

    @property
    def has_synced(self) -> bool:
        return all(inf.has_synced for inf in self.informers.values())

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """True once every informer has listed its kind; False if `timeout` passes first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for inf in self.informers.values():
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not inf.wait_for_sync(left):
                return False
        return True

    def failures(self) -> list[str]:
        """Why informers that have not synced are failing (for a readiness answer or an error line)."""
        return [f"{k}: {inf.last_error}" for k, inf in self.informers.items() if not inf.has_synced and inf.last_error]


__all__ = ["Informer", "InformerSet", "Unreachable"]
