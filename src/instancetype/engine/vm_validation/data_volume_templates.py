"""Data volume templates of a VM (KubeVirt pkg/storage/admitters: ValidateDataVolumeTemplate
with validateDataVolume and validateNumberOfSources, and the storage admitter's
validateVirtualMachineDataVolumeTemplateNamespace)."""
from __future__ import annotations

from typing import Any

from instancetype.api.kinds import DEFAULT_NAMESPACE
from instancetype.engine.vm_validation._common import _E, INVALID, REQUIRED, cause

_CDI_SOURCES = ("http", "s3", "gcs", "registry", "pvc", "upload", "blank", "imageio", "vddk", "snapshot")


def validate_data_volume_templates(vm_spec: dict[str, Any]) -> list[Any]:
    """ValidateDataVolumeTemplate (paths as KubeVirt writes them: `spec.dataVolumeTemplate[i]`)."""
    volumes = (((vm_spec.get("template") or _E).get("spec") or _E).get("volumes") or ())
    causes = []
    for idx, dvt in enumerate(vm_spec.get("dataVolumeTemplates") or ()):
        at = f"spec.dataVolumeTemplate[{idx}]"
        problem = _validate_data_volume(at, dvt)
        if problem:
            causes.extend(problem)
            continue
        name = ((dvt.get("metadata") or _E).get("name") or "")
        if not _referenced(volumes, name):
            causes.append(cause(REQUIRED, f"DataVolumeTemplate entry {at} must be referenced in the VMI template's "
                                f"'volumes' list", at))
    return causes


def _referenced(volumes: Any, name: str) -> bool:
    """Whether a PVC or DataVolume volume names `name` (a loop: this runs on every admission)."""
    for v in volumes:
        pvc = v.get("persistentVolumeClaim")
        if pvc is not None and ((pvc or _E).get("claimName") or "") == name:
            return True
        dv = v.get("dataVolume")
        if dv is not None and ((dv or _E).get("name") or "") == name:
            return True
    return False


def _validate_data_volume(at: str, dvt: dict[str, Any]) -> list[Any]:
    if not ((dvt.get("metadata") or _E).get("name") or ""):
        return [cause(REQUIRED, f"'name' field must not be empty for DataVolumeTemplate entry {at}.name.", f"{at}.name")]
    spec = (dvt.get("spec") or _E)
    pvc, storage = spec.get("pvc"), spec.get("storage")
    if pvc is None and storage is None:
        return [cause(INVALID, "Missing Data volume PVC or Storage", f"{at}.PVC.Storage")]
    if pvc is not None and storage is not None:
        return [cause(INVALID, "Duplicate storage definition, both target storage and target pvc defined",
                      f"{at}.PVC.Storage")]
    claim = (pvc if pvc is not None else storage or _E)
    external = claim.get("dataSourceRef") is not None or claim.get("dataSource") is not None
    sourced = spec.get("source") is not None or spec.get("sourceRef") is not None
    if external and sourced:
        return [cause(INVALID, "External population is incompatible with Source and SourceRef", f"{at}.source")]
    if not external and not sourced:
        return [cause(INVALID, "Data volume should have either Source, SourceRef, or be externally populated",
                      f"{at}.source.sourceRef")]
    source = spec.get("source")
    if source is not None:
        n = sum(1 for k in _CDI_SOURCES if (source or _E).get(k) is not None)
        if n == 0:
            return [cause(INVALID, "Missing dataVolume valid source", f"{at}.source")]
        if n > 1:
            return [cause(INVALID, "Multiple dataVolume sources", f"{at}.source")]
    return []


def validate_data_volume_template_namespaces(vm: dict[str, Any], operation: str, old: dict[str, Any] | None) -> list[Any]:
    """The storage admitter: an embedded DataVolume lives in the VM's namespace (on UPDATE only
    when the templates changed)."""
    spec = (vm.get("spec") or _E)
    dvts = spec.get("dataVolumeTemplates")
    if operation == "UPDATE" and old is not None and (old.get("spec") or _E).get("dataVolumeTemplates") == dvts:
        return []
    ns = ((vm.get("metadata") or _E).get("namespace") or "") or DEFAULT_NAMESPACE
    causes = []
    for idx, dvt in enumerate(dvts or ()):
        dv_ns = ((dvt.get("metadata") or _E).get("namespace") or "")
        if dv_ns and dv_ns != ns:
            causes.append(cause(INVALID, f"Embedded DataVolume namespace {dv_ns} differs from VM namespace {ns}",
                                f"spec.dataVolumeTemplates[{idx}]"))
    return causes
