"""Find the instancetype and preference specs a VM's matchers point at (KubeVirt's rules).

Public (stable) functions:

    find_instancetype(vm, index) -> dict | None
    find_preference(vm, index) -> dict | None
        `index` is an `ObjectIndex` of the objects that exist. Returns the normalised spec
        (see engine/spec.py), or None when the VM has no matcher. Errors (KubeVirt's texts):
        `NotFoundError` (`virtualmachineclusterinstancetypes.instancetype.kubevirt.io "x" not found`,
        `controllerrevisions.apps "r" not found`), `UnexpectedKindError`
        (`got unexpected kind in InstancetypeMatcher: <kind as given>`), `DecodeError`
        (a ControllerRevision whose data is not a stored instancetype/preference).
    objects_for_matchers(vm, instancetype, preference) -> list[dict]
        For the conformance adapter's `finder: "real"`: the given specs stored as objects of
        the kind and name the matchers name (namespaced kinds in the VM's namespace). A matcher
        whose kind is unknown stores nothing, so the lookup fails with the unexpected-kind error.

Resolution order (pkg/instancetype/find/spec.go, revision.go; same for preferences):
1. no matcher -> None;
2. `spec.<m>.revisionName` -> that ControllerRevision in the VM's namespace (errors as-is);
   else `status.<m>Ref.controllerRevisionRef.name` -> that ControllerRevision, used only when
   its `instancetype.kubevirt.io/object-name` label equals the matcher name (v1.6+, bug #14595);
3. otherwise the live object by kind, compared case-insensitively, singular or plural;
   empty kind = the cluster kind.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from instancetype.api import kinds as K
from instancetype.engine.object_source import ObjectSource
from instancetype.engine.objects import ObjectIndex
from instancetype.engine.spec import instancetype_spec, is_whole_object, preference_spec
from instancetype.errors import DecodeError, Error, NotFoundError, UnexpectedKindError

_CR = "ControllerRevision"
_CR_RESOURCE = K.BY_KIND[_CR]


class _Side:
    """What differs between the instancetype and the preference lookups."""

    __slots__ = ("matcher_key", "status_key", "matcher_name", "kinds", "accepted", "normalise")

    def __init__(self, matcher_key: str, status_key: str, matcher_name: str, kinds: Mapping[str, str],
                 accepted: tuple[str, ...], normalise: Callable[[Any], dict[str, Any] | None]):
        self.matcher_key = matcher_key
        self.status_key = status_key
        self.matcher_name = matcher_name
        self.kinds = kinds
        self.accepted = accepted
        self.normalise = normalise


_IT = _Side("instancetype", "instancetypeRef", "InstancetypeMatcher", K.INSTANCETYPE_MATCHER_KINDS,
            K.INSTANCETYPE_KINDS, instancetype_spec)
_PREF = _Side("preference", "preferenceRef", "PreferenceMatcher", K.PREFERENCE_MATCHER_KINDS,
              K.PREFERENCE_KINDS, preference_spec)


def vm_namespace(vm: dict[str, Any], index: ObjectIndex | None = None) -> str:
    meta = vm.get("metadata") if isinstance(vm, dict) else None
    ns = meta.get("namespace") if isinstance(meta, dict) else None
    if ns and isinstance(ns, str):
        return ns
    return index.default_namespace if index is not None else "default"


def _matcher(vm: dict[str, Any], side: _Side) -> dict[str, Any] | None:
    m = (vm.get("spec") or {}).get(side.matcher_key)
    if m is None:
        return None
    if not isinstance(m, dict):
        raise DecodeError(f"spec.{side.matcher_key}: must be an object")
    return m


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def find_instancetype(vm: dict[str, Any], index: ObjectIndex) -> dict[str, Any] | None:
    return _find(vm, index, _IT)


def find_preference(vm: dict[str, Any], index: ObjectIndex) -> dict[str, Any] | None:
    return _find(vm, index, _PREF)


def _find(vm: dict[str, Any], index: ObjectIndex, side: _Side) -> dict[str, Any] | None:
    m = _matcher(vm, side)
    if m is None:
        return None
    ns = vm_namespace(vm, index)
    stored = _revision(vm, m, index, ns, side)
    if stored is not None:
        return side.normalise(_spec_from_revision(stored, side))
    kind_given = _str(m.get("kind"))
    kind = side.kinds.get(kind_given.lower())
    if kind is None:
        raise UnexpectedKindError(f"got unexpected kind in {side.matcher_name}: {kind_given}")
    name = _str(m.get("name"))
    obj = index.get(kind, name, ns)
    if obj is None:
        raise NotFoundError(K.BY_KIND[kind].not_found(name))
    return side.normalise(obj)


def _get_revision(index: ObjectIndex, name: str, ns: str) -> Mapping[str, Any]:
    cr = index.get(_CR, name, ns)
    if cr is None:
        raise NotFoundError(_CR_RESOURCE.not_found(name))
    return cr


def _revision(vm: dict[str, Any], m: dict[str, Any], index: ObjectIndex, ns: str,
              side: _Side) -> Mapping[str, Any] | None:
    rev = _str(m.get("revisionName"))
    if rev:
        return _get_revision(index, rev, ns)
    ref = ((vm.get("status") or {}).get(side.status_key)) or {}
    crname = _str(((ref.get("controllerRevisionRef") or {}) if isinstance(ref, dict) else {}).get("name"))
    if not crname:
        return None
    cr = _get_revision(index, crname, ns)
    labels = ((cr.get("metadata") or {}).get("labels")) or {}
    # Only trust a status-referenced revision of the object the matcher names (v1.6+):
    # during a switch of name the status still points at the old object.
    if labels.get(K.LABEL_OBJECT_NAME) != _str(m.get("name")):
        return None
    return cr


def _spec_from_revision(cr: Mapping[str, Any], side: _Side) -> dict[str, Any]:
    """The spec stored in a ControllerRevision (compatibility.GetInstancetypeSpec / GetPreferenceSpec).

    Decoded by engine/revisions.py, the one reader of revision payloads. KubeVirt v1.7+ registers
    only v1beta1 in the decoder (the v1alpha1 SpecRevision wrapper and the v1alpha1/v1alpha2
    conversions were removed), so old payloads fail here as they do in v1.9 (`allow_old=False`);
    upgrading them is the controller's business (revisions.upgraded_revision).
    """
    from instancetype.engine.revisions import object_spec, read_revision_object  # only when pinned

    # Only read: the caller normalises the spec (engine/spec.py builds from its own copy).
    return object_spec(read_revision_object(cr, allow_old=False), side.accepted)


def find_instancetype_or_none(vm: dict[str, Any], index: ObjectIndex) -> dict[str, Any] | None:
    """The instancetype spec, or None when absent or when the lookup fails (the VM webhooks log
    a failed lookup and go on: a VM whose instancetype is missing is admitted)."""
    try:
        return find_instancetype(vm, index)
    except Error:
        return None


def find_preference_or_none(vm: dict[str, Any], index: ObjectIndex) -> dict[str, Any] | None:
    """The preference spec, or None when absent or when the lookup fails (as the instancetype)."""
    try:
        return find_preference(vm, index)
    except Error:
        return None


def objects_for_matchers(vm: dict[str, Any], instancetype: Any, preference: Any) -> list[dict[str, Any]]:
    ns = vm_namespace(vm)
    out = []
    vm_spec = vm.get("spec") if isinstance(vm, dict) else None
    for side, given in ((_IT, instancetype), (_PREF, preference)):
        m = vm_spec.get(side.matcher_key) if isinstance(vm_spec, dict) else None
        if not isinstance(m, dict) or given is None:
            continue  # nothing to store; expand reports a badly typed matcher itself
        kind = side.kinds.get(_str(m.get("kind")).lower())
        if kind is None:
            continue
        spec = given.get("spec") if is_whole_object(given) else given
        meta = {"name": _str(m.get("name"))}
        if K.BY_KIND[kind].namespaced:
            meta["namespace"] = ns
        out.append({"apiVersion": K.API_VERSION, "kind": kind, "metadata": meta, "spec": spec or {}})
    return out


def index_for(vm: dict[str, Any], objects: Iterable[dict[str, Any]] | ObjectSource = ()) -> ObjectIndex:
    """An ObjectIndex whose default namespace is the VM's."""
    return ObjectIndex(objects if isinstance(objects, ObjectSource) else (objects or ()),
                       default_namespace=vm_namespace(vm))
