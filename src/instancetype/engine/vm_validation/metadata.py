"""Template metadata (KubeVirt vmi-create-admitter.go ValidateVirtualMachineInstanceMetadata):
reserved kubevirt.io labels are for KubeVirt's own service accounts, and the ignition and
sidecar annotations need their feature gates."""
from __future__ import annotations

from typing import Any

from instancetype.engine.vm_validation._common import _E, INVALID, NOT_SUPPORTED, Gates, cause

# restrictedVmiLabels
RESTRICTED_LABELS = frozenset((
    "kubevirt.io/created-by", "kubevirt.io/migrationJobUID", "kubevirt.io/nodeName",
    "kubevirt.io/migrationTargetNodeName", "kubevirt.io/schedulable", "kubevirt.io/install-strategy-identifier",
))
IGNITION_ANNOTATION = "kubevirt.io/ignitiondata"
SIDECAR_ANNOTATION = "hooks.kubevirt.io/hookSidecars"


def validate_metadata(field: str, meta: dict[str, Any], gates: Gates, kubevirt_service_account: bool = False) -> list[Any]:
    """`field` is `spec.template.metadata` for a VM."""
    causes = []
    labels = (meta.get("labels") or _E)
    annotations = (meta.get("annotations") or _E)
    if not kubevirt_service_account and any(k in RESTRICTED_LABELS for k in labels):
        causes.append(cause(NOT_SUPPORTED, "creation of the following reserved kubevirt.io/ labels on a VMI object is "
                            "prohibited", f"{field}.labels"))
    if annotations.get(IGNITION_ANNOTATION) and "ExperimentalIgnitionSupport" not in gates:
        causes.append(cause(INVALID, "ExperimentalIgnitionSupport feature gate is not enabled in kubevirt-config, "
                            f"invalid entry {field}.annotations.{IGNITION_ANNOTATION}", f"{field}.annotations"))
    if annotations.get(SIDECAR_ANNOTATION) and "Sidecar" not in gates:
        causes.append(cause(INVALID, "sidecar feature gate is not enabled in kubevirt-config, invalid entry "
                            f"{field}.annotations.{SIDECAR_ANNOTATION}", f"{field}.annotations"))
    return causes
