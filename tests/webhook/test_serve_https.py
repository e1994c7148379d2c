"""`serve`'s HTTPS server in-process, no API server: real TLS (a test CA made with openssl), real
AdmissionReviews of the tests' VMs and instancetypes, answered as `lifecycle.admission` answers
the embedded store (its objects looked up in a SQLite store in one, a cache in the other)."""
from __future__ import annotations

import asyncio
import base64
import http.client
import json
import shutil
import socket
import ssl
import threading
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from instancetype.api import kinds
from instancetype.lifecycle.admission import Refused, admit
from instancetype.store.sqlite import SqliteStore
from instancetype.webhook import jsonpatch
from instancetype.webhook.server import CertificateError, ReloadingTLS, WebhookServer
from tests.builders import cirros_vm, instancetype_obj, preference_obj, vm
from tests.kube.certs import make_webhook_certs
from tests.waits import eventually

NS = "default"


class Cache:
    """What `serve` reads from its informers: the objects that exist and the KubeVirt settings."""

    def __init__(self, objects: list[dict], config: dict | None = None, synced: bool = True):
        self._objects, self._config, self.has_synced = objects, config, synced

    def objects(self):
        return self._objects

    def kubevirt_config(self):
        return self._config

    def sync_failures(self):
        return []


@contextmanager
def serving(cache: Cache, cert: Path, key: Path, *, reload_interval: float = 0.05, **kw):
    """A WebhookServer on a free 127.0.0.1 port, its event loop in a thread; yields the server."""
    loop = asyncio.new_event_loop()
    server = WebhookServer(cache, ReloadingTLS(cert, key), port=0, reload_interval=reload_interval,
                           log_line=lambda line: server.denials.append(json.loads(line)), **kw)
    server.denials = []
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(10)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def https(server: WebhookServer, ca: Path, method: str, path: str, body: dict | bytes | None = None):
    ctx = ssl.create_default_context(cafile=str(ca))
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=ctx, timeout=10)
    try:
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def review(obj: dict, operation: str = "CREATE", old: dict | None = None) -> dict:
    res = kinds.BY_KIND[obj["kind"]] if obj["kind"] in kinds.BY_KIND else None
    group, version = (obj["apiVersion"].split("/") + [""])[:2]
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": str(uuid.uuid4()), "kind": {"group": group, "version": version, "kind": obj["kind"]},
        "resource": {"group": group, "version": version, "resource": res.plural if res else ""},
        "namespace": (obj.get("metadata") or {}).get("namespace", ""), "operation": operation,
        "object": obj, "oldObject": old, "userInfo": {"username": "admin"}, "dryRun": False}}


def ask(server, ca, path: str, obj: dict, **kw) -> dict:
    status, body = https(server, ca, "POST", path, review(obj, **kw))
    assert status == 200, body
    return json.loads(body)["response"]


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_webhook_certs(tmp_path_factory.mktemp("certs"), ("127.0.0.1",))


def _objects():
    csmall = instancetype_obj("csmall", cpu=1, memory="128Mi", namespace=NS)
    cirros = preference_obj("cirros", {"devices": {"preferredDiskBus": "virtio"},
                                       "requirements": {"cpu": {"guest": 1}, "memory": {"guest": "512Mi"}}},
                            namespace=NS)
    big = instancetype_obj("big", cpu=2, memory="1Gi", namespace=NS)
    return [csmall, cirros, big]


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    """The embedded store holding the same objects: lifecycle.admission's answers come from it."""
    store = SqliteStore(tmp_path_factory.mktemp("state") / "state.db")
    for obj in _objects():
        store.create(obj)
    yield store
    store.close()


def embedded_answer(store, obj: dict):
    """(allowed, status fields, warnings, stored object) as the embedded store's admission gives them."""
    try:
        admitted = admit(store, obj, operation="CREATE")
    except Refused as e:
        r = e.result
        status = {"code": r.code, "message": r.message, "reason": r.reason,
                  "causes": [c.to_dict() for c in r.causes]}
        return False, status, r.warnings, None
    return True, None, admitted.warnings, admitted.obj


def cluster_answer(server, ca, obj: dict):
    """(allowed, status, warnings, stored) through the HTTPS webhooks, in the API server's order:
    the mutator's patch applied, then the validator."""
    stored = obj
    mutator = next((h for h in kinds.WEBHOOKS if h.mutating and h.kind == obj["kind"]), None)
    warnings: list[str] = []
    for hook in ([mutator] if mutator else []) + [h for h in kinds.WEBHOOKS if not h.mutating and h.kind == obj["kind"]]:
        resp = ask(server, ca, hook.path, stored)
        warnings += resp.get("warnings", [])
        if not resp["allowed"]:
            st = resp["status"]
            status = {"code": st["code"], "message": st["message"], "reason": st.get("reason"),
                      "causes": (st.get("details") or {}).get("causes", [])}
            return False, status, warnings, None
        if resp.get("patch"):
            assert resp["patchType"] == "JSONPatch"
            stored = jsonpatch.apply(stored, json.loads(base64.b64decode(resp["patch"])))
    return True, None, warnings, stored


CASES = {
    "requirements refused (seed 000)": vm("vm-cirros-csmall", namespace=NS,
                                          instancetype={"kind": "VirtualMachineInstancetype", "name": "csmall"},
                                          preference={"kind": "VirtualMachinePreference", "name": "cirros"},
                                          domain={"devices": {}}, running=False),
    "accepted with a warning": cirros_vm("ok", instancetype="big", preference="cirros"),
    "instancetype not found": cirros_vm("missing", instancetype="nope"),
    "conflict with the instancetype": vm("conflict", namespace=NS, domain={"cpu": {"sockets": 2}, "devices": {}},
                                         instancetype={"kind": "VirtualMachineInstancetype", "name": "big"}),
    "not decodable": vm("bad", namespace=NS, domain={"resources": {"requests": {"memory": "lots"}}, "devices": {}}),
    "schema refused": vm("schema", namespace=NS, domain={}),
    "instancetype valid": instancetype_obj("fine", cpu=2, namespace=NS),
    "preference deprecated topology": preference_obj("p", {"cpu": {"preferredCPUTopology": "preferCores"}},
                                                     namespace=NS),
    "preference bad spread ratio": preference_obj("p2", {"cpu": {"preferredCPUTopology": "spread",
                                                                 "spreadOptions": {"across": "CoresThreads",
                                                                                   "ratio": 8}}},
                                                  namespace=NS),
    "cluster instancetype invalid memory": instancetype_obj("c", kind=kinds.CLUSTER_INSTANCETYPE,
                                                            spec={"cpu": {"guest": 1}, "memory": {"guest": "1Gi",
                                                                  "overcommitPercent": 200}}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_answers_are_the_embedded_stores(certs, embedded, name):
    obj = CASES[name]
    obj = {**obj, "metadata": {"namespace": NS, **obj["metadata"]}} if obj["kind"] in (
        "VirtualMachine", kinds.INSTANCETYPE, kinds.PREFERENCE) else obj
    expected = embedded_answer(embedded, obj)
    with serving(Cache(_objects()), certs.cert, certs.key) as server:
        got = cluster_answer(server, certs.ca, obj)
    assert got == expected
    if not expected[0]:
        assert [d["name"] for d in server.denials] == [obj["metadata"]["name"]]
        assert server.denials[0]["code"] == expected[1]["code"]


def test_refusal_is_kubevirts_status(certs):
    obj = CASES["requirements refused (seed 000)"]
    with serving(Cache(_objects()), certs.cert, certs.key) as server:
        mutated = ask(server, certs.ca, "/virtualmachines-mutate", obj)
        assert mutated["allowed"] is True and "status" not in mutated
        resp = ask(server, certs.ca, "/virtualmachines-validate", obj)
    assert resp["allowed"] is False
    assert resp["status"] == {
        "status": "Failure", "code": 422, "reason": "Invalid",
        "message": "failure checking preference requirements: insufficient Memory resources of 128Mi provided "
                   "by instance type, preference requires 512Mi",
        "details": {"causes": [{"reason": "FieldValueNotFound", "field": "spec.instancetype",
                                "message": "failure checking preference requirements: insufficient Memory "
                                           "resources of 128Mi provided by instance type, preference requires "
                                           "512Mi"}]}}
    assert server.denials[0]["webhook"] == kinds.WEBHOOK_VM_VALIDATOR


def test_the_mutator_patches_the_inferred_matcher_kind(certs):
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "cirros", "namespace": NS, "labels": {
               kinds.LABEL_DEFAULT_INSTANCETYPE: "n1.medium", kinds.LABEL_DEFAULT_PREFERENCE: "cirros"}},
           "spec": {}}
    obj = vm("cirros", namespace=NS, instancetype={"inferFromVolume": "cirros"},
             preference={"inferFromVolume": "cirros"}, domain={"devices": {}},
             volumes=[{"name": "cirros", "persistentVolumeClaim": {"claimName": "cirros"}}])
    with serving(Cache([pvc]), certs.cert, certs.key) as server:
        resp = ask(server, certs.ca, "/virtualmachines-mutate", obj)
    assert resp["allowed"], resp
    patched = jsonpatch.apply(obj, json.loads(base64.b64decode(resp["patch"])))
    assert patched["spec"]["instancetype"] == {"kind": "virtualmachineclusterinstancetype", "name": "n1.medium"}
    assert patched["spec"]["preference"] == {"kind": "virtualmachineclusterpreference", "name": "cirros"}


def test_namespaced_objects_are_not_found_in_another_namespace(certs):
    def conflicting(namespace: str) -> dict:
        return vm("conflict", namespace=namespace, domain={"cpu": {"sockets": 2}, "devices": {}},
                  instancetype={"kind": "VirtualMachineInstancetype", "name": "big"}, runStrategy="Halted")

    with serving(Cache(_objects()), certs.cert, certs.key) as server:
        here = ask(server, certs.ca, "/virtualmachines-validate", conflicting(NS))
        elsewhere = ask(server, certs.ca, "/virtualmachines-validate", conflicting("other"))
    assert here["allowed"] is False and "conflicts with selected instance type" in here["status"]["message"]
    # `big` is in `default` only: from `other` the lookup fails, which KubeVirt's validating
    # webhook only logs (the controller reports the missing instancetype).
    assert elsewhere["allowed"] is True


def test_delete_and_other_operations_pass(certs):
    obj = CASES["requirements refused (seed 000)"]
    with serving(Cache(_objects()), certs.cert, certs.key) as server:
        resp = ask(server, certs.ca, "/virtualmachines-validate", obj, operation="DELETE")
    assert resp["allowed"] is True and "patch" not in resp


def test_health_readiness_and_fail_closed_until_synced(certs):
    cache = Cache(_objects(), synced=False)
    with serving(cache, certs.cert, certs.key) as server:
        assert https(server, certs.ca, "GET", "/healthz") == (200, b"ok\n")
        status, _ = https(server, certs.ca, "GET", "/readyz")
        assert status == 503
        status, _ = https(server, certs.ca, "POST", "/virtualmachines-validate", review(CASES["accepted with a warning"]))
        assert status == 503          # the API server's failurePolicy Fail refuses the request
        cache.has_synced = True
        assert https(server, certs.ca, "GET", "/readyz") == (200, b"ok\n")


def test_bad_bodies_are_400(certs):
    with serving(Cache([]), certs.cert, certs.key) as server:
        assert https(server, certs.ca, "POST", "/virtualmachines-validate", b"{not json")[0] == 400
        assert https(server, certs.ca, "POST", "/virtualmachines-validate", {"kind": "Pod"})[0] == 400
        assert https(server, certs.ca, "POST", "/nowhere", {"kind": "Pod"})[0] in (404, 405)


def test_plain_http_is_refused(certs):
    with serving(Cache([]), certs.cert, certs.key) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        with pytest.raises((http.client.HTTPException, ConnectionError, OSError)):
            conn.request("GET", "/healthz")
            resp = conn.getresponse()
            # A TLS server may answer a plain request with a TLS alert or close: never HTTP.
            raise http.client.HTTPException(f"answered over plain HTTP: {resp.status}")
        conn.close()


def _served_certificate(port: int) -> bytes:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        with ctx.wrap_socket(sock) as tls:
            return tls.getpeercert(binary_form=True)


def test_certificate_files_are_reread_when_they_change(certs, tmp_path):
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    shutil.copy(certs.cert, cert)
    shutil.copy(certs.key, key)
    rotated = make_webhook_certs(tmp_path / "rotated", ("127.0.0.1",))
    with serving(Cache([]), cert, key) as server:
        before = _served_certificate(server.port)
        assert https(server, certs.ca, "GET", "/healthz")[0] == 200
        # A half-done rotation (the new certificate, the old key) keeps the pair in use.
        shutil.copy(rotated.cert, cert)
        assert server.tls.check() is False
        assert _served_certificate(server.port) == before
        assert https(server, certs.ca, "GET", "/healthz")[0] == 200
        shutil.copy(rotated.key, key)
        _wait_for(lambda: server.tls.reloads == 1)
        assert _served_certificate(server.port) != before
        assert https(server, rotated.ca, "GET", "/healthz")[0] == 200
        with pytest.raises(ssl.SSLError):
            https(server, certs.ca, "GET", "/healthz")


def _wait_for(check, seconds: float = 10.0) -> None:
    eventually(check, seconds, interval=0.02, what="the certificate reload")


def test_unusable_certificate_is_one_line(tmp_path, certs):
    bad = tmp_path / "bad.pem"
    bad.write_text("not a certificate\n")
    with pytest.raises(CertificateError) as e:
        ReloadingTLS(bad, certs.key)
    assert "\n" not in str(e.value) and str(bad) in str(e.value)
    with pytest.raises(CertificateError, match="no such file"):
        ReloadingTLS(tmp_path / "missing.pem", certs.key)


def test_the_vmi_mutator_patches_kubevirts_vmi_defaults(certs):
    from instancetype.engine.vmi_mutate import mutate_new_vmi

    vmi = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
           "metadata": {"name": "vmi", "namespace": NS},
           "spec": {"domain": {"devices": {"disks": [{"name": "root"}]}, "resources": {"requests": {"memory": "1Gi"}}},
                    "volumes": [{"name": "root", "containerDisk": {"image": "x"}}]}}
    expected = json.loads(json.dumps(vmi))
    mutate_new_vmi(expected, None)        # status too: v1.9's mutator replaces /status on CREATE
    with serving(Cache([]), certs.cert, certs.key) as server:
        resp = ask(server, certs.ca, "/virtualmachineinstances-mutate", vmi)
        update = ask(server, certs.ca, "/virtualmachineinstances-mutate", vmi, operation="UPDATE", old=vmi)
    assert resp["allowed"] and resp["patchType"] == "JSONPatch"
    patched = jsonpatch.apply(vmi, json.loads(base64.b64decode(resp["patch"])))
    assert patched == expected
    assert update == {"uid": update["uid"], "allowed": True}
