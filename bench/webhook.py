"""`instancetype serve` under load: AdmissionReviews per second and latency, direct and through
the API server.

    python bench/webhook.py [--seconds 5] [--rates 200,500,1000] [--e2e-rate 50]

Starts the test environment's real etcd + kube-apiserver + kube-controller-manager
(tests/kube: built on first use), `instancetype install`, and `instancetype serve` (its own
process), all on 127.0.0.1. Then:

1. direct: AdmissionReview v1 POSTs of the typical VM (../shared/bench/typical-expand.json,
   with its instancetype and preference from the catalogue `install` deploys) to
   `/virtualmachines-validate` over HTTPS keep-alive, at a fixed offered load (open loop: each
   request is due at t0 + i/rate, and its latency counts from then, so queueing is measured);
2. end to end: POSTs of the same VM (created, not dry-run) to the API server with the webhooks
   registered, then the same with the webhook configurations removed (the API server alone).

With `--floor`, a third end-to-end phase between the two: the same creates with the webhooks
answered by a do-nothing aiohttp server on serve's port and certificate (`allowed: true`, no
patch, no admission): what any Python webhook over aiohttp and TLS adds on this machine, the floor
under `serve`'s figure.

2b. sequential: one keep-alive connection, one request at a time (as the API server calls a
   webhook), `/healthz`, validate and mutate: the p50 round trip and serve's CPU per request;
Every phase is bounded (`--seconds` each, 10 s per request); the cluster stops at the end.
Targets: p99 <= 5 ms at 500 req/s direct; the webhooks add <= 30% to the create latency.
"""
from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

TYPICAL = ROOT.parent / "shared" / "bench" / "typical-expand.json"
if not TYPICAL.exists():
    TYPICAL = ROOT / "bench" / "typical-expand.json"
CONNECTIONS = 64
REQUEST_TIMEOUT_S = 10.0


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


async def open_loop(send, rate: float, seconds: float) -> dict:
    """`send(i)` at `rate` per second for `seconds`: achieved rate, p50/p99 ms, errors."""
    n = int(rate * seconds)
    latencies: list[float] = []
    errors = 0
    start = time.perf_counter() + 0.05

    async def one(i: int) -> None:
        nonlocal errors
        due = start + i / rate
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        try:
            ok = await asyncio.wait_for(send(i), REQUEST_TIMEOUT_S)
        except (TimeoutError, aiohttp.ClientError, OSError):
            ok = False
        if ok:
            latencies.append(time.perf_counter() - due)
        else:
            errors += 1

    await asyncio.gather(*(one(i) for i in range(n)))
    elapsed = time.perf_counter() - start
    return {"offered": rate, "sent": n, "ok": len(latencies), "errors": errors, "achieved": len(latencies) / elapsed,
            "p50_ms": percentile(latencies, 50) * 1e3, "p99_ms": percentile(latencies, 99) * 1e3}


def review_body(vm: dict) -> bytes:
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": str(uuid.uuid4()), "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
        "resource": {"group": "kubevirt.io", "version": "v1", "resource": "virtualmachines"},
        "namespace": vm["metadata"]["namespace"], "operation": "CREATE", "object": vm,
        "userInfo": {"username": "bench"}, "dryRun": False}}).encode()


async def direct(url: str, ca: Path, vm: dict, rates: list[float], seconds: float) -> list[dict]:
    ctx = ssl.create_default_context(cafile=str(ca))
    body = review_body(vm)
    out = []
    connector = aiohttp.TCPConnector(limit=CONNECTIONS, ssl=ctx)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def send(i: int) -> bool:
            async with session.post(url + "/virtualmachines-validate", data=body,
                                    headers={"Content-Type": "application/json"}) as resp:
                data = await resp.read()
                return resp.status == 200 and b'"allowed":true' in data
        await open_loop(send, 50, 1.0)        # warm-up: connections, caches
        for rate in rates:
            out.append(await open_loop(send, rate, seconds))
    return out


async def end_to_end(server: str, ca: Path, token: str, namespace: str, vm: dict, rate: float, seconds: float,
                     tag: str) -> dict:
    ctx = ssl.create_default_context(cafile=str(ca))
    url = f"{server}/apis/kubevirt.io/v1/namespaces/{namespace}/virtualmachines"
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=CONNECTIONS, ssl=ctx)
    async with aiohttp.ClientSession(connector=connector) as session:
        def sender(prefix: str):
            async def send(i: int) -> bool:
                obj = copy.deepcopy(vm)
                obj["metadata"] = {"name": f"{prefix}-{i}", "namespace": namespace}
                async with session.post(url, data=json.dumps(obj), headers=headers) as resp:
                    await resp.read()
                    return resp.status == 201
            return send
        await open_loop(sender(f"{tag}-warm"), 20, 0.5)
        return await open_loop(sender(tag), rate, seconds)


def in_process(vm: dict, seconds: float) -> dict:
    """µs of `webhook.review.answer` per AdmissionReview (decode, admission, encode), no HTTP: the
    CPU each request costs `serve`, whatever the machine's load does to the latencies."""
    import msgspec

    from instancetype.engine.objects import ObjectSource
    from instancetype.lifecycle.catalog_sync import desired_objects
    from instancetype.webhook.review import answer, decode

    index = {(o["kind"], o["metadata"]["name"]): o for o in desired_objects(None, registry="bench")}

    class Catalogue(ObjectSource):
        def lookup(self, kind, name, namespace):
            return index.get((kind, name))

    body = review_body(vm)
    out = {}
    for path in ("/virtualmachines-mutate", "/virtualmachines-validate"):
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds / 2:
            msgspec.json.encode(answer(path, decode(body), objects=Catalogue(), config={})[0])
            n += 1
        out[path] = (time.perf_counter() - start) / n * 1e6
    return out


SEQUENTIAL = 400


def sequential(port: int, ca: Path, pid: int, vm: dict) -> dict:
    """One keep-alive HTTPS connection, one request at a time (as the API server calls the webhooks):
    the p50 round trip and `serve`'s CPU per request (from /proc, so the machine's load moves it
    little) of `/healthz` (aiohttp and TLS alone), validate and mutate."""
    import http.client

    def cpu() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    body = review_body(vm)
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ssl.create_default_context(cafile=str(ca)))
    out = {}
    for label, method, path, data in (("GET /healthz", "GET", "/healthz", None),
                                      ("validate", "POST", "/virtualmachines-validate", body),
                                      ("mutate", "POST", "/virtualmachines-mutate", body)):
        def once(method: str = method, path: str = path, data: bytes | None = data) -> float:
            t = time.perf_counter()
            conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
            conn.getresponse().read()
            return time.perf_counter() - t
        for _ in range(50):
            once()
        before = cpu()
        latencies = [once() for _ in range(SEQUENTIAL)]
        out[label] = {"p50_us": statistics.median(latencies) * 1e6,
                      "cpu_us": (cpu() - before) / SEQUENTIAL * 1e6}
    conn.close()
    return out


def allow_all(port: int, cert: str, key: str) -> None:
    """The `--floor` phase's webhook: every AdmissionReview allowed unchanged, over aiohttp and TLS
    as `serve` answers (run in a process of its own: `webhook.py --allow-all PORT CERT KEY`)."""
    from aiohttp import web

    async def review(request: web.Request) -> web.Response:
        uid = json.loads(await request.read())["request"]["uid"]
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                  "response": {"uid": uid, "allowed": True}})

    app = web.Application()
    app.router.add_post("/{webhook}", review)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    web.run_app(app, host="127.0.0.1", port=port, ssl_context=context, print=None, access_log=None)


def start_allow_all(port: int, certs) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, __file__, "--allow-all", str(port), str(certs.cert), str(certs.key)])
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    try:
        for _ in range(200):        # bounded: 20 s for the server to listen
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as sock, \
                        ctx.wrap_socket(sock, server_hostname="127.0.0.1"):
                    return proc
            except OSError:
                if proc.poll() is not None:
                    break
                time.sleep(0.1)
        raise SystemExit("the do-nothing webhook did not start")
    except BaseException:
        proc.kill()
        proc.wait(15)
        raise


def run_cli(env, *args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "instancetype", *args], env=env, capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"instancetype {args[0]} failed: {proc.stderr.strip()}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rates", default="200,500,1000")
    ap.add_argument("--e2e-rate", type=float, default=50.0)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--floor", action="store_true",
                    help="also time the creates with a do-nothing aiohttp webhook (the floor under serve's)")
    ap.add_argument("--allow-all", nargs=3, metavar=("PORT", "CERT", "KEY"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.allow_all:
        port, cert, key = args.allow_all
        allow_all(int(port), cert, key)
        return
    rates = [float(r) for r in args.rates.split(",") if r]

    from tests.kube.certs import make_webhook_certs
    from tests.kube.cluster import Cluster
    from tests.kube.served import Served, _free_port

    typical = json.loads(TYPICAL.read_text())
    vm = typical["vm"]
    results: dict = {"load": os.getloadavg()[0], "in_process_us": in_process(vm, min(args.seconds, 4.0))}
    with tempfile.TemporaryDirectory(prefix="bench-webhook-") as tmp:
        work = Path(tmp)
        kube = Cluster(work / "kube").start()
        served = None
        try:
            certs = make_webhook_certs(work / "certs", ("127.0.0.1",))
            served = Served(kube, certs, _free_port())
            env = kube.env()
            run_cli(env, "install", "--kubeconfig", str(kube.kubeconfig), "--webhook-url", served.url,
                    "--ca-bundle", str(certs.ca))
            served.start()
            results["direct"] = asyncio.run(direct(served.url, certs.ca, vm, rates, args.seconds))
            assert served.proc is not None
            results["sequential"] = sequential(served.port, certs.ca, served.proc.pid, vm)
            namespace = "bench"
            kube.kubectl("create", "namespace", namespace)
            token = kube.tokens["admin"]
            results["e2e_webhooks"] = asyncio.run(end_to_end(kube.server, kube.ca, token, namespace, vm,
                                                             args.e2e_rate, args.seconds, "with"))
            if args.floor:
                served.stop()
                stub = start_allow_all(served.port, certs)
                try:
                    results["e2e_do_nothing"] = asyncio.run(end_to_end(kube.server, kube.ca, token, namespace, vm,
                                                                       args.e2e_rate, args.seconds, "floor"))
                finally:
                    stub.terminate()
                    stub.wait(15)
            kube.kubectl("delete", "mutatingwebhookconfiguration", "virt-api-mutator")
            kube.kubectl("delete", "validatingwebhookconfiguration", "virt-api-validator")
            time.sleep(1.0)      # the API server's webhook configuration informer
            results["e2e_apiserver_alone"] = asyncio.run(end_to_end(kube.server, kube.ca, token, namespace, vm,
                                                                    args.e2e_rate, args.seconds, "without"))
        finally:
            if served is not None:
                served.stop()
            kube.stop()
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"load average before the run: {results['load']:.2f} on {os.cpu_count()} cores")
    for path, us in results["in_process_us"].items():
        print(f"in process (no HTTP), {path}: {us:.0f} µs per review")
    print(f"serve, direct: POST /virtualmachines-validate (typical VM), HTTPS keep-alive, {args.seconds:g} s each")
    print(f"{'offered/s':>10} {'achieved/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    for r in results["direct"]:
        print(f"{r['offered']:>10.0f} {r['achieved']:>11.1f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {r['errors']:>7}")
    print(f"\nserve, sequential: one keep-alive connection, one request at a time, {SEQUENTIAL} each")
    for label, r in results["sequential"].items():
        print(f"{label:<22} p50 {r['p50_us']:>6.0f} µs   serve's CPU {r['cpu_us']:>5.0f} µs per request")
    print(f"\nend to end: POST of the VM to the API server at {args.e2e_rate:g}/s, {args.seconds:g} s")
    print(f"{'':<22} {'achieved/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    for key, label in (("e2e_webhooks", "with the webhooks"), ("e2e_do_nothing", "do-nothing webhooks"),
                       ("e2e_apiserver_alone", "API server alone")):
        if key not in results:
            continue
        r = results[key]
        print(f"{label:<22} {r['achieved']:>11.1f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {r['errors']:>7}")
    a, b = results["e2e_webhooks"], results["e2e_apiserver_alone"]
    print(f"\nthe webhooks add {100 * (a['p50_ms'] / b['p50_ms'] - 1):.0f}% at p50, "
          f"{100 * (a['p99_ms'] / b['p99_ms'] - 1):.0f}% at p99 to the create latency")
    if "e2e_do_nothing" in results:
        f = results["e2e_do_nothing"]
        print(f"do-nothing webhooks add {100 * (f['p50_ms'] / b['p50_ms'] - 1):.0f}% at p50, "
              f"{100 * (f['p99_ms'] / b['p99_ms'] - 1):.0f}% at p99")


if __name__ == "__main__":
    main()
