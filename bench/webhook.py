"""`instancetype serve` under load: AdmissionReviews per second and latency, direct and through
the API server.

    python bench/webhook.py [--seconds 5] [--rates 200,500,1000] [--rounds 300] [--e2e-rate 40]

Starts the test environment's real etcd + kube-apiserver + kube-controller-manager
(tests/kube: built on first use), `instancetype install`, and `instancetype serve` (its own
process), all on 127.0.0.1. Then:

1. direct: AdmissionReview v1 POSTs of the typical VM (../shared/bench/typical-expand.json,
   with its instancetype and preference from the catalogue `install` deploys) to
   `/virtualmachines-validate` over HTTPS keep-alive, at a fixed offered load (open loop: each
   request is due at t0 + i/rate, and its latency counts from then, so queueing is measured);
2. sequential: one keep-alive connection, one request at a time (as the API server calls a
   webhook), `/healthz`, validate and mutate: the p50 round trip and serve's CPU per request;
3. end to end: creates of the same VM through the API server in four conditions at once, each a
   namespace of its own whose VM creates the API server sends to other webhooks (namespace
   selectors): `serve`; a do-nothing aiohttp webhook (`allowed`, no patch: the floor under any
   Python webhook over aiohttp and TLS); a do-nothing Go webhook (bench/go-noop-webhook, Go's
   standard library, built once and cached as the test binaries are: the floor under any
   webhook, what the API server's own two calls cost on this machine); none (the API server
   alone). The conditions interleave, so a changing machine load falls on all alike: first one
   create at a time (`--rounds` each, the conditions in turn), then an open loop at
   `--e2e-rate` creates per second in all for `--seconds`.

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


# End to end, the conditions compared in one run: each is a namespace whose VM creates the API
# server sends to other webhooks (a namespaceSelector on every configuration), so the creates of
# all of them interleave and share the machine's state: `serve`; the same webhooks answered by a
# do-nothing aiohttp server (the floor under any Python webhook on aiohttp and TLS) and by a
# do-nothing Go server (bench/go-noop-webhook: the floor under any webhook at all, what the API
# server's own two calls cost here); none (the API server alone).
CONDITIONS = ("serve", "aiohttp no-op", "Go no-op", "none")
CONDITION_LABEL = "instancetype.bench/webhooks"
VM_WEBHOOK_PATHS = ("/virtualmachines-mutate", "/virtualmachines-validate")


def condition_namespace(condition: str) -> str:
    return "bench-" + condition.lower().replace(" ", "-").replace("-no-op", "-noop")


def route_webhooks(kube, stubs: dict[str, str]) -> None:
    """`serve`'s two configurations limited to the namespace labelled `serve`; for each stub
    (condition -> https://HOST:PORT), copies of the two VM webhooks sent to it, limited to its own
    namespace; the namespaces made and labelled ("none" has no label: no webhook sees it)."""
    for kind, name in (("mutatingwebhookconfiguration", "virt-api-mutator"),
                       ("validatingwebhookconfiguration", "virt-api-validator")):
        cfg = json.loads(kube.kubectl("get", kind, name, "-o", "json").stdout)
        for hook in cfg["webhooks"]:
            hook["namespaceSelector"] = {"matchLabels": {CONDITION_LABEL: "serve"}}
        kube.kubectl("replace", "-f", "-", input=json.dumps(cfg))
        for condition, url in stubs.items():
            hooks = []
            for hook in copy.deepcopy(cfg["webhooks"]):
                path = hook["clientConfig"]["url"].split("://", 1)[1].partition("/")[2]
                if "/" + path not in VM_WEBHOOK_PATHS:
                    continue
                hook["name"] = hook["name"].replace(".kubevirt.io", f"-{condition_namespace(condition)}.kubevirt.io")
                hook["clientConfig"]["url"] = url + "/" + path
                hook["namespaceSelector"] = {"matchLabels": {CONDITION_LABEL: condition_namespace(condition)}}
                hooks.append(hook)
            kube.kubectl("create", "-f", "-", input=json.dumps({
                "apiVersion": cfg["apiVersion"], "kind": cfg["kind"], "webhooks": hooks,
                "metadata": {"name": f"{name}-{condition_namespace(condition)}"}}))
    for condition in CONDITIONS:
        ns = condition_namespace(condition)
        kube.kubectl("create", "namespace", ns)
        if condition != "none":
            label = "serve" if condition == "serve" else ns
            kube.kubectl("label", "namespace", ns, f"{CONDITION_LABEL}={label}")


def _create_request(vm: dict, condition: str, name: str) -> tuple[str, bytes]:
    ns = condition_namespace(condition)
    obj = copy.deepcopy(vm)
    obj["metadata"] = {"name": name, "namespace": ns}
    return f"/apis/kubevirt.io/v1/namespaces/{ns}/virtualmachines", json.dumps(obj).encode()


def _summary(latencies_s: list[float], errors: int = 0) -> dict:
    return {"ok": len(latencies_s), "errors": errors, "p50_ms": percentile(latencies_s, 50) * 1e3,
            "p99_ms": percentile(latencies_s, 99) * 1e3}


def sequential_creates(server: str, ca: Path, token: str, vm: dict, rounds: int) -> dict:
    """One create at a time on one keep-alive connection, the conditions in turn (the order
    rotated each round): each create's latency with nothing queued before it."""
    import http.client

    host, port = server.split("://", 1)[1].rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=ssl.create_default_context(cafile=str(ca)),
                                       timeout=REQUEST_TIMEOUT_S)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    latencies: dict[str, list[float]] = {c: [] for c in CONDITIONS}
    errors = dict.fromkeys(CONDITIONS, 0)
    warm = 10
    for r in range(warm + rounds):
        for k in range(len(CONDITIONS)):
            condition = CONDITIONS[(r + k) % len(CONDITIONS)]
            path, body = _create_request(vm, condition, f"seq-{r}")
            t = time.perf_counter()
            conn.request("POST", path, body=body, headers=headers)
            resp = conn.getresponse()
            resp.read()
            if r < warm:
                continue
            if resp.status == 201:
                latencies[condition].append(time.perf_counter() - t)
            else:
                errors[condition] += 1
    conn.close()
    return {c: _summary(latencies[c], errors[c]) for c in CONDITIONS}


async def open_loop_creates(server: str, ca: Path, token: str, vm: dict, rate: float, seconds: float) -> dict:
    """Creates at `rate` per second in all (open loop), create i in condition i mod 4."""
    ctx = ssl.create_default_context(cafile=str(ca))
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    latencies: dict[str, list[float]] = {c: [] for c in CONDITIONS}
    errors = dict.fromkeys(CONDITIONS, 0)
    connector = aiohttp.TCPConnector(limit=CONNECTIONS, ssl=ctx)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def create(condition: str, name: str) -> bool:
            path, body = _create_request(vm, condition, name)
            async with session.post(server + path, data=body, headers=headers) as resp:
                await resp.read()
                return resp.status == 201

        await open_loop(lambda i: create(CONDITIONS[i % len(CONDITIONS)], f"warm-{i}"), 20, 0.5)
        n = int(rate * seconds)
        start = time.perf_counter() + 0.05

        async def one(i: int) -> None:
            condition = CONDITIONS[i % len(CONDITIONS)]
            due = start + i / rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            try:
                ok = await asyncio.wait_for(create(condition, f"open-{i}"), REQUEST_TIMEOUT_S)
            except (TimeoutError, aiohttp.ClientError, OSError):
                ok = False
            if ok:
                latencies[condition].append(time.perf_counter() - due)
            else:
                errors[condition] += 1

        await asyncio.gather(*(one(i) for i in range(n)))
    return {c: _summary(latencies[c], errors[c]) for c in CONDITIONS}


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
    """The aiohttp no-op webhook: every AdmissionReview allowed unchanged, over aiohttp and TLS
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


def go_noop_webhook() -> Path:
    """bench/go-noop-webhook built once, cached (and locked) as the test environment's binaries are."""
    from tests.kube import build

    return build.binary("noopwebhook", recipe=build.Recipe("go-noop-webhook", "."),
                        module_dir=ROOT / "bench" / "go-noop-webhook")


def start_stub(argv: list[str], port: int, ca: Path) -> subprocess.Popen:
    """`argv` started, once it answers TLS on 127.0.0.1:`port` (bounded: 20 s)."""
    proc = subprocess.Popen(argv)
    ctx = ssl.create_default_context(cafile=str(ca))
    try:
        for _ in range(200):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as sock, \
                        ctx.wrap_socket(sock, server_hostname="127.0.0.1"):
                    return proc
            except OSError:
                if proc.poll() is not None:
                    break
                time.sleep(0.1)
        raise SystemExit(f"{argv[0]} did not start")
    except BaseException:
        proc.kill()
        proc.wait(15)
        raise


def run_cli(env, *args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "instancetype", *args], env=env, capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"instancetype {args[0]} failed: {proc.stderr.strip()}")


def print_conditions(title: str, rows: dict) -> None:
    print(f"\n{title}")
    base = rows["none"]
    print(f"{'':<16} {'ok':>5} {'errors':>7} {'p50 ms':>8} {'p99 ms':>8} {'added at p50':>13} {'at p99':>7}")
    for condition, r in rows.items():
        added = ("" if condition == "none" else
                 f"{100 * (r['p50_ms'] / base['p50_ms'] - 1):>12.0f}% {100 * (r['p99_ms'] / base['p99_ms'] - 1):>6.0f}%")
        print(f"{condition:<16} {r['ok']:>5} {r['errors']:>7} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {added}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rates", default="200,500,1000")
    ap.add_argument("--e2e-rate", type=float, default=40.0,
                    help="creates per second in all in the open-loop phase, shared by the four conditions")
    ap.add_argument("--rounds", type=int, default=300,
                    help="sequential creates per condition (the conditions in turn)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--floor", action="store_true", help="(kept for older commands: the floors always run)")
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
    go_binary = go_noop_webhook()
    with tempfile.TemporaryDirectory(prefix="bench-webhook-") as tmp:
        work = Path(tmp)
        kube = Cluster(work / "kube").start()
        served = None
        stubs: list[subprocess.Popen] = []
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
            ports = {"aiohttp no-op": _free_port(), "Go no-op": _free_port()}
            stubs.append(start_stub([sys.executable, __file__, "--allow-all", str(ports["aiohttp no-op"]),
                                     str(certs.cert), str(certs.key)], ports["aiohttp no-op"], certs.ca))
            stubs.append(start_stub([str(go_binary), str(ports["Go no-op"]), str(certs.cert), str(certs.key)],
                                    ports["Go no-op"], certs.ca))
            route_webhooks(kube, {c: f"https://127.0.0.1:{p}" for c, p in ports.items()})
            time.sleep(1.0)      # the API server's webhook configuration informer
            token = kube.tokens["admin"]
            results["e2e_sequential"] = sequential_creates(kube.server, kube.ca, token, vm, args.rounds)
            results["e2e_open_loop"] = asyncio.run(open_loop_creates(kube.server, kube.ca, token, vm,
                                                                     args.e2e_rate, args.seconds))
            results["load_after"] = os.getloadavg()[0]
        finally:
            for stub in stubs:
                stub.terminate()
                stub.wait(15)
            if served is not None:
                served.stop()
            kube.stop()
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"load average before the run: {results['load']:.2f}, after: {results['load_after']:.2f} "
          f"on {os.cpu_count()} cores")
    for path, us in results["in_process_us"].items():
        print(f"in process (no HTTP), {path}: {us:.0f} µs per review")
    print(f"serve, direct: POST /virtualmachines-validate (typical VM), HTTPS keep-alive, {args.seconds:g} s each")
    print(f"{'offered/s':>10} {'achieved/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    for r in results["direct"]:
        print(f"{r['offered']:>10.0f} {r['achieved']:>11.1f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {r['errors']:>7}")
    print(f"\nserve, sequential: one keep-alive connection, one request at a time, {SEQUENTIAL} each")
    for label, r in results["sequential"].items():
        print(f"{label:<22} p50 {r['p50_us']:>6.0f} µs   serve's CPU {r['cpu_us']:>5.0f} µs per request")
    print_conditions(f"end to end, sequential: VM creates through the API server, one at a time, the conditions "
                     f"in turn, {args.rounds} each", results["e2e_sequential"])
    print_conditions(f"end to end, open loop: {args.e2e_rate:g} creates/s in all for {args.seconds:g} s, the "
                     f"conditions in turn", results["e2e_open_loop"])


if __name__ == "__main__":
    main()
