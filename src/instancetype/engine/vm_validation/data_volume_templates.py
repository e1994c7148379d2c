"""Data volume templates of a VM (KubeVirt pkg/storage/admitters: ValidateDataVolumeTemplate
with validateDataVolume and validateNumberOfSources, and the storage admitter's
validateVirtualMachineDataVolumeTemplateNamespace)."""
from __future__ import annotations

from instancetype.engine.vm_validation._common import INVALID, REQUIRED, cause, d, items, s

_CDI_SOURCES = ("http", "s3", "gcs", "registry", "pvc", "upload", "blank", "imageio", "vddk", "snapshot")


def validate_data_volume_templates(vm_spec: dict) -> list:
    """ValidateDataVolumeTemplate (paths as KubeVirt writes them: `spec.dataVolumeTemplate[i]`)."""
    volumes = items(d(d(vm_spec.get("template")).get("spec")).get("volumes"))
    causes = []
    for idx, dvt in enumerate(items(vm_spec.get("dataVolumeTemplates"))):
        at = f"spec.dataVolumeTemplate[{idx}]"
        problem = _validate_data_volume(at, dvt)
        if problem:
            causes.extend(problem)
            continue
        name = s(d(dvt.get("metadata")).get("name"))
        if not any(s(d(v.get("persistentVolumeClaim")).get("claimName")) == name and v.get("persistentVolumeClaim") is not None
                   or v.get("dataVolume") is not None and s(d(v["dataVolume"]).get("name")) == name for v in volumes):
            causes.append(cause(REQUIRED, f"DataVolumeTemplate entry {at} must be referenced in the VMI template's "
                                f"'volumes' list", at))
    return causes


def _validate_data_volume(at: str, dvt: dict) -> list:
    if not s(d(dvt.get("metadata")).get("name")):
        return [cause(REQUIRED, f"'name' field must not be empty for DataVolumeTemplate entry {at}.name.", f"{at}.name")]
    spec = d(dvt.get("spec"))
    pvc, storage = spec.get("pvc"), spec.get("storage")
    if pvc is None and storage is None:
        return [cause(INVALID, "Missing Data volume PVC or Storage", f"{at}.PVC.Storage")]
    if pvc is not None and storage is not None:
        return [cause(INVALID, "Duplicate storage definition, both target storage and target pvc defined",
                      f"{at}.PVC.Storage")]
    claim = d(pvc if pvc is not None else storage)
    external = claim.get("dataSourceRef") is not None or claim.get("dataSource") is not None
    sourced = spec.get("source") is not None or spec.get("sourceRef") is not None
    if external and sourced:
        return [cause(INVALID, "External population is incompatible with Source and SourceRef", f"{at}.source")]
    if not external and not sourced:
        return [cause(INVALID, "Data volume should have either Source, SourceRef, or be externally populated",
                      f"{at}.source.sourceRef")]
    source = spec.get("source")
    if source is not None:
        n = sum(1 for k in _CDI_SOURCES if d(source).get(k) is not None)
        if n == 0:
            return [cause(INVALID, "Missing dataVolume valid source", f"{at}.source")]
        if n > 1:
            return [cause(INVALID, "Multiple dataVolume sources", f"{at}.source")]
    return []


def validate_data_volume_template_namespaces(vm: dict, operation: str, old: dict | None) -> list:
    """The storage admitter: an embedded DataVolume lives in the VM's namespace (on UPDATE only
    when the templates changed)."""
    spec = d(vm.get("spec"))
    dvts = spec.get("dataVolumeTemplates")
    if operation == "UPDATE" and old is not None and d(old.get("spec")).get("dataVolumeTemplates") == dvts:
        return []
    ns = s(d(vm.get("metadata")).get("namespace")) or "default"
    causes = []
    for idx, dvt in enumerate(items(dvts)):
        dv_ns = s(d(dvt.get("metadata")).get("namespace"))
        if dv_ns and dv_ns != ns:
            causes.append(cause(INVALID, f"Embedded DataVolume namespace {dv_ns} differs from VM namespace {ns}",
                                f"spec.dataVolumeTemplates[{idx}]"))
    return causes
