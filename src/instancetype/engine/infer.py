"""Inference of the instancetype and preference matchers from a VM's volumes.

    infer(vm, objects) -> InferResult(instancetype, preference, vm)

KubeVirt's `pkg/instancetype/infer` (Handler.Instancetype, Handler.Preference):
a matcher with `inferFromVolume` is replaced by `{name, kind}` read from the
`instancetype.kubevirt.io/default-instancetype(-kind)` (or `default-preference(-kind)`)
labels of the object behind the named volume. The chain followed:

    volume.persistentVolumeClaim -> PVC labels
    volume.dataVolume -> dataVolumeTemplate of that name (its spec only)
                      -> else DataVolume (labels, then its spec); NotFound -> PVC of that name
    DataVolume spec   -> source.pvc (PVC) | source.snapshot (VolumeSnapshot)
                      | sourceRef kind DataSource -> labels, then source.pvc | source.snapshot

Failures are `InferError`; `.ignorable` says whether the matcher's
`inferFromVolumeFailurePolicy: Ignore` covers it (then the matcher is cleared
instead). A missing volume or a missing object is never ignorable. Instancetype
first: its failure stops before the preference is looked at.

`objects` are the Kubernetes objects that exist; namespaced objects without a
namespace live in the VM's namespace. The namespace a DataVolume/DataSource source (or a
sourceRef's explicit `namespace`) names is used as given: an empty one finds nothing. The VM is not mutated; the answer's VM is
a normalized copy.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from instancetype.api.kinds import (
    BY_KIND,
    LABEL_DEFAULT_INSTANCETYPE,
    LABEL_DEFAULT_INSTANCETYPE_KIND,
    LABEL_DEFAULT_PREFERENCE,
    LABEL_DEFAULT_PREFERENCE_KIND,
)
from instancetype.engine import object_input, vm_decode, vm_fields
from instancetype.engine.guard import public
from instancetype.engine.objects import ObjectIndex
from instancetype.engine.results import InferResult
from instancetype.errors import InferError

IGNORE = "Ignore"

_PVC = "PersistentVolumeClaim"
_DV = "DataVolume"
_DS = "DataSource"
_SNAP = "VolumeSnapshot"


def _labels(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return labels if isinstance(labels, dict) else {}


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


class _Lookup:
    """One label pair followed through the objects (KubeVirt's infer Handler)."""

    __slots__ = ("index", "name_label", "kind_label", "namespace")

    def __init__(self, index: ObjectIndex, name_label: str, kind_label: str):
        self.index = index
        self.name_label = name_label
        self.kind_label = kind_label
        self.namespace = index.default_namespace

    def _get(self, kind: str, name: str, namespace: str | None) -> Mapping[str, Any]:
        # A namespace given as "" (a DataVolume/DataSource source without one, or an empty
        # sourceRef.namespace) is asked for as is: KubeVirt's client GETs in namespace "",
        # where no namespaced object lives, so the lookup is NotFound (volume.go fromPVC/
        # fromDataSource never default it to the VM's namespace).
        obj = self.index.get(kind, name, namespace) if namespace else None
        if obj is None:
            raise InferError(BY_KIND[kind].not_found(name), ignorable=False)
        return obj

    def from_labels(self, labels: dict[str, Any]) -> tuple[str, str]:
        if self.name_label not in labels:
            raise InferError(f"unable to find required {self.name_label} label on the volume", ignorable=True)
        return _str(labels[self.name_label]), _str(labels.get(self.kind_label))

    def from_pvc(self, name: str, namespace: str | None) -> tuple[str, str]:
        return self.from_labels(_labels(self._get(_PVC, name, namespace)))

    def from_snapshot(self, name: str, namespace: str | None) -> tuple[str, str]:
        return self.from_labels(_labels(self._get(_SNAP, name, namespace)))

    def from_volumes(self, vm_spec: dict[str, Any], volume_name: str) -> tuple[str, str]:
        for volume in vm_fields.volumes(vm_spec):
            if volume.get("name") != volume_name:
                continue
            pvc = volume.get("persistentVolumeClaim")
            if isinstance(pvc, dict):
                return self.from_pvc(_str(pvc.get("claimName")), self.namespace)
            dv = volume.get("dataVolume")
            if isinstance(dv, dict):
                return self.from_data_volume(vm_spec, _str(dv.get("name")))
            raise InferError(f"unable to infer defaults from volume {volume_name} as type is not supported",
                             ignorable=True)
        raise InferError(f"unable to find volume {volume_name} to infer defaults", ignorable=False)

    def from_data_volume(self, vm_spec: dict[str, Any], dv_name: str) -> tuple[str, str]:
        for dvt in vm_fields.data_volume_templates(vm_spec):
            if _str(_dict(dvt.get("metadata")).get("name")) == dv_name:
                return self.from_data_volume_spec(_dict(dvt.get("spec")))
        dv = self.index.get(_DV, dv_name, self.namespace)
        if dv is None:
            # KubeVirt's fromDataVolume: a garbage-collected DataVolume leaves its PVC behind.
            return self.from_pvc(dv_name, self.namespace)
        try:
            return self.from_labels(_labels(dv))
        except InferError:
            return self.from_data_volume_spec(_dict(dv.get("spec")))

    def from_pvc_or_snapshot(self, source: dict[str, Any]) -> tuple[str, str] | None:
        """A DataVolume's or DataSource's `source.pvc`, else `source.snapshot`; None for neither."""
        pvc = source.get("pvc")
        if isinstance(pvc, dict):
            # The source's namespace is used as given (KubeVirt does not default it).
            return self.from_pvc(_str(pvc.get("name")), _str(pvc.get("namespace")))
        snap = source.get("snapshot")
        if isinstance(snap, dict):
            return self.from_snapshot(_str(snap.get("name")), _str(snap.get("namespace")))
        return None

    def from_data_volume_spec(self, spec: dict[str, Any]) -> tuple[str, str]:
        found = self.from_pvc_or_snapshot(_dict(spec.get("source")))
        if found is not None:
            return found
        ref = spec.get("sourceRef")
        if isinstance(ref, dict):
            return self.from_source_ref(ref)
        raise InferError("unable to infer defaults from DataVolumeSpec as DataVolumeSource is not supported",
                         ignorable=True)

    def from_source_ref(self, ref: dict[str, Any]) -> tuple[str, str]:
        kind = _str(ref.get("kind"))
        if kind != _DS:
            raise InferError(f"unable to infer defaults from DataVolumeSourceRef as Kind {kind} is not supported",
                             ignorable=True)
        namespace = ref.get("namespace")
        namespace = _str(namespace) if namespace is not None else self.namespace
        ds = self._get(_DS, _str(ref.get("name")), namespace)
        try:
            return self.from_labels(_labels(ds))
        except InferError:
            pass
        found = self.from_pvc_or_snapshot(_dict(_dict(ds.get("spec")).get("source")))
        if found is not None:
            return found
        raise InferError("unable to infer defaults from DataSource that doesn't provide "
                         "DataVolumeSourcePVC or DataVolumeSourceSnapshot", ignorable=True)


def _infer_one(vm: dict[str, Any], index: ObjectIndex, key: str, name_label: str, kind_label: str) -> None:
    """Infer `spec.<key>` of `vm` in place (KubeVirt's Handler.Instancetype / Handler.Preference)."""
    spec = vm["spec"]
    matcher = spec.get(key)
    if not isinstance(matcher, dict) or not matcher.get("inferFromVolume"):
        return
    volume = matcher["inferFromVolume"]
    if not isinstance(volume, str):
        raise InferError(f"spec.{key}.inferFromVolume: must be a string", ignorable=False)
    ignore = matcher.get("inferFromVolumeFailurePolicy") == IGNORE
    try:
        name, kind = _Lookup(index, name_label, kind_label).from_volumes(spec, volume)
    except InferError as e:
        if e.ignorable and ignore:
            spec.pop(key, None)
            return
        raise
    if ignore and key == "instancetype":
        # With Ignore, a successful instancetype inference drops the template's memory so a
        # client-side fallback (virtctl's 512Mi) cannot conflict with the instancetype.
        domain = vm_fields.domain(spec)
        if domain is not None:
            domain.pop("memory", None)
    new = {"name": name} if name else {}
    if kind:
        new["kind"] = kind
    spec[key] = new


def infer_in_place(vm: dict[str, Any], index: ObjectIndex) -> None:
    """Infer both matchers of `vm` (a private copy, already shape-checked), instancetype first."""
    _infer_one(vm, index, "instancetype", LABEL_DEFAULT_INSTANCETYPE, LABEL_DEFAULT_INSTANCETYPE_KIND)
    _infer_one(vm, index, "preference", LABEL_DEFAULT_PREFERENCE, LABEL_DEFAULT_PREFERENCE_KIND)


@public("infer from volumes")
def infer(vm: Mapping[str, Any], objects: Iterable[Mapping[str, Any]] = ()) -> InferResult:
    """Infer `spec.instancetype` and `spec.preference` from the volumes they name.

    Returns the new matchers (None when absent or cleared) and the VM with them
    written in. Raises `InferError` (with `.ignorable`) when inference fails.
    """
    out = vm_decode.load_vm(vm)
    index = object_input.object_index(objects, vm_fields.namespace(out))
    infer_in_place(out, index)
    out = vm_fields.normalize_vm(out)
    spec = out["spec"]
    return InferResult(instancetype=spec.get("instancetype"), preference=spec.get("preference"), vm=out)
