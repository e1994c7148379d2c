"""`serve` under hostile input, in-process over real TLS (issue 30): objects as deep as the API
server accepts, malformed AdmissionReviews on every path, stalled connections, one huge review
among small ones, the bound on one review's work. No timing asserts: ordering and completion."""
from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from instancetype.api import kinds
from instancetype.webhook import jsonpatch, review
from instancetype.webhook.server import Timeouts
from tests.builders import cirros_vm, instancetype_obj
from tests.kube.certs import make_webhook_certs
from tests.webhook.test_serve_https import Cache, https, serving

PATHS = [hook.path for hook in kinds.WEBHOOKS]
NS = "default"


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_webhook_certs(tmp_path_factory.mktemp("certs"), ("127.0.0.1",))


def _vm(name: str) -> dict:
    vm = cirros_vm(name)
    vm["metadata"]["namespace"] = NS
    return vm


def _nest(depth: int) -> str:
    return '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)


def deep_vm_review(object_depth: int, operation: str = "CREATE") -> tuple[bytes, int]:
    """A VM review whose object nests `object_depth` levels (an unknown field under
    `spec.template.metadata`, which the VM CRD keeps), as JSON text (Python's encoder recurses)."""
    vm = _vm("deep")
    vm["spec"]["template"]["metadata"] = {"x": "@@"}
    # object -> spec -> template -> metadata -> x: the nested value starts at level 5
    text = json.dumps(vm).replace('"@@"', _nest(object_depth - 4))
    rv = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": str(uuid.uuid4()), "operation": operation, "namespace": NS,
        "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
        "resource": {"group": "kubevirt.io", "version": "v1", "resource": "virtualmachines"},
        "object": "@@"}}
    return json.dumps(rv).replace('"@@"', text).encode(), object_depth


def post(server, ca, path: str, body: bytes):
    return https(server, ca, "POST", path, body)


# --- item 1: depth ---------------------------------------------------------------------------------

def test_measure_counts_depth_as_gos_scanner_does():
    assert review.measure(1) == (0, 1)
    assert review.measure({}) == (1, 1)
    assert review.measure({"a": [1, {"b": []}]}) == (4, 5)
    text, depth = deep_vm_review(200)
    assert review.measure(json.loads(text)["request"]["object"])[0] == 200


def test_a_vm_as_deep_as_the_api_server_accepts_is_answered_as_a_shallow_one(certs):
    ca, cert, key = certs.ca, certs.cert, certs.key
    shallow_body, _ = deep_vm_review(10)
    deep_body, _ = deep_vm_review(review.MAX_OBJECT_DEPTH)
    with serving(Cache([]), cert, key) as server:
        for path in ("/virtualmachines-mutate", "/virtualmachines-validate"):
            s_status, s_out = post(server, ca, path, shallow_body)
            d_status, d_out = post(server, ca, path, deep_body)
            assert s_status == d_status == 200, d_out[:300]
            shallow, deep = json.loads(s_out)["response"], json.loads(d_out)["response"]
            assert deep["allowed"] is True
            assert {k: v for k, v in deep.items() if k != "uid"} == {k: v for k, v in shallow.items() if k != "uid"}


def test_deeper_than_the_api_server_accepts_is_a_400_with_one_line(certs):
    ca, cert, key = certs.ca, certs.cert, certs.key
    with serving(Cache([]), cert, key) as server:
        for depth in (review.MAX_OBJECT_DEPTH + 1, 30_000):
            body, _ = deep_vm_review(depth)
            status, text = post(server, ca, "/virtualmachines-mutate", body)
            assert status == 400
            assert text.decode().count("\n") == 1 and "nested deeper than" in text.decode()
        # a body that is only brackets, as deep as the body limit allows
        status, text = post(server, ca, "/virtualmachines-validate", b"[" * 4_000_000 + b"]" * 4_000_000)
        assert status == 400 and b"nested deeper than" in text


def test_jsonpatch_diff_is_iterative_and_linear():
    depth = 50_000
    old: dict = {}
    new: dict = {}
    o, n = old, new
    for _ in range(depth):
        o["a"], n["a"] = {}, {}
        o, n = o["a"], n["a"]
    n["b"] = 1
    ops = jsonpatch.diff(old, new)
    assert len(ops) == 1 and ops[0]["op"] == "add" and ops[0]["path"] == "/a" * depth + "/b"
    assert jsonpatch.diff({"x": [1, {"y": 2}]}, {"x": [1, {"y": 2.5}]}) == \
        [{"op": "replace", "path": "/x", "value": [1, {"y": 2.5}]}]
    assert jsonpatch.diff({"x": 1}, {"x": 1.0}) == [{"op": "replace", "path": "/x", "value": 1.0}]


# --- item 2: malformed reviews ---------------------------------------------------------------------

def _review(**request) -> dict:
    base = {"uid": "u-1", "operation": "CREATE", "namespace": NS,
            "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
            "object": _vm("vm")}
    base.update(request)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": base}


def _enc(v) -> bytes:
    return json.dumps(v).encode()


MALFORMED: list[tuple[str, bytes]] = [
    ("empty", b""),
    ("not JSON", b"hello"),
    ("truncated", _enc(_review())[:-3]),
    ("invalid UTF-8 in a string", _enc(_review()).replace(b'"u-1"', b'"u-\xff"')),
    ("invalid UTF-8 in a key", _enc(_review()).replace(b'"namespace"', b'"name\xffspace"')),
    ("a lone surrogate", _enc(_review()).replace(b'"u-1"', b'"\\ud800"')),
    ("null", b"null"),
    ("a list", b"[]"),
    ("a string", b'"AdmissionReview"'),
    ("no kind", _enc({"apiVersion": "admission.k8s.io/v1", "request": {"uid": "x"}})),
    ("v1beta1", _enc({**_review(), "apiVersion": "admission.k8s.io/v1beta1"})),
    ("apiVersion a list", _enc({**_review(), "apiVersion": ["x"]})),
    ("no request", _enc({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"})),
    ("request a list", _enc({**_review(), "request": []})),
    ("uid a number", _enc(_review(uid=7))),
    ("uid empty", _enc(_review(uid=""))),
    ("request.kind a string", _enc(_review(kind="VirtualMachine"))),
    ("request.kind.kind a list", _enc(_review(kind={"kind": ["VirtualMachine"]}))),
    ("operation a number", _enc(_review(operation=1))),
    ("operation a list", _enc(_review(operation=["CREATE"]))),
    ("namespace an object", _enc(_review(namespace={"a": 1}))),
    ("object a string", _enc(_review(object="vm"))),
    ("object a list", _enc(_review(object=[]))),
    ("oldObject a number", _enc(_review(operation="UPDATE", oldObject=3))),
    ("userInfo a string", _enc(_review(userInfo="admin"))),
    ("dryRun a string", _enc(_review(dryRun="yes"))),
    ("nested 1,000 levels", b"[" * 1000 + b"]" * 1000),
    ("nested 20,000 levels", b'{"a":' * 20_000 + b"1" + b"}" * 20_000),
    ("trailing garbage", _enc(_review()) + b"}"),
    ("NaN", _enc(_review()).replace(b'"u-1"', b"NaN")),
]

# Well-formed reviews with strange objects: answered (allowed or refused in the review).
STRANGE_OBJECTS: list[tuple[str, dict]] = [
    ("object.kind a list", _review(kind=None, object={**_vm("vm"), "kind": ["x"]})),
    ("object.metadata a list", _review(object={**_vm("vm"), "metadata": []})),
    ("object.spec a string", _review(object={**_vm("vm"), "spec": "x"})),
    ("object empty", _review(object={})),
    ("a type of another kind", _review(object=instancetype_obj("it", cpu=1, memory="1Gi", namespace=NS))),
    ("an instancetype with a list spec", _review(
        kind={"group": kinds.GROUP, "version": "v1beta1", "kind": "VirtualMachineInstancetype"},
        object={**instancetype_obj("it", cpu=1, memory="1Gi", namespace=NS), "spec": []})),
    ("a VMI with a list spec", _review(
        kind={"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachineInstance"},
        object={"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                "metadata": {"name": "x"}, "spec": []})),
]


@pytest.fixture(scope="module")
def served(certs):
    ca, cert, key = certs.ca, certs.cert, certs.key
    with serving(Cache([]), cert, key) as server:
        yield server, ca


@pytest.mark.parametrize("name,body", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_review_is_a_400_with_one_line_on_every_path(served, name, body):
    server, ca = served
    for path in PATHS:
        status, text = post(server, ca, path, body)
        assert status == 400, (path, status, text[:200])
        assert text.decode().count("\n") == 1 and len(text) < 400, text


@pytest.mark.parametrize("name,body", STRANGE_OBJECTS, ids=[m[0] for m in STRANGE_OBJECTS])
def test_a_well_formed_review_of_a_strange_object_is_answered_on_every_path(served, name, body):
    server, ca = served
    for path in PATHS:
        status, text = post(server, ca, path, _enc(body))
        assert status == 200, (path, text[:300])
        response = json.loads(text)["response"]
        assert response["uid"] == "u-1"
        if not response["allowed"]:
            assert response["status"]["code"] in (400, 422) and response["status"]["message"]
            assert "bug in instancetype" not in response["status"]["message"]


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                     max_leaves=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(PATHS), field=st.sampled_from(
    ["kind", "operation", "namespace", "object", "oldObject", "uid", "dryRun", "userInfo", "name"]),
       value=_json, raw=st.binary(max_size=40))
def test_any_request_field_of_any_type_never_makes_a_500(served, path, field, value, raw):
    server, ca = served
    body = _enc(_review(**{field: value}))
    for candidate in (body, raw, body[: len(body) // 2] + raw):
        status, text = post(server, ca, path, candidate)
        assert status in (200, 400), (status, text[:300])
        if status == 200:
            response = json.loads(text)["response"]
            assert "bug in instancetype" not in json.dumps(response)


def test_a_review_past_the_bound_on_its_work_is_refused_in_the_review(served):
    server, ca = served
    vm = _vm("big")
    vm["spec"]["template"]["metadata"] = {"x": [0] * (review.MAX_VALUES + 1)}
    status, text = post(server, ca, "/virtualmachines-mutate", _enc(_review(object=vm)))
    assert status == 200
    response = json.loads(text)["response"]
    assert response["allowed"] is False and "more than this webhook admits" in response["status"]["message"]


# --- item 4: stalled connections ---------------------------------------------------------------------

def _closed_by_server(sock, limit: float = 30.0) -> bool:
    """True once the server closes `sock` (bounded by `limit`, far above the test's timeouts)."""
    sock.settimeout(limit)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, ssl.SSLError, ssl.SSLEOFError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def _tls(server, ca):
    ctx = ssl.create_default_context(cafile=str(ca))
    raw = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    return ctx.wrap_socket(raw, server_hostname="127.0.0.1")


def test_stalled_connections_are_closed_while_a_normal_review_is_answered(certs):
    ca, cert, key = certs.ca, certs.cert, certs.key
    timeouts = Timeouts(handshake=0.5, keepalive=0.5, body=0.5)
    with serving(Cache([]), cert, key, timeouts=timeouts) as server:
        no_handshake = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        idle = _tls(server, ca)
        half_headers = _tls(server, ca)
        half_headers.sendall(b"POST /virtualmachines-validate HTTP/1.1\r\nHost: x\r\nContent-Ty")
        half_body = _tls(server, ca)
        body, _ = deep_vm_review(5)
        half_body.sendall(b"POST /virtualmachines-validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          b"Content-Length: %d\r\n\r\n" % len(body) + body[:50])
        # meanwhile a normal review is answered
        status, text = post(server, ca, "/virtualmachines-validate", body)
        assert status == 200 and json.loads(text)["response"]["allowed"] is True
        for sock in (no_handshake, idle, half_headers, half_body):
            assert _closed_by_server(sock)
            sock.close()
        status, _ = post(server, ca, "/virtualmachines-validate", body)
        assert status == 200


def test_a_stalled_body_gets_a_408(certs):
    ca, cert, key = certs.ca, certs.cert, certs.key
    with serving(Cache([]), cert, key, timeouts=Timeouts(body=0.3)) as server:
        sock = _tls(server, ca)
        sock.sendall(b"POST /virtualmachines-validate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        sock.settimeout(30)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 408")
        sock.close()


# --- item 5: admission off the event loop --------------------------------------------------------------

def test_small_reviews_are_answered_while_a_huge_one_is_in_flight(certs, monkeypatch):
    """The huge review holds a worker until the small ones are all answered (it waits on them):
    on the event loop, or with one worker, the small ones could never be answered first."""
    ca, cert, key = certs.ca, certs.cert, certs.key
    from instancetype.webhook import server as server_module

    release = threading.Event()
    entered = threading.Event()
    real_answer = review.answer

    def answer(path, request, **kw):
        if request["uid"] == "huge":
            entered.set()
            assert release.wait(60), "the small reviews were not answered while the huge one ran"
        return real_answer(path, request, **kw)

    monkeypatch.setattr(server_module.reviews, "answer", answer)
    huge_vm = _vm("huge")
    devices = huge_vm["spec"]["template"]["spec"]["domain"]["devices"]
    devices["disks"] = [{"name": f"d{i}", "disk": {"bus": "virtio"}} for i in range(20_000)]
    huge_vm["spec"]["template"]["spec"]["volumes"] = [
        {"name": f"d{i}", "containerDisk": {"image": "quay.io/containerdisks/fedora:40"}} for i in range(20_000)]
    with serving(Cache([]), cert, key) as server:
        assert server.pool.size >= 2
        results = {}
        big = threading.Thread(target=lambda: results.setdefault(
            "huge", post(server, ca, "/virtualmachines-validate", _enc(_review(uid="huge", object=huge_vm))))
        )
        big.start()
        assert entered.wait(60)
        small_body, _ = deep_vm_review(5)
        for _ in range(5):
            status, text = post(server, ca, "/virtualmachines-mutate", small_body)
            assert status == 200 and json.loads(text)["response"]["allowed"] is True
        assert "huge" not in results            # still in flight: the small ones went first
        release.set()
        big.join(120)
        status, text = results["huge"]
        assert status == 200 and json.loads(text)["response"]["uid"] == "huge"


def test_the_patch_of_a_deep_vm_applies(certs):
    ca, cert, key = certs.ca, certs.cert, certs.key
    body, _ = deep_vm_review(3000)
    with serving(Cache([]), cert, key) as server:
        status, text = post(server, ca, "/virtualmachines-mutate", body)
    response = json.loads(text)["response"]
    ops = json.loads(base64.b64decode(response["patch"]))
    assert all(not op["path"].startswith("/spec/template/metadata/x") for op in ops)
