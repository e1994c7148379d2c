"""CPU (pkg/instancetype/apply/cpu.go): conflicts, then the CPU fields and the guest topology.

All CPU conflicts are collected (in KubeVirt's order); with any of them nothing is applied.
Note the conflict path `dedicatedCPUPlacement` while the VMI key is `dedicatedCpuPlacement`.
`maxSockets` silently overwrites the VM's value; `features` are left to the preference.
The preference is read for the preferred topology (engine/topology.py).
"""
from __future__ import annotations

from typing import Any

from instancetype.engine.jsondata import copy_json
from instancetype.engine.topology import guest_topology

from ._util import child, domain, resource_lists


def apply(it: dict[str, Any], spec: dict[str, Any], metadata: dict[str, Any], root: str, preference: dict[str, Any] | None = None) -> list[str]:
    want: dict[str, Any] = it.get("cpu") or {}
    vm_cpu = child(domain(spec), "cpu")
    conflicts = []
    requests, limits = resource_lists(spec)
    if requests is not None and "cpu" in requests:
        conflicts.append(f"{root}.domain.resources.requests.cpu")
    if limits is not None and "cpu" in limits:
        conflicts.append(f"{root}.domain.resources.limits.cpu")
    if vm_cpu:      # (an empty cpu, the common case, has nothing to conflict on)
        if vm_cpu.get("sockets"):
            conflicts.append(f"{root}.domain.cpu.sockets")
        if vm_cpu.get("cores"):
            conflicts.append(f"{root}.domain.cpu.cores")
        if vm_cpu.get("threads"):
            conflicts.append(f"{root}.domain.cpu.threads")
        if vm_cpu.get("model") and want.get("model") is not None:
            conflicts.append(f"{root}.domain.cpu.model")
        if vm_cpu.get("dedicatedCpuPlacement") and want.get("dedicatedCPUPlacement") is not None:
            conflicts.append(f"{root}.domain.cpu.dedicatedCPUPlacement")
        if vm_cpu.get("isolateEmulatorThread") and want.get("isolateEmulatorThread") is not None:
            conflicts.append(f"{root}.domain.cpu.isolateEmulatorThread")
        if vm_cpu.get("numa") is not None and want.get("numa") is not None:
            conflicts.append(f"{root}.domain.cpu.numa")
        if vm_cpu.get("realtime") is not None and want.get("realtime") is not None:
            conflicts.append(f"{root}.domain.cpu.realtime")
    if conflicts:
        return conflicts

    if len(want) == 1:      # only `guest` (normalised specs always have it): the topology alone
        vm_cpu["sockets"], vm_cpu["cores"], vm_cpu["threads"] = guest_topology(want["guest"] or 0, preference)
        return []
    v = want.get("model")
    if v is not None:
        vm_cpu["model"] = v
    v = want.get("dedicatedCPUPlacement")
    if v is not None:
        vm_cpu["dedicatedCpuPlacement"] = v
    v = want.get("isolateEmulatorThread")
    if v is not None:
        vm_cpu["isolateEmulatorThread"] = v
    v = want.get("numa")
    if v is not None:
        vm_cpu["numa"] = copy_json(v)
    v = want.get("realtime")
    if v is not None:
        vm_cpu["realtime"] = copy_json(v)
    v = want.get("maxSockets")
    if v is not None:
        vm_cpu["maxSockets"] = v
    sockets, cores, threads = guest_topology(want.get("guest") or 0, preference)
    vm_cpu["sockets"] = sockets
    vm_cpu["cores"] = cores
    vm_cpu["threads"] = threads
    return []
