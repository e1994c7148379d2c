"""Probes of a VMI spec (KubeVirt vmi-create-admitter.go: validateProbe and
appendStatusCauseForProbeNotAllowedWithNoPodNetworkPresent)."""
from __future__ import annotations

from typing import Any

from instancetype.engine.vm_validation._common import _E, INVALID, REQUIRED, cause

_HANDLERS = ("httpGet", "tcpSocket", "exec", "guestAgentPing")


def validate_probes(field: str, spec: dict[str, Any]) -> list[Any]:
    """The readiness then liveness probe: exactly one handler each; HTTP and TCP probes need the
    pod network."""
    causes = []
    for kind in ("readinessProbe", "livenessProbe"):
        probe = spec.get(kind)
        if probe is None:
            continue
        at = f"{field}.{kind}"
        n = sum(1 for h in _HANDLERS if (probe or _E).get(h) is not None)
        if n > 1:
            causes.append(cause(INVALID, f"{at} must have exactly one probe type set", at))
        if n < 1:
            causes.append(cause(REQUIRED, f"either {at}.tcpSocket, {at}.exec or {at}.httpGet must be set if a {at} "
                                f"is specified", at))
    if not any(n.get("pod") is not None for n in (spec.get("networks") or ())):
        for kind in ("readinessProbe", "livenessProbe"):
            probe = (spec.get(kind) or _E)
            for h in ("httpGet", "tcpSocket"):
                if probe.get(h) is not None:
                    at = f"{field}.{kind}.{h}"
                    causes.append(cause(INVALID, f"{at} is only allowed if the Pod Network is attached", at))
    return causes
