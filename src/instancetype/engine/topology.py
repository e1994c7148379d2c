"""Guest vCPUs -> sockets/cores/threads (pkg/instancetype/apply/cpu.go applyGuestTopology).

Public (stable):

    preferred_topology(preference) -> str
        The preference's `cpu.preferredCPUTopology`, or "sockets" when there is none.
    spread_options(preference) -> (ratio, across)
        ratio: `cpu.spreadOptions.ratio` if present, else `preferSpreadSocketToCoreRatio` if
        non-zero, else 2; across: `cpu.spreadOptions.across` if present, else "SocketsCores".
    guest_topology(vcpus, preference) -> (sockets, cores, threads)

Divisions are Go's unsigned integer divisions (truncating): 36 vCPUs spread over
SocketsCoresThreads with ratio 4 gives (4, 4, 2). A ratio of 0 panics in Go; here it gives
zero for the divided value (KubeVirt rejects such preferences at admission).
"""
from __future__ import annotations

SOCKETS = ("sockets", "preferSockets")
CORES = ("cores", "preferCores")
THREADS = ("threads", "preferThreads")
ANY = ("any", "preferAny")
SPREAD = ("spread", "preferSpread")

SOCKETS_CORES = "SocketsCores"
CORES_THREADS = "CoresThreads"
SOCKETS_CORES_THREADS = "SocketsCoresThreads"


def _cpu(preference: dict | None) -> dict:
    if not preference:
        return {}
    cpu = preference.get("cpu")
    return cpu if isinstance(cpu, dict) else {}


def preferred_topology(preference: dict | None) -> str:
    t = _cpu(preference).get("preferredCPUTopology")
    return t if isinstance(t, str) and t else "sockets"


def spread_options(preference: dict | None) -> tuple[int, str]:
    opts = _cpu(preference).get("spreadOptions")
    ratio = None
    across = None
    if isinstance(opts, dict):
        ratio = opts.get("ratio")
        across = opts.get("across")
    if ratio is None:
        top = (preference or {}).get("preferSpreadSocketToCoreRatio") or 0
        ratio = top if top else 2
    return int(ratio), (across if across is not None else SOCKETS_CORES)


def _div(a: int, b: int) -> int:
    return a // b if b else 0


def guest_topology(vcpus: int, preference: dict | None) -> tuple[int, int, int]:
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
