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
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web

from instancetype.api import kinds
from instancetype.errors import StoreError

from .review import BadReview, Denial, answer, decode

MAX_BODY = 8 << 20            # an AdmissionReview carries the object and the old object (etcd: 1.5 MiB each)
RELOAD_INTERVAL = 1.0

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

    def objects(self) -> Any: ...      # an `engine.objects.ObjectSource`, or the objects themselves

    def kubevirt_config(self) -> dict | None: ...

    def sync_failures(self) -> list[str]: ...


class WebhookServer:
    """The aiohttp application over an `AdmissionCache`."""

    def __init__(self, cached: AdmissionCache, tls: ReloadingTLS, *, host: str = "127.0.0.1", port: int = 8443,
                 reload_interval: float = RELOAD_INTERVAL, log_line: Callable[[str], None] | None = None,
                 subresources: Any = None):
        self.cached = cached
        self.tls = tls
        self.host, self.port = host, port
        self.reload_interval = reload_interval
        self.log_line = log_line or (lambda line: print(line, file=sys.stderr, flush=True))
        self.app = web.Application(client_max_size=MAX_BODY)
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

    async def _review(self, request: web.Request) -> web.Response:
        if not self.cached.has_synced:
            # Fail closed: an answer from half-filled caches could admit what a lookup would refuse.
            return web.Response(status=503, text="informer caches not synced yet\n")
        body = await request.read()
        try:
            review = decode(body)
        except BadReview as e:
            return web.Response(status=400, text=f"{e}\n")
        out, denial = answer(request.path, review, objects=self.cached.objects(),
                             config=self.cached.kubevirt_config())
        self.served += 1
        if denial is not None:
            self.log_line(denial_line(denial))
        return web.json_response(out, dumps=_dumps)

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def _readyz(self, request: web.Request) -> web.Response:
        if self.cached.has_synced:
            return web.Response(text="ok\n")
        missing = "; ".join(self.cached.sync_failures())
        return web.Response(status=503, text=f"informer caches not synced{': ' + missing if missing else ''}\n")

    # --- life ----------------------------------------------------------------------------------

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self.tls.context, backlog=512)
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
        if self.subresources is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.subresources.close)


def _dumps(obj: Any) -> str:
    import msgspec

    return msgspec.json.encode(obj).decode()


def run(cached: Any, tls: ReloadingTLS, *, host: str, port: int, ready: Callable[[WebhookServer], None] | None = None,
        stop_event: asyncio.Event | None = None, subresources: Any = None) -> None:
    """Serve until SIGTERM or SIGINT (or `stop_event`), then stop cleanly."""

    async def main() -> None:
        server = WebhookServer(cached, tls, host=host, port=port, subresources=subresources)
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
