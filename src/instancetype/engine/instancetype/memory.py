"""Memory (pkg/instancetype/apply/memory.go): the first conflict only, then guest, overcommit,
hugepages and maxGuest."""
from __future__ import annotations

from typing import Any

from instancetype.engine.jsondata import copy_json
from instancetype.engine.memory import overcommit_request
from instancetype.engine.spec import guest_format

from ._util import child, domain, resource_lists


def apply(it: dict[str, Any], spec: dict[str, Any], metadata: dict[str, Any], root: str, preference: dict[str, Any] | None = None) -> list[str]:
    want: dict[str, Any] = it.get("memory") or {}
    dom = domain(spec)
    vm_mem = child(dom, "memory")
    if vm_mem.get("guest") is not None:
        return [f"{root}.domain.memory.guest"]
    if vm_mem.get("hugepages") is not None and want.get("hugepages") is not None:
        return [f"{root}.domain.memory.hugepages"]
    if vm_mem.get("maxGuest") is not None and want.get("maxGuest") is not None:
        return [f"{root}.domain.memory.maxGuest"]
    requests, limits = resource_lists(spec)
    if requests is not None and "memory" in requests:
        return [f"{root}.domain.resources.requests.memory"]
    if limits is not None and "memory" in limits:
        return [f"{root}.domain.resources.limits.memory"]

    guest = want.get("guest") or "0"
    vm_mem["guest"] = guest
    percent = want.get("overcommitPercent") or 0
    if percent > 0:
        res = child(dom, "resources")
        child(res, "requests")["memory"] = overcommit_request(guest, percent, guest_format(it))
    v = want.get("hugepages")
    if v is not None:
        vm_mem["hugepages"] = copy_json(v)
    v = want.get("maxGuest")
    if v is not None:
        vm_mem["maxGuest"] = v
    return []
