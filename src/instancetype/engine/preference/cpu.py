"""CPU preferences: preferredCPUFeatures, and the topology/spread readers shared by
the instancetype topology, the spread check, the requirements check and the
preference admission rules.

KubeVirt: pkg/instancetype/preference/apply/cpu.go (applyCPUPreferences,
GetPreferredTopology, GetSpreadOptions).
"""
from __future__ import annotations

from typing import Any

from ._util import child, copy_value, dict_items, domain

DEFAULT_TOPOLOGY = "sockets"
DEFAULT_SPREAD_RATIO = 2
DEFAULT_SPREAD_ACROSS = "SocketsCores"

SPREAD_TOPOLOGIES = frozenset(("spread", "preferSpread"))


def preferred_topology(preference: dict[str, Any] | None) -> str:
    """preference.cpu.preferredCPUTopology, `sockets` when absent (GetPreferredTopology)."""
    if preference:
        cpu = preference.get("cpu")
        if type(cpu) is dict:
            t = cpu.get("preferredCPUTopology")
            if isinstance(t, str):     # (a decoded preference's is)
                return t
    return DEFAULT_TOPOLOGY


def spread_options(preference: dict[str, Any] | None) -> tuple[Any, Any]:
    """(ratio, across) as GetSpreadOptions computes them.

    ratio: spreadOptions.ratio when present (even 0), else a non-zero
    preferSpreadSocketToCoreRatio, else 2; across: spreadOptions.across when
    present (even ""), else SocketsCores.
    """
    # (Any: the preference's values are whatever its JSON holds; check_spread refuses a wrong type)
    ratio: Any = DEFAULT_SPREAD_RATIO
    across: Any = DEFAULT_SPREAD_ACROSS
    if not preference:
        return ratio, across
    top = preference.get("preferSpreadSocketToCoreRatio")
    if top:
        ratio = top
    cpu = preference.get("cpu")
    if type(cpu) is dict:
        opts = cpu.get("spreadOptions")
        if type(opts) is dict:
            if opts.get("across") is not None:
                across = opts["across"]
            if opts.get("ratio") is not None:
                ratio = opts["ratio"]
    return ratio, across


def apply_cpu(pref_cpu: dict[str, Any], spec: dict[str, Any]) -> None:
    """Append each preferred CPU feature whose name the VM does not list yet.

    Go dereferences domain.cpu without creating it (a nil-pointer panic when the VM
    has no cpu and there is no instancetype); we create the empty cpu object instead.
    """
    features = pref_cpu.get("preferredCPUFeatures")
    if not features:
        return
    cpu = child(domain(spec), "cpu")
    current = cpu.get("features")
    if type(current) is not list:
        current = cpu["features"] = []
    names = [f.get("name") for f in dict_items(current)]  # a list: names may be any JSON value
    for f in dict_items(features):
        if f.get("name") not in names:
            current.append(copy_value(f))
