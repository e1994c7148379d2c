"""IO threads (pkg/instancetype/apply/iothreads.go, iothreadpolicy.go)."""
from __future__ import annotations

from typing import Any

from ._util import child, domain


def apply_supplemental_pool(it: dict[str, Any], spec: dict[str, Any], metadata: dict[str, Any], root: str, preference: dict[str, Any] | None = None) -> list[str]:
    count = (it.get("ioThreads") or {}).get("supplementalPoolThreadCount")
    if count is None:
        return []
    dom = domain(spec)
    if (dom.get("ioThreads") or {}).get("supplementalPoolThreadCount") is not None:
        return [f"{root}.domain.ioThreads.supplementalPoolThreadCount"]
    # Other keys of an existing ioThreads object are kept.
    child(dom, "ioThreads")["supplementalPoolThreadCount"] = count
    return []


def apply_policy(it: dict[str, Any], spec: dict[str, Any], metadata: dict[str, Any], root: str, preference: dict[str, Any] | None = None) -> list[str]:
    policy = it.get("ioThreadsPolicy")
    if policy is None:
        return []
    dom = domain(spec)
    if dom.get("ioThreadsPolicy") is not None:
        return [f"{root}.domain.ioThreadsPolicy"]
    dom["ioThreadsPolicy"] = policy
    return []
