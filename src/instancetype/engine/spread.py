"""The VM webhook's spread divisibility check: an instancetype's vCPUs must split
evenly over the preference's spread topology.

KubeVirt: checkSpreadCPUTopology (pkg/instancetype/webhooks/vm/admitter.go, formerly
vms-admitter.go). Runs before the instancetype is applied, only in VM admission
(Expand and the VM controller truncate instead, see topology).
"""
from __future__ import annotations

from typing import Any

from instancetype.errors import DecodeError, SpreadError

from .preference.cpu import SPREAD_TOPOLOGIES, preferred_topology, spread_options

# KubeVirt names this field literally, without the `spec.` prefix of a VM path.
GUEST_PATH = "instancetype.spec.cpu.guest"
_THREADS_PER_CORE = 2


def _fail(message: str) -> None:
    raise SpreadError(message, fields=[GUEST_PATH])


def check_spread(instancetype: dict[str, Any] | None, preference: dict[str, Any] | None) -> None:
    """Raise SpreadError (field `instancetype.spec.cpu.guest`) when the vCPUs do not divide."""
    if instancetype is None or preferred_topology(preference) not in SPREAD_TOPOLOGIES:
        return
    cpu = instancetype.get("cpu")
    guest = (cpu.get("guest") if type(cpu) is dict else None) or 0
    ratio, across = spread_options(preference)
    if type(ratio) is not int or ratio < 0:
        # Go's decoder would have refused the preference (both ratio fields are uint32).
        opts = ((preference or {}).get("cpu") or {}).get("spreadOptions") or {}
        field = "spec.cpu.spreadOptions.ratio" if opts.get("ratio") is not None else "spec.preferSpreadSocketToCoreRatio"
        raise DecodeError(f"{field}: cannot unmarshal {ratio!r} into a uint32")
    if across == "SocketsCores":
        _need_ratio(guest, ratio)
        if guest % ratio:
            _fail(f"{guest} vCPUs provided by the instance type are not divisible by the "
                  f"Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of {ratio} "
                  "provided by the preference")
    elif across == "CoresThreads":
        _need_ratio(guest, ratio)
        if guest % ratio:
            _fail(f"{guest} vCPUs provided by the instance type are not divisible by the number of "
                  f"threads per core {ratio}")
    elif across == "SocketsCoresThreads":
        # Go short-circuits: an odd count fails before the ratio is ever divided by.
        odd = guest % _THREADS_PER_CORE
        if not odd:
            _need_ratio(guest, ratio)
        if odd or (guest // _THREADS_PER_CORE) % ratio:
            _fail(f"{guest} vCPUs provided by the instance type are not divisible by the number of "
                  f"threads per core {_THREADS_PER_CORE} and Spec.PreferSpreadSocketToCoreRatio or "
                  f"Spec.CPU.PreferSpreadOptions.Ratio of {ratio}")
    # any other `across`: no case matches in Go, nothing is checked


def _need_ratio(guest: int, ratio: int) -> None:
    # Go divides by the ratio unguarded (a runtime panic in the webhook for 0);
    # we refuse with a message naming the preference field instead.
    if not ratio:
        _fail(f"{guest} vCPUs provided by the instance type cannot be spread with a "
              "Spec.CPU.PreferSpreadOptions.Ratio of 0 provided by the preference")
