"""`instancetype serve`: KubeVirt's admission webhooks (virt-api's) over HTTPS, for a cluster.

One POST path per webhook `install` registers (`api.kinds.WEBHOOKS`, virt-api's paths), each
answering AdmissionReview v1 through `webhook.review` with lookups from informer caches
(`store.kube.CachedStore`): no request to the API server per admission, and a namespaced
object is looked up only in the VM's own namespace.

* TLS only: the socket speaks nothing else. The certificate and key files are re-read when
  they change (checked every `reload_interval` seconds); a pair that cannot be loaded (a rotation
  half-written) keeps the previous one and is tried again.
* `GET /healthz`: the process answers. `GET /readyz`: 200 once every informer has listed its
  kind, else 503 naming what is missing (the API server calls the webhooks only through a
  Service/URL whose readiness the deployment checks).
* With `subresources` (a `webhook.virtapi.app.VirtAPI`), the same server answers the aggregated
  API `subresources.kubevirt.io/v1` (virtctl start, stop, restart, expand) as virt-api does.
* One JSON log line (stderr) per refused request: time, webhook, uid, operation, kind,
  namespace, name, code, reason, message.
* A small, shallow review (`answers_inline`: the API server's reviews of ordinary objects, a few
  KiB) that finds `serve` quiet (no worker busy, at most `INLINE_MAX_CONNECTIONS` connections
  open) is answered on the event loop itself, as soon as its body is in; any other is decoded
  and answered by an admission worker (`webhook.workers`), so that a huge one never holds up the
  others. Handing a review to a worker thread and back costs two thread wake-ups and a GIL
  hand-off each way, more than answering the typical VM takes (~0.1 ms), and on a loaded
  machine each wake-up waits for a core: the API server's calls, one at a time on its
  keep-alive connection, are answered faster inline. Over many connections the workers win
  instead: the event loop's TLS and socket work (which release the GIL) then overlap the
  admissions (measured, 16 concurrent clients: 570 reviews/s through the workers, 370 inline).
  A body that is not an AdmissionReview is a 400 with one line, a review past the bounds
  (`review.MAX_REVIEW_DEPTH`, `review.MAX_VALUES`) a 400 or a refusal, never a 500 page.
* Stalled connections are closed (`Timeouts`): a TLS handshake within 10 s, a request's headers
  within the keep-alive limit (30 s from the connection's start or its previous response, which
  also closes an idle keep-alive connection), a request's body within 10 s of its headers.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import ssl
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web

from instancetype.api import kinds
from instancetype.errors import StoreError

from . import review as reviews
from .review import BadReview, Denial
from .workers import AdmissionPool

MAX_BODY = 8 << 20            # an AdmissionReview carries the object and the old object (etcd: 1.5 MiB each)
RELOAD_INTERVAL = 1.0
# A review answered on the event loop: at most this many bytes (about 8,000 JSON values, a few
# milliseconds of admission at the worst), and at most this many `{` and `[` in all, which bounds
# its depth: the engine's recursive walks then need well under 1 MiB of the loop thread's 8 MiB
# stack (6 MiB for 10,000 levels, measured; see `webhook.workers`).
INLINE_MAX_BODY = 16 << 10
INLINE_MAX_OPENERS = 1000
# ... and only while at most this many connections are open: an API server calls its webhooks one
# at a time on one keep-alive connection, so no other request can be waiting on the event loop
# meanwhile (HTTP/1.1: a connection's requests are answered in turn); over more connections
# requests can overlap, and the workers overlap them better.
INLINE_MAX_CONNECTIONS = 1


@dataclass(frozen=True)
class Timeouts:
    """How long `serve` waits on a client, in seconds. The API server calls a webhook with a
    timeout of 10 s by default (30 s at most) and keeps idle connections for 90 s; a client slower
    than these is stalled, and its connection is closed."""

    handshake: float = 10.0     # the TLS handshake, from the TCP connection
    keepalive: float = 30.0     # a request's headers, from the connection's start or its previous response
    body: float = 10.0          # a request's body, from its headers

log = logging.getLogger("instancetype.serve")


class CertificateError(StoreError):
    """The serving certificate or key cannot be loaded (one line, naming the file)."""


def _file_state(*paths: Path) -> tuple[tuple[int, int, int] | None, ...]:
    out: list[tuple[int, int, int] | None] = []
    for p in paths:
        try:
            st = p.stat()
            out.append((st.st_ino, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)


class ReloadingTLS:
    """An SSLContext whose certificate chain is loaded again when the files change (new
    handshakes use the new pair; open connections keep theirs)."""

    def __init__(self, cert: str | os.PathLike, key: str | os.PathLike):
        self.cert, self.key = Path(cert), Path(key)
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.minimum_version = ssl.TLSVersion.TLSv1_2
        self._state = _file_state(self.cert, self.key)
        self._load()
        self.reloads = 0

    def _load(self) -> None:
        try:
            # The pair is proven on a scratch context first: a failed load into the live context
            # could leave it with the new certificate and the old key.
            ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(self.cert, self.key)
            self.context.load_cert_chain(self.cert, self.key)
        except FileNotFoundError as e:
            raise CertificateError(f"{e.filename}: no such file") from None
        except (ssl.SSLError, OSError) as e:
            raise CertificateError(f"cannot load the TLS certificate {self.cert} with the key {self.key}: "
                                   f"{getattr(e, 'reason', None) or e}") from None

    def check(self) -> bool:
        """Reload if the files changed; True when a new pair is in use."""
        state = _file_state(self.cert, self.key)
        if state == self._state:
            return False
        try:
            self._load()
        except CertificateError as e:
            log.warning("%s (keeping the previous certificate)", e)
            return False
        self._state = state
        self.reloads += 1
        log.info("reloaded the TLS certificate %s", self.cert)
        return True


def answers_inline(body: bytes) -> bool:
    """Whether a review is answered on the event loop (small and shallow: `INLINE_MAX_BODY`,
    `INLINE_MAX_OPENERS`; a bracket inside a string counts too, which only errs towards a
    worker)."""
    return len(body) <= INLINE_MAX_BODY and body.count(b"{") + body.count(b"[") <= INLINE_MAX_OPENERS


def denial_line(d: Denial) -> str:
    return json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "level": "info",
                       "msg": "admission refused", "webhook": d.webhook, "uid": d.uid, "operation": d.operation,
                       "kind": d.kind, "namespace": d.namespace, "name": d.name, "code": d.code,
                       "reason": d.reason, "message": d.message}, separators=(",", ":"))


class AdmissionCache(Protocol):
    """What the webhooks read (a `store.kube.CachedStore`; tests give a list of objects): the
    objects a review looks up, the KubeVirt configuration, whether the caches have synced and, if
    not, why."""

    @property
    def has_synced(self) -> bool: ...

    def objects(self) -> Any: ...      # an `engine.object_source.ObjectSource`, or the objects themselves

    def kubevirt_config(self) -> dict | None: ...

    def sync_failures(self) -> list[str]: ...


class WebhookServer:
    """The aiohttp application over an `AdmissionCache`."""

    def __init__(self, cached: AdmissionCache, tls: ReloadingTLS, *, host: str = "127.0.0.1", port: int = 8443,
                 reload_interval: float = RELOAD_INTERVAL, log_line: Callable[[str], None] | None = None,
                 subresources: Any = None, timeouts: Timeouts | None = None, workers: int | None = None):
        self.cached = cached
        self.tls = tls
        self.host, self.port = host, port
        self.reload_interval = reload_interval
        self.log_line = log_line or (lambda line: print(line, file=sys.stderr, flush=True))
        self.timeouts = timeouts or Timeouts()
        self.workers = workers
        self.pool: AdmissionPool | None = None
        self.app = web.Application(client_max_size=MAX_BODY, middlewares=[self._bounded_body])
        for hook in kinds.WEBHOOKS:
            self.app.router.add_post(hook.path, self._review)
        self.app.router.add_get("/healthz", self._healthz)
        self.app.router.add_get("/readyz", self._readyz)
        # virt-api's other part: the aggregated API subresources.kubevirt.io (webhook/virtapi)
        self.subresources = subresources
        if subresources is not None:
            subresources.register(self.app, root_routes=False)
        self._runner: web.AppRunner | None = None
        self._reloader: asyncio.Task | None = None
        self.served = 0

    # --- handlers ------------------------------------------------------------------------------

    @web.middleware
    async def _bounded_body(self, request: web.Request, handler: Callable) -> web.StreamResponse:
        """Every body is read within `timeouts.body` of its headers (the handlers then read it
        from memory); a client that stalls gets a 408 and its connection is closed."""
        if request.body_exists:
            try:
                async with asyncio.timeout(self.timeouts.body):     # no task of its own, as wait_for makes
                    await request.read()
            except TimeoutError:
                response = web.Response(status=408, text=f"the request body did not arrive within "
                                                         f"{self.timeouts.body:g} s\n")
                response.force_close()
                return response
        return await handler(request)

    async def _review(self, request: web.Request) -> web.Response:
        if not self.cached.has_synced:
            # Fail closed: an answer from half-filled caches could admit what a lookup would refuse.
            return web.Response(status=503, text="informer caches not synced yet\n")
        body = await request.read()
        assert self.pool is not None and self._runner is not None and self._runner.server is not None
        if self.pool.busy == 0 and len(self._runner.server.connections) <= INLINE_MAX_CONNECTIONS \
                and answers_inline(body):
            status, text = self._answer(request.path, body)
        else:
            status, text = await asyncio.wrap_future(self.pool.submit(self._answer, request.path, body))
        if status != 200:
            return web.Response(status=status, text=text)
        return web.Response(text=text, content_type="application/json")

    def _answer(self, path: str, body: bytes) -> tuple[int, str]:
        """One review, on an admission worker: (HTTP status, body)."""
        try:
            request = reviews.decode(body)
        except BadReview as e:
            return 400, f"{e}\n"
        try:
            out, denial = reviews.answer(path, request, objects=self.cached.objects(),
                                         config=self.cached.kubevirt_config())
            text = _dumps(out)
        except Exception as e:  # noqa: BLE001 - not the request's fault (answer refuses bad input): one line
            log.error("internal error answering %s (uid %s): %s: %s", path, request.get("uid"), type(e).__name__, e)
            return 500, f"internal error: {type(e).__name__}\n"
        self.served += 1
        if denial is not None:
            self.log_line(denial_line(denial))
        return 200, text

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def _readyz(self, request: web.Request) -> web.Response:
        if self.cached.has_synced:
            return web.Response(text="ok\n")
        missing = "; ".join(self.cached.sync_failures())
        return web.Response(status=503, text=f"informer caches not synced{': ' + missing if missing else ''}\n")

    # --- life ----------------------------------------------------------------------------------

    async def start(self) -> None:
        self.pool = AdmissionPool(self.workers)
        # keepalive_timeout: aiohttp closes a connection that has no complete request headers this
        # long after its start or its previous response (idle, or sending headers slowly).
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False,
                                     keepalive_timeout=self.timeouts.keepalive, lingering_time=1.0)
        await self._runner.setup()
        site = _Site(self._runner, self.host, self.port, ssl_context=self.tls.context, backlog=512,
                     handshake_timeout=self.timeouts.handshake)
        await site.start()
        if self.port == 0:      # an ephemeral port: say which one
            addresses = self._runner.addresses
            self.port = addresses[0][1] if addresses else 0
        self._reloader = asyncio.create_task(self._reload_loop())

    async def _reload_loop(self) -> None:
        while True:
            await asyncio.sleep(self.reload_interval)
            self.tls.check()

    async def stop(self) -> None:
        if self._reloader is not None:
            self._reloader.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
        if self.pool is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.pool.close)
        if self.subresources is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.subresources.close)


class _Site(web.TCPSite):
    """aiohttp's TCPSite with a TLS handshake timeout (asyncio's default is 60 s)."""

    def __init__(self, *args: Any, handshake_timeout: float, **kw: Any):
        super().__init__(*args, **kw)
        self._handshake_timeout = handshake_timeout

    async def start(self) -> None:
        await web.BaseSite.start(self)
        loop = asyncio.get_running_loop()
        server = self._runner.server
        assert server is not None
        self._server = await loop.create_server(
            server, self._host, self._port, ssl=self._ssl_context, backlog=self._backlog,
            reuse_address=self._reuse_address, reuse_port=self._reuse_port,
            ssl_handshake_timeout=self._handshake_timeout if self._ssl_context else None)
        self._bound_port = self._server.sockets[0].getsockname()[1] if self._server.sockets else self._port


def _dumps(obj: Any) -> str:
    import msgspec

    return msgspec.json.encode(obj).decode()


def run(cached: Any, tls: ReloadingTLS, *, host: str, port: int, ready: Callable[[WebhookServer], None] | None = None,
        stop_event: asyncio.Event | None = None, subresources: Any = None, timeouts: Timeouts | None = None) -> None:
    """Serve until SIGTERM or SIGINT (or `stop_event`), then stop cleanly."""

    async def main() -> None:
        server = WebhookServer(cached, tls, host=host, port=port, subresources=subresources, timeouts=timeouts)
        await server.start()
        done = stop_event or asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, done.set)
            except (NotImplementedError, RuntimeError):
                pass
        if ready is not None:
            ready(server)
        try:
            await done.wait()
        finally:
            await server.stop()

    asyncio.run(main())
