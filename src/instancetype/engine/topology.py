"""Guest vCPUs -> sockets/cores/threads (pkg/instancetype/apply/cpu.go applyGuestCPUTopology).

Public (stable):

    preferred_topology(preference) -> str
        The preference's `cpu.preferredCPUTopology` as given (even ""), or "sockets" when
        there is none (GetPreferredTopology; one reader, shared with engine/preference/cpu.py).
    spread_options(preference) -> (ratio, across)
        ratio: `cpu.spreadOptions.ratio` if present, else `preferSpreadSocketToCoreRatio` if
        non-zero, else 2; across: `cpu.spreadOptions.across` if present, else "SocketsCores"
        (GetSpreadOptions).
    guest_topology(vcpus, preference) -> (sockets, cores, threads)

Sockets, cores and threads all start at 1 and 1 vCPU always stays 1/1/1. A topology that
matches none of the known spellings, including a present but empty `preferredCPUTopology: ""`
(a non-nil pointer to "" in Go), leaves 1/1/1, as does a spread `across` that is none of the
three. Divisions are Go's unsigned integer divisions (truncating): 36 vCPUs spread over
SocketsCoresThreads with ratio 4 gives (4, 4, 2). A ratio of 0 panics in Go; here it gives
zero for the divided value (KubeVirt rejects such preferences at admission).
"""
from __future__ import annotations

from typing import Any

from instancetype.engine.preference.cpu import preferred_topology, spread_options

__all__ = ["preferred_topology", "spread_options", "guest_topology"]

SOCKETS = ("sockets", "preferSockets")
CORES = ("cores", "preferCores")
THREADS = ("threads", "preferThreads")
ANY = ("any", "preferAny")
SPREAD = ("spread", "preferSpread")

SOCKETS_CORES = "SocketsCores"
CORES_THREADS = "CoresThreads"
SOCKETS_CORES_THREADS = "SocketsCoresThreads"


def _div(a: int, b: int) -> int:
    return a // b if b else 0


def guest_topology(vcpus: int, preference: dict[str, Any] | None) -> tuple[int, int, int]:
    if vcpus == 1:
        return 1, 1, 1
    topo = preferred_topology(preference)
    if topo in SOCKETS or topo in ANY:
        return vcpus, 1, 1
    if topo in CORES:
        return 1, vcpus, 1
    if topo in THREADS:
        return 1, 1, vcpus
    if topo in SPREAD:
        ratio, across = spread_options(preference)
        if across == SOCKETS_CORES:
            return _div(vcpus, ratio), ratio, 1
        if across == CORES_THREADS:
            return 1, _div(vcpus, ratio), ratio
        if across == SOCKETS_CORES_THREADS:
            return _div(vcpus // 2, ratio), ratio, 2
    return 1, 1, 1
