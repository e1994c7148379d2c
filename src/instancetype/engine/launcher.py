"""What virt-launcher refuses when it turns a VMI into a libvirt domain.

    domain_error(vmi) -> str | None     the sync error virt-handler reports, or None

KubeVirt v1.9 admits a VMI whose guest memory is negative (an instancetype's `memory.guest:
-1Gi`): no webhook checks `domain.memory.guest` (vmi-create-admitter.go checks requests and
limits only, and the pod renderer's WithMemoryRequests skips a guest memory that is not
positive). The refusal comes from virt-launcher's converter, vcpu.QuantityToByte: `Memory size
'<q>' must be greater than or equal to 0`; virt-handler's launcher client wraps it as `server
error. command SyncVMI failed: %q` and sets the VMI's Synchronized condition to False with the
reason `Synchronizing with the Domain failed.`. The VMI stays Scheduled; the guest never runs.
"""
from __future__ import annotations

import json
from typing import Any

SYNC_FAILED_REASON = "Synchronizing with the Domain failed."


def _quantity_to_byte_error(text: Any) -> str | None:
    """vcpu.QuantityToByte: AsInt64, else Value()-1; negative is refused."""
    from instancetype.api.quantity import Quantity
    from instancetype.errors import QuantityError

    try:
        q = Quantity.parse(text)
    except (QuantityError, TypeError, ValueError):
        return None     # admission refused it already; never reached here
    size, exact = q.as_int64()
    if not exact:
        size = q.value() - 1
    if size < 0:
        return f"Memory size '{q}' must be greater than or equal to 0"
    return None


def domain_error(vmi: dict[str, Any]) -> str | None:
    """The error virt-handler reports when virt-launcher cannot build the domain (SyncVMI)."""
    domain = (vmi.get("spec") or {}).get("domain") or {}
    memory = domain.get("memory") if isinstance(domain, dict) else None
    guest = memory.get("guest") if isinstance(memory, dict) else None
    if guest is None:
        return None
    message = _quantity_to_byte_error(guest)
    if message is None:
        return None
    return f"server error. command SyncVMI failed: {json.dumps(message)}"
