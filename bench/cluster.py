"""The VM controller on a real API server: VM starts per second, API writes per start, and the
API server's own write ceiling in the same run.

    python bench/cluster.py [--vms 1000] [--workers 16] [--clients 8] [--ceiling 2000]
                            [--shared-revisions] [--restarted-rss]
                            [--profile-apiserver FILE] [--profile-controller FILE]

Starts the test environment's etcd + kube-apiserver + kube-controller-manager (tests/kube), the
CRDs `install` applies, a cluster instancetype and preference, and `instancetype controller`.
Then, with `--clients` threads of the project's own API client (KubeStore, one keep-alive
connection each):

1. ceiling: `--ceiling` plain ControllerRevision creates, as fast as they go (creates/s);
2. `--vms` VMs (the typical VM, `runStrategy: Always`) created as fast as they go, timed until
   every one is Running (an informer counts them; no polling);
3. API writes by verb from the API server's `apiserver_request_total` (kubevirt.io VMs and VMIs,
   ControllerRevisions) before and after, less the VM creates themselves;
4. the controller's CPU seconds and peak RSS (/proc), and every part's CPU over the window
   (kube-apiserver, etcd, the controller, this bench);
5. with --restarted-rss, a new controller over the same VMs: its memory once idle.

The figure: starts/s × writes per start ÷ ceiling = the share of the API server's write capacity
the controller turns into progress.

--shared-revisions: then, in the same run and with the same controller, the KubeVirt object's
`instancetype.kubevirt.io/shared-revisions: "true"` is set and `--vms` more VMs are started in a
namespace of their own: revisions stored, API writes per start and starts/s of both (issue 15's
targets: revisions = distinct specs, <= 3 writes per start).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.kube.cluster import Cluster  # noqa: E402
from tests.kube.controller_env import apply_crds  # noqa: E402

from instancetype.store.kube import Informer, KubeStore  # noqa: E402

NS = "bench"
IT = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
      "metadata": {"name": "bench.medium"}, "spec": {"cpu": {"guest": 2}, "memory": {"guest": "4Gi"}}}
PREF = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterPreference",
        "metadata": {"name": "bench.fedora"},
        "spec": {"devices": {"preferredDiskBus": "virtio", "preferredInterfaceModel": "virtio", "preferredRng": {}},
                 "features": {"preferredAcpi": {}, "preferredSmm": {}},
                 "firmware": {"preferredUseEfi": True, "preferredUseSecureBoot": True}}}


def typical_vm(name: str) -> dict:
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": name, "namespace": NS},
            "spec": {"runStrategy": "Always",
                     "instancetype": {"kind": "VirtualMachineClusterInstancetype", "name": "bench.medium"},
                     "preference": {"kind": "VirtualMachineClusterPreference", "name": "bench.fedora"},
                     "template": {"spec": {"domain": {"devices": {}}, "volumes": [
                         {"name": "containerdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:latest"}},
                         {"name": "cloudinit", "cloudInitNoCloud": {"userData": "#cloud-config\n"}}]}}}}


def revision(name: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": name, "namespace": "ceiling"}, "revision": 0,
            "data": {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
                     "spec": IT["spec"]}}


def bare_vmi(name: str) -> dict:
    vm = typical_vm(name)
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
            "metadata": {"name": name, "namespace": "ceiling"},
            "spec": {**vm["spec"]["template"]["spec"], "domain": {"cpu": {"cores": 2}, "memory": {"guest": "4Gi"},
                                                                "devices": {}}}}


def _each_in_parallel(stores: list[KubeStore], items: list, action) -> float:
    """`action(store, item)` for every item, one thread per store (a connection each); returns the
    seconds it took."""
    chunks = [items[i::len(stores)] for i in range(len(stores))]

    def run(store: KubeStore, chunk: list) -> None:
        for item in chunk:
            action(store, item)

    threads = [threading.Thread(target=run, args=(s, c)) for s, c in zip(stores, chunks)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return time.perf_counter() - t


def _put_status(store: KubeStore, name: str) -> None:
    vm = store.get("VirtualMachine", name, "ceiling")
    vm["status"] = {"printableStatus": "Running", "ready": True, "created": True}
    store.update(vm, subresource="status")


def in_parallel_status(stores: list[KubeStore], names: list[str]) -> float:
    """PUT a status on each of the VMs `names` (namespace ceiling), one thread per store."""
    return _each_in_parallel(stores, names, _put_status)


def in_parallel(stores: list[KubeStore], objs: list[dict]) -> float:
    """Create `objs` with one thread per store; returns the seconds it took."""
    return _each_in_parallel(stores, objs, lambda store, obj: store.create(obj))


_METRIC = re.compile(r'^apiserver_request_total\{(?P<labels>[^}]*)\} (?P<value>[0-9.e+]+)$')
WRITE_VERBS = {"POST", "PUT", "PATCH", "DELETE"}
RESOURCES = {"virtualmachines", "virtualmachineinstances", "controllerrevisions"}


def requests_by_verb(kube: Cluster) -> dict[str, float]:
    """apiserver_request_total of the controller's resources, by verb/resource/subresource/code."""
    text = kube.kubectl("get", "--raw", "/metrics", timeout=60).stdout
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = _METRIC.match(line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group("labels")))
        if labels.get("resource") in RESOURCES:
            key = f'{labels["verb"]} {labels["resource"]}{"/" + labels["subresource"] if labels.get("subresource") else ""}' \
                  f' {labels.get("code", "")}'
            out[key] = out.get(key, 0) + float(m.group("value"))
    return out


def only_writes(counts: dict[str, float]) -> dict[str, float]:
    """The writes of `requests_by_verb`'s counts."""
    return {k: v for k, v in counts.items() if k.split()[0] in WRITE_VERBS}


def writes(kube: Cluster) -> dict[str, float]:
    return only_writes(requests_by_verb(kube))


def proc_usage(pid: int) -> tuple[float, int]:
    """(CPU seconds, peak RSS in MiB) of a process."""
    cpu, peak, _ = proc_memory(pid)
    return cpu, peak


def proc_memory(pid: int) -> tuple[float, int, int]:
    """(CPU seconds, peak RSS, current RSS in MiB) of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    mem = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmHWM:", "VmRSS:")):
            mem[line.split(":")[0]] = int(line.split()[1]) // 1024
    return cpu, mem.get("VmHWM", 0), mem.get("VmRSS", 0)


def start_profile(kube: Cluster, path: str, seconds: int) -> threading.Thread:
    """A thread fetching `seconds` of the API server's CPU profile into `path`."""
    def fetch() -> None:
        out = kube.kubectl("get", "--raw", f"/debug/pprof/profile?seconds={seconds}", input=b"",
                           timeout=seconds + 60)
        Path(path).write_bytes(out.stdout)
    th = threading.Thread(target=fetch)
    th.start()
    return th


def start_controller(kube: Cluster, workers: int, log_path: Path) -> subprocess.Popen:
    """`instancetype controller` on the cluster, returned once its informers synced and its workers run."""
    env = kube.env()
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    log = open(log_path, "wb")
    ctl = subprocess.Popen([sys.executable, "-m", "instancetype", "controller", "--kubeconfig",
                            str(kube.kubeconfig), "--workers", str(workers), "--no-catalog", "-v"],
                           env=env, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        if "running with" in log_path.read_text():
            break
        time.sleep(0.1)
    return ctl


def cpu_by_process(kube: Cluster, ctl_pid: int) -> dict[str, float]:
    """CPU seconds so far of each part on the machine: etcd, kube-apiserver, the controller, this bench."""
    out = {name: proc_usage(p.popen.pid)[0] for name, p in kube._procs.items()
           if name in ("etcd", "kube-apiserver") and p.popen is not None}
    out["controller"] = proc_usage(ctl_pid)[0]
    out["bench (client, counter)"] = proc_usage(os.getpid())[0]
    return out


def shared_variant(kube: Cluster, stores: list[KubeStore], args) -> None:
    """The VM phase again with the switch on, in namespace `bench-shared`, the controller as it runs."""
    ns = "bench-shared"
    kube.kubectl("create", "namespace", ns)
    kube.kubectl("create", "namespace", "kubevirt", check=False)
    kube.kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt",
                     "annotations": {"instancetype.kubevirt.io/shared-revisions": "true"}}, "spec": {}}))
    time.sleep(3)       # the controller's KubeVirt informer sees the switch (and resyncs the first VMs)
    running: set[str] = set()
    done = threading.Event()

    def seen(obj) -> None:
        if (obj.get("status") or {}).get("printableStatus") == "Running":
            running.add(obj["metadata"]["name"])
            if len(running) >= args.vms:
                done.set()

    counter = Informer(stores[0], "VirtualMachine", ns, on_add=seen, on_update=lambda old, new: seen(new)).start()
    counter.wait_for_sync(60)
    before = writes(kube)
    vms = [typical_vm(f"vm-{i:05d}") for i in range(args.vms)]
    for vm in vms:
        vm["metadata"]["namespace"] = ns
    t0 = time.perf_counter()
    in_parallel(stores, vms)
    finished = done.wait(args.timeout)
    elapsed = time.perf_counter() - t0
    time.sleep(2)
    after = writes(kube)
    counter.stop()
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in set(after) | set(before)}
    delta = {k: v for k, v in delta.items() if v}
    controller_writes = sum(v for k, v in delta.items() if not k.startswith("POST virtualmachines "))
    starts = len(running)
    print(f"--- shared revisions on: {args.vms} VMs in {ns}, running: {starts} ({'all' if finished else 'TIMED OUT'})")
    print(f"starts: {starts / elapsed:.1f}/s (all Running {elapsed:.2f}s after the first create)")
    print(f"controller writes: {controller_writes:.0f} ({controller_writes / max(starts, 1):.2f} per start)")
    for k in sorted(delta):
        print(f"    {k}: {delta[k]:.0f}")
    print(f"revisions stored: {stores[0].count('ControllerRevision', ns)} for {args.vms} VMs")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vms", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--ceiling", type=int, default=2000)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--shared-revisions", action="store_true",
                    help="then the same VMs again with shared ControllerRevisions switched on")
    ap.add_argument("--restarted-rss", action="store_true",
                    help="then the controller restarted over the VMs: its memory without the run's transients")
    ap.add_argument("--profile-apiserver", metavar="FILE",
                    help="write a CPU profile of kube-apiserver over the VM phase (go tool pprof -top FILE)")
    ap.add_argument("--profile-controller", metavar="FILE",
                    help="sample the controller over the VM phase with py-spy (on PATH): raw stacks to FILE")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as d:
        kube = Cluster(Path(d) / "kube", profiling=bool(args.profile_apiserver)).start()
        ctl = None
        try:
            apply_crds(kube)
            for ns in (NS, "ceiling"):
                kube.kubectl("create", "namespace", ns)
            kube.kubectl("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [IT, PREF]}))
            stores = [KubeStore(str(kube.kubeconfig)) for _ in range(args.clients)]

            # 1. the API server's ceiling, same client, same connections
            in_parallel(stores, [revision(f"warm-{i}") for i in range(100)])
            secs = in_parallel(stores, [revision(f"rev-{i}") for i in range(args.ceiling)])
            ceiling = args.ceiling / secs
            # ... and for the kinds of the controller's own writes (a VM is a far larger object
            # with a far larger schema than a ControllerRevision): the mix of a start, 2 revision
            # creates, 2 VM writes (the matcher patch, the status) and a VMI create.
            k = max(50, args.ceiling // 4)
            vm_create = k / in_parallel(stores, [dict(typical_vm(f"c-{i}"), metadata={"name": f"c-{i}",
                                                   "namespace": "ceiling"}) for i in range(k)])
            vm_status = k / in_parallel_status(stores, [f"c-{i}" for i in range(k)])
            vmi_create = k / in_parallel(stores, [bare_vmi(f"c-{i}") for i in range(k)])
            mix = 5 / (2 / ceiling + 2 / vm_status + 1 / vmi_create)
            # not the controller's work: gone before it starts (bounded poll; kubectl's own wait can miss it)
            kube.kubectl("delete", "-n", "ceiling", "vms,vmis", "--all", "--wait=false", timeout=300)
            for _ in range(600):
                if not kube.kubectl("get", "-n", "ceiling", "vms,vmis", "-o", "name").stdout.strip():
                    break
                time.sleep(0.5)

            # 2. the controller, then the VMs
            ctl = start_controller(kube, args.workers, Path(d) / "controller.log")
            cpu0, _, rss0 = proc_memory(ctl.pid)
            parts0 = cpu_by_process(kube, ctl.pid)

            running = set()
            done = threading.Event()

            def seen(obj, *_):
                obj = _[-1] if _ else obj
                if (obj.get("status") or {}).get("printableStatus") == "Running":
                    running.add(obj["metadata"]["name"])
                    if len(running) >= args.vms:
                        done.set()

            counter = Informer(stores[0], "VirtualMachine", NS, on_add=seen,
                               on_update=lambda old, new: seen(new)).start()
            counter.wait_for_sync(60)
            before_all = requests_by_verb(kube)
            before = only_writes(before_all)
            profile = start_profile(kube, args.profile_apiserver, seconds=10) if args.profile_apiserver else None
            spy = None
            if args.profile_controller:
                # GIL-holding samples only: the controller's CPU, not its waits on the API server
                spy = subprocess.Popen(["py-spy", "record", "--nonblocking", "--gil", "--rate", "500", "--format", "raw",
                                        "--duration", "10", "--pid", str(ctl.pid), "--output", args.profile_controller],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t0 = time.perf_counter()
            create_secs = in_parallel(stores, [typical_vm(f"vm-{i:05d}") for i in range(args.vms)])
            finished = done.wait(args.timeout)
            elapsed = time.perf_counter() - t0
            time.sleep(2)       # the last status writes land before the count
            after_all = requests_by_verb(kube)
            after = only_writes(after_all)
            cpu1, rss, rss_now = proc_memory(ctl.pid)
            if profile is not None:
                profile.join()
            if spy is not None:
                spy.wait(60)
            parts1 = cpu_by_process(kube, ctl.pid)
            counter.stop()

            delta = {k: after.get(k, 0) - before.get(k, 0) for k in set(after) | set(before)}
            delta = {k: v for k, v in delta.items() if v}
            vm_creates = sum(v for k, v in delta.items() if k.startswith("POST virtualmachines "))
            controller_writes = sum(delta.values()) - vm_creates
            ok_writes = sum(v for k, v in delta.items() if not k.startswith("POST virtualmachines ")
                            and k.split()[-1].startswith("2"))
            starts = len(running)
            rate = starts / elapsed
            per_start = controller_writes / max(starts, 1)
            print(f"VMs: {args.vms}, running: {starts} ({'all' if finished else 'TIMED OUT'}), "
                  f"controller workers: {args.workers}, client threads: {args.clients}")
            print(f"ceiling: {ceiling:.0f} ControllerRevision creates/s ({args.ceiling} in {secs:.2f}s)")
            print(f"  same client, the controller's kinds: VM creates {vm_create:.0f}/s, VM status PUTs (GET+PUT) "
                  f"{vm_status:.0f}/s, VMI creates {vmi_create:.0f}/s; a start's mix of writes: {mix:.0f}/s")
            print(f"VM creates: {args.vms} in {create_secs:.2f}s ({args.vms / create_secs:.0f}/s)")
            print(f"starts: {rate:.1f}/s (all Running {elapsed:.2f}s after the first create)")
            print(f"controller writes: {controller_writes:.0f} ({per_start:.2f} per start; "
                  f"{ok_writes:.0f} succeeded, {ok_writes / max(starts, 1):.2f} per start)")
            for k in sorted(delta):
                print(f"    {k}: {delta[k]:.0f}")
            reads = {k: after_all.get(k, 0) - before_all.get(k, 0) for k in after_all
                     if k.split()[0] not in WRITE_VERBS and after_all.get(k, 0) - before_all.get(k, 0)}
            print("reads of those kinds meanwhile (the bench's counter and kubectl included): "
                  + (", ".join(f"{k} {v:.0f}" for k, v in sorted(reads.items())) or "none"))
            print(f"share of the ceiling: {rate * per_start / ceiling:.0%} "
                  f"(starts/s x writes per start / ceiling); of the mix's ceiling: {rate * per_start / mix:.0%}")
            print(f"controller: {cpu1 - cpu0:.1f} CPU s for the run, peak RSS {rss} MiB "
                  f"({rss0} MiB before the first VM, {rss_now} MiB once all run)")
            print(f"revisions stored: {stores[0].count('ControllerRevision', NS)} for {args.vms} VMs")
            print(f"CPU seconds over the {elapsed:.1f}s (2 s drain included): " + ", ".join(
                f"{name} {parts1[name] - parts0[name]:.1f}" for name in parts1))
            if args.restarted_rss:
                ctl.terminate()
                ctl.wait(30)
                ctl = start_controller(kube, args.workers, Path(d) / "controller-2.log")
                # its first reconcile of every VM (each finds nothing to do), until its CPU rests (bounded)
                for _ in range(60):
                    before_cpu = proc_usage(ctl.pid)[0]
                    time.sleep(1)
                    if proc_usage(ctl.pid)[0] - before_cpu < 0.05:
                        break
                _, peak2, rss2 = proc_memory(ctl.pid)
                print(f"a new controller over the {args.vms} VMs: RSS {rss2} MiB, peak {peak2} MiB "
                      "once idle (its informers listed them; no backlog)")
            if args.shared_revisions:
                shared_variant(kube, stores, args)
        finally:
            if ctl is not None:
                lines = stop_controller(ctl, Path(d) / "controller.log")
                print(lines[-1] if lines else "")
                retries = [line for line in lines if "(retry " in line]
                print(f"controller log: {len(retries)} retries" + "".join(f"\n    {r}" for r in retries[:5]))
            kube.stop()


def stop_controller(ctl: subprocess.Popen, log: Path) -> list[str]:
    """End a controller process (SIGTERM, then SIGKILL after 30 s); the lines of its log."""
    ctl.terminate()
    try:
        ctl.wait(30)
    except subprocess.TimeoutExpired:
        ctl.kill()
    return log.read_text(errors="replace").splitlines()


if __name__ == "__main__":
    main()
