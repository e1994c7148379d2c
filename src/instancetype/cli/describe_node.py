"""`describe node` as kubectl's NodeDescriber prints it (k8s.io/kubectl/pkg/describe
`describeNode`): identity, taints, the Lease, conditions, capacity and allocatable, system info,
then what runs there and what it requests. There are no pods: each VMI on the node stands for
its virt-launcher pod (`virt-launcher-<vmi>`), with the requests the scheduler counted
(engine/launcher_pod.py: cpu and memory requests, the device plugins' resources as limits too).
"""
from __future__ import annotations

import time
from typing import Any

from instancetype.api.quantity import Quantity

from . import tables

_STANDARD = ("cpu", "memory", "ephemeral-storage")


def _rfc1123z(ts: Any) -> str:
    """Go's time.RFC1123Z in UTC, as kubectl prints a timestamp; `<unset>` without one."""
    t = tables.parse_timestamp(ts)
    if t is None:
        return "<unset>"
    return time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime(t))


def _dig(obj: Any, *path: str) -> Any:
    for p in path:
        obj = obj.get(p) if isinstance(obj, dict) else None
    return obj


def _map(lines: list[str], title: str, values: dict, sep: str) -> None:
    keys = sorted(values)
    if not keys:
        lines.append(f"{title}:\t<none>")
        return
    for i, k in enumerate(keys):
        lines.append(f"{title + ':' if i == 0 else ''}\t{k}{sep}{values[k]}")


def _quantity(name: str, n: int) -> str:
    if name == "cpu":
        return str(Quantity.from_milli(n))
    return str(Quantity.from_int(n, "BinarySI" if name == "memory" or name.startswith("hugepages-") else "DecimalSI"))


def _pct(n: int, of: int) -> int:
    return int(n / of * 100) if of else 0


def node_text(cluster, node: dict) -> str:
    from instancetype.engine.launcher_pod import pod_requests
    from instancetype.engine.scheduler import allocatable
    from instancetype.store.base import NotFound
    from instancetype.store.kubevirt import kubevirt_config

    meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    name = meta.get("name") or ""
    lines = [f"Name:\t{name}", f"Roles:\t{tables._node_roles(node)}"]
    _map(lines, "Labels", meta.get("labels") or {}, "=")
    _map(lines, "Annotations", meta.get("annotations") or {}, ": ")
    lines.append(f"CreationTimestamp:\t{_rfc1123z(meta.get('creationTimestamp'))}")
    taints = [t for t in spec.get("taints") or () if isinstance(t, dict)]
    if not taints:
        lines.append("Taints:\t<none>")
    for i, t in enumerate(taints):
        text = f"{t.get('key', '')}={t['value']}:{t.get('effect', '')}" if t.get("value") else \
            f"{t.get('key', '')}:{t.get('effect', '')}"
        lines.append(f"{'Taints:' if i == 0 else ''}\t{text}")
    lines.append(f"Unschedulable:\t{'true' if spec.get('unschedulable') is True else 'false'}")
    try:
        lease = cluster.get("Lease", name, "kube-node-lease")
    except NotFound:
        lease = None
    except Exception:  # noqa: BLE001 -- a store without leases (the embedded one): no section
        lease = None
    if lease is not None:
        ls = lease.get("spec") or {}
        lines += ["Lease:", f"  HolderIdentity:\t{ls.get('holderIdentity') or '<unset>'}",
                  f"  AcquireTime:\t{_rfc1123z(ls.get('acquireTime'))}", f"  RenewTime:\t{_rfc1123z(ls.get('renewTime'))}"]
    conditions = [c for c in status.get("conditions") or () if isinstance(c, dict)]
    if conditions:
        lines += ["Conditions:", "  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage",
                  "  ----\t------\t-----------------\t------------------\t------\t-------"]
        lines += [f"  {c.get('type', '')}\t{c.get('status', '')}\t{_rfc1123z(c.get('lastHeartbeatTime'))}\t"
                  f"{_rfc1123z(c.get('lastTransitionTime'))}\t{c.get('reason', '')}\t{c.get('message', '')}"
                  for c in conditions]
    lines.append("Addresses:")
    lines += [f"  {a.get('type', '')}:\t{a.get('address', '')}" for a in status.get("addresses") or ()
              if isinstance(a, dict)]
    for title in ("Capacity", "Allocatable"):
        values = status.get(title.lower()) or {}
        if values:
            lines.append(f"{title}:")
            lines += [f"  {k}:\t{values[k]}" for k in sorted(values)]
    info = status.get("nodeInfo") or {}
    lines.append("System Info:")
    for label, key in (("Machine ID", "machineID"), ("System UUID", "systemUUID"), ("Boot ID", "bootID"),
                       ("Kernel Version", "kernelVersion"), ("OS Image", "osImage"),
                       ("Operating System", "operatingSystem"), ("Architecture", "architecture"),
                       ("Container Runtime Version", "containerRuntimeVersion"),
                       ("Kubelet Version", "kubeletVersion"), ("Kube-Proxy Version", "kubeProxyVersion")):
        lines.append(f"  {label}:\t{info.get(key, '')}")

    config = kubevirt_config(cluster.store)
    vmis = [v for v in cluster.list("VirtualMachineInstance", None)
            if _dig(v, "status", "nodeName") == name and not _dig(v, "metadata", "deletionTimestamp")]
    vmis.sort(key=lambda v: (_dig(v, "metadata", "namespace") or "", _dig(v, "metadata", "name") or ""))
    alloc = allocatable(node)
    now = time.time()
    total_req: dict[str, int] = {}
    total_lim: dict[str, int] = {}
    rows = []
    for v in vmis:
        req = pod_requests(v, config)
        lim = {k: n for k, n in req.items() if k not in _STANDARD}   # hugepages and devices are limits too
        for k, n in req.items():
            total_req[k] = total_req.get(k, 0) + n
        for k, n in lim.items():
            total_lim[k] = total_lim.get(k, 0) + n
        rows.append(f"  {_dig(v, 'metadata', 'namespace') or ''}\tvirt-launcher-{_dig(v, 'metadata', 'name') or ''}\t"
                    f"{_quantity('cpu', req.get('cpu', 0))} ({_pct(req.get('cpu', 0), alloc.get('cpu', 0))}%)\t0 (0%)\t"
                    f"{_quantity('memory', req.get('memory', 0))} ({_pct(req.get('memory', 0), alloc.get('memory', 0))}%)"
                    f"\t0 (0%)\t{tables.age(v, now)}")
    lines.append(f"Non-terminated Pods:\t({len(vmis)} in total)")
    if rows:
        lines += ["  Namespace\tName\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge",
                  "  ---------\t----\t------------\t----------\t---------------\t-------------\t---"] + rows
    lines += ["Allocated resources:", "  (Total limits may be over 100 percent, i.e., overcommitted.)",
              "  Resource\tRequests\tLimits", "  --------\t--------\t------"]
    for k in _STANDARD:
        r, lim_n = total_req.get(k, 0), total_lim.get(k, 0)
        lines.append(f"  {k}\t{_quantity(k, r)} ({_pct(r, alloc.get(k, 0))}%)\t{_quantity(k, lim_n)} "
                     f"({_pct(lim_n, alloc.get(k, 0))}%)")
    for k in sorted(n for n in alloc if n.startswith("hugepages-")):
        r, lim_n = total_req.get(k, 0), total_lim.get(k, 0)
        lines.append(f"  {k}\t{_quantity(k, r)} ({_pct(r, alloc[k])}%)\t{_quantity(k, lim_n)} ({_pct(lim_n, alloc[k])}%)")
    for k in sorted(n for n in alloc if n not in _STANDARD and n != "pods" and not n.startswith("hugepages-")):
        lines.append(f"  {k}\t{_quantity(k, total_req.get(k, 0))}\t{_quantity(k, total_lim.get(k, 0))}")
    lines.append("Events:\t<none>")
    return tables.described(lines)

