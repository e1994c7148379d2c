"""What each of a VM start's writes costs the API server: CPU milliseconds per request of
kube-apiserver, etcd and the client, by kind of write, and the bound they put on
`bench/cluster.py`'s figure (starts/s x writes per start / plain ControllerRevision creates/s).

    python bench/apiserver_writes.py [--n 1000] [--clients 8]

Starts the test environment's etcd + kube-apiserver + kube-controller-manager (tests/kube) with
install's CRDs, runs the controller in this process for one typical VM (bench/cluster.py's) to
take the VMI exactly as the controller creates it, stops it, and then, with `--clients` threads
of the project's own API client, times `--n` of each, alone: ControllerRevision creates (the
ceiling's write), VM creates (the bench's), the matcher merge patch, the status PUT, VMI creates
(the controller's body: the expanded spec and the simulated node's status). CPU comes from /proc
(the API server's and etcd's whole process, so their background work is included).
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from bench.cluster import IT, NS, PREF, _each_in_parallel, proc_usage, revision, typical_vm  # noqa: E402
from tests.kube.cluster import Cluster  # noqa: E402
from tests.kube.controller_env import apply_crds, until  # noqa: E402

from instancetype.controller import kube as controller  # noqa: E402
from instancetype.store.kube import KubeStore  # noqa: E402

OWN_METADATA = ("managedFields", "resourceVersion", "uid", "creationTimestamp", "generation")


def controllers_vmi(kube: Cluster, store: KubeStore) -> dict:
    """The VMI the controller creates for the typical VM (ownerReferences kept, as it sends them)."""
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(controller.Options(
        kubeconfig=str(kube.kubeconfig), catalog=False, workers=1), stop), daemon=True)
    thread.start()
    try:
        store.create(typical_vm("template"))
        vmi = until(lambda: _running_vmi(store), 120, "the typical VM's VMI")
    finally:
        stop.set()
        thread.join(30)
    for k in OWN_METADATA:
        vmi["metadata"].pop(k, None)
    return vmi


def _running_vmi(store: KubeStore) -> dict | None:
    try:
        vmi = store.get("VirtualMachineInstance", "template", NS)
    except Exception:
        return None
    return vmi if (vmi.get("status") or {}).get("phase") == "Running" else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--clients", type=int, default=8)
    args = ap.parse_args()
    n = args.n
    with tempfile.TemporaryDirectory() as d:
        kube = Cluster(Path(d) / "kube").start()
        try:
            apply_crds(kube)
            for ns in (NS, "ceiling"):
                kube.kubectl("create", "namespace", ns)
            kube.kubectl("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                                 "items": [IT, PREF]}))
            stores = [KubeStore(str(kube.kubeconfig)) for _ in range(args.clients)]
            template = controllers_vmi(kube, stores[0])
            owner = template["metadata"].pop("ownerReferences")[0]
            pids = {name: kube._procs[name].popen.pid for name in ("kube-apiserver", "etcd")}
            rows: dict[str, float] = {}       # API server + etcd CPU ms per request
            clients: dict[str, float] = {}    # the client's CPU ms per request

            def measure(what: str, items: list, action) -> None:
                before = {k: proc_usage(p)[0] for k, p in pids.items()}
                me = time.process_time()
                secs = _each_in_parallel(stores, items, action)
                client = time.process_time() - me
                time.sleep(1.0)       # the API server's work behind the last answers (watch cache)
                cost = {k: (proc_usage(p)[0] - before[k]) * 1000 / len(items) for k, p in pids.items()}
                rows[what] = cost["kube-apiserver"] + cost["etcd"]
                clients[what] = client * 1000 / len(items)
                print(f"{what:28s} {len(items) / secs:6.0f}/s   kube-apiserver {cost['kube-apiserver']:5.2f} ms"
                      f"   etcd {cost['etcd']:5.2f} ms   client {client * 1000 / len(items):5.2f} ms")

            _each_in_parallel(stores, [revision(f"warm-{i}") for i in range(100)], lambda s, o: s.create(o))
            measure("ControllerRevision create", [revision(f"rev-{i}") for i in range(n)],
                    lambda s, o: s.create(o))
            ceiling_cpu = rows["ControllerRevision create"] + clients["ControllerRevision create"]
            vms = [dict(typical_vm(f"c-{i}"), metadata={"name": f"c-{i}", "namespace": "ceiling"})
                   for i in range(n)]
            current: dict[str, dict] = {}
            measure("VM create", vms, lambda s, o: current.__setitem__(o["metadata"]["name"], s.create(o)))

            def matchers(s: KubeStore, name: str) -> None:
                current[name] = s.patch("VirtualMachine", name, {"spec": {
                    "instancetype": {"revisionName": f"{name}-bench.medium-1"},
                    "preference": {"revisionName": f"{name}-bench.fedora-1"}}}, "ceiling")
            measure("VM merge patch (matchers)", list(current), matchers)
            status = copy.deepcopy(template["status"])

            def put_status(s: KubeStore, name: str) -> None:
                vm = dict(current[name], status={"printableStatus": "Running", "ready": True, "created": True,
                                                 "runStrategy": "Always", "conditions": status["conditions"]})
                vm["metadata"] = {k: v for k, v in vm["metadata"].items() if k != "managedFields"}
                s.update(vm, subresource="status")     # with the patch's resourceVersion: one PUT
            measure("VM status PUT", list(current), put_status)

            def vmi(i: int) -> dict:
                out = copy.deepcopy(template)
                out["metadata"].update(name=f"c-{i}", namespace="ceiling",
                                       ownerReferences=[dict(owner, name=f"c-{i}",
                                                             uid=current[f"c-{i}"]["metadata"]["uid"])])
                return out
            measure("VMI create (controller's)", [vmi(i) for i in range(n)], lambda s, o: s.create(o))

            start = 2 * rows["ControllerRevision create"] + rows["VM merge patch (matchers)"] \
                + rows["VM status PUT"] + rows["VMI create (controller's)"]
            print(f"API server + etcd CPU per start (KubeVirt's 5 writes): {start:.2f} ms; with the VM's create: "
                  f"{start + rows['VM create']:.2f} ms; a ControllerRevision create: "
                  f"{rows['ControllerRevision create']:.2f} ms")
            print(f"a start's writes cost {start / 5 / rows['ControllerRevision create']:.2f}x a revision create each")
            # The machine's CPU is the bound (bench/cluster.py's runs keep both cores busy): the
            # ceiling spends `ceiling_cpu` per write; a start spends the API side of its 5 writes and
            # of the bench's VM create, the bench client's create, and the controller's own CPU C.
            fixed = start + rows["VM create"] + clients["VM create"]
            print(f"bound on bench/cluster.py's share of the ceiling: 5 x {ceiling_cpu:.2f} / ({fixed:.2f} + C), "
                  f"C = the controller's CPU ms per start: {5 * ceiling_cpu / fixed:.0%} at C = 0, "
                  + ", ".join(f"{5 * ceiling_cpu / (fixed + c):.0%} at C = {c}" for c in (1, 2, 5.5)))
        finally:
            kube.stop()


if __name__ == "__main__":
    main()
