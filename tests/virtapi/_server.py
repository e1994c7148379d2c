"""A real aiohttp server on 127.0.0.1 in a thread of the test process, and a plain HTTP(S) client."""
from __future__ import annotations

import asyncio
import http.client
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aiohttp import web


@contextmanager
def serving(app: web.Application, ssl_context: ssl.SSLContext | None = None) -> Iterator[int]:
    """Run `app` on 127.0.0.1 (a free port) until the block ends; yields the port."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    state: dict[str, Any] = {}

    async def start():
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ssl_context)
        await site.start()
        state["runner"] = runner
        state["port"] = runner.addresses[0][1]

    def run():
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(start())
        except BaseException as e:       # reported to the test below
            state["error"] = e
        ready.set()
        if "error" not in state:
            loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(30), "server did not start within 30s"
    if "error" in state:
        raise state["error"]
    try:
        yield state["port"]
    finally:
        asyncio.run_coroutine_threadsafe(state["runner"].cleanup(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()


def request(port: int, method: str, path: str, body: Any = None, *, headers: dict | None = None,
            tls: ssl.SSLContext | None = None) -> tuple[int, Any]:
    """One request; returns (status, JSON body or text or None)."""
    conn = (http.client.HTTPSConnection("127.0.0.1", port, context=tls, timeout=30) if tls is not None
            else http.client.HTTPConnection("127.0.0.1", port, timeout=30))
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    try:
        conn.request(method, path, body=data, headers=headers or {})
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    if not raw:
        return resp.status, None
    try:
        return resp.status, json.loads(raw)
    except ValueError:
        return resp.status, raw.decode()
