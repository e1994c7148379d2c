"""Where `serve` answers a review: on the event loop when it is small and `serve` is quiet (one
caller's keep-alive connection, as an API server calls), else on an admission worker; the answer
is the same either way."""
from __future__ import annotations

import json
import socket
import ssl
from contextlib import ExitStack

import pytest

from instancetype.webhook import server as server_module
from tests.builders import cirros_vm
from tests.kube.certs import make_webhook_certs
from tests.webhook.test_serve_https import Cache, _objects, https, review, serving

PATH = "/virtualmachines-validate"


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_webhook_certs(tmp_path_factory.mktemp("certs"), ("127.0.0.1",))


def _counting(server, monkeypatch) -> list[str]:
    """The paths of the reviews handed to the workers."""
    handed: list[str] = []
    submit = server.pool.submit

    def counted(fn, *args):
        handed.append(args[0])
        return submit(fn, *args)

    monkeypatch.setattr(server.pool, "submit", counted)
    return handed


def _body(name: str = "vm1") -> bytes:
    return json.dumps(review(cirros_vm(name, instancetype="big", preference="cirros"))).encode()


def test_one_callers_small_review_is_answered_on_the_event_loop(certs, monkeypatch):
    with serving(Cache(_objects()), certs.cert, certs.key) as server:
        handed = _counting(server, monkeypatch)
        status, text = https(server, certs.ca, "POST", PATH, _body())
        assert status == 200 and json.loads(text)["response"]["allowed"] is True
        assert handed == []


def test_a_large_review_goes_to_a_worker_with_the_same_answer(certs, monkeypatch):
    padded = review(cirros_vm("vm1", instancetype="big", preference="cirros"))
    small = _body()
    padded["request"]["object"]["metadata"]["annotations"] = {"x": "y" * server_module.INLINE_MAX_BODY}
    with serving(Cache(_objects()), certs.cert, certs.key) as server:
        handed = _counting(server, monkeypatch)
        inline = json.loads(https(server, certs.ca, "POST", PATH, small)[1])["response"]
        by_worker = json.loads(https(server, certs.ca, "POST", PATH, json.dumps(padded).encode())[1])["response"]
        assert handed == [PATH]
        assert {k: v for k, v in inline.items() if k != "uid"} == {k: v for k, v in by_worker.items() if k != "uid"}


def test_with_many_connections_open_reviews_go_to_the_workers(certs, monkeypatch):
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    with serving(Cache(_objects()), certs.cert, certs.key) as server, ExitStack() as open_connections:
        handed = _counting(server, monkeypatch)
        for _ in range(server_module.INLINE_MAX_CONNECTIONS):      # other clients, connected and idle
            sock = open_connections.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=10))
            open_connections.enter_context(ctx.wrap_socket(sock, server_hostname="127.0.0.1"))
        status, text = https(server, certs.ca, "POST", PATH, _body())
        assert status == 200 and json.loads(text)["response"]["allowed"] is True
        assert handed == [PATH]
