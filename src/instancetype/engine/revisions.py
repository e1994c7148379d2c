"""ControllerRevisions of instancetypes and preferences: names, content, compare, upgrade. Pure.

A VM's capture of an instancetype or preference is an `apps/v1 ControllerRevision` in the VM's
namespace, owned by the VM, whose `data` is the complete v1beta1 object (metadata labels,
annotations, finalizers, ownerReferences and managedFields cleared) and whose five
`instancetype.kubevirt.io/object-*` labels say what it holds
(pkg/instancetype/revision/store.go CreateControllerRevision).

Names: this project uses the seeds' form `<vm>-<object name>-<object uid>-<object generation>`
(`revision_name`, KubeVirt <= v1.2); KubeVirt v1.3+ inserts the object version
(`kubevirt_revision_name`).

Old payloads (KubeVirt v1.3-v1.6 pkg/instancetype/compatibility): a v1alpha1 "SpecRevision"
`{apiVersion, spec: <base64 JSON spec>}` or a whole v1alpha1/v1alpha2 object decode into the
v1beta1 object. A revision's `data` is immutable on an API server (apps validation's
ValidateControllerRevisionUpdate), so `upgraded_revision` builds a brand-new revision holding the
decoded object (pkg/instancetype/upgrade), named by `upgraded_revision_name`; the controller
re-points the VM to it and deletes the old one.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from instancetype.api import kinds as K
from instancetype.api import v1alpha
from instancetype.api.gotext import json_type
from instancetype.engine.jsondata import copy_json
from instancetype.errors import DecodeError, Error, UnexpectedKindError

REVISION_API_VERSION = "apps/v1"
REVISION_KIND = "ControllerRevision"
_INSTANCETYPE_GROUP_OLD = {f"{K.GROUP}/{v}" for v in K.OLD_VERSIONS}
_STRIPPED_META = ("labels", "annotations", "finalizers", "ownerReferences", "managedFields")
_KIND_BY_LOWER = {k.lower(): k for k in K.ALL_TYPE_KINDS}
_UID_GEN = re.compile(r"-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})-(\d+)$")

# Placeholder names KubeVirt gave objects decoded from a v1alpha1 SpecRevision (no uid, generation 0).
OLD_INSTANCETYPE_NAME = "old-version-of-instancetype-object"
OLD_PREFERENCE_NAME = "old-version-of-preference-object"

# --- names ---------------------------------------------------------------------------------------

def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    m = obj.get("metadata") if (type(obj) is dict or isinstance(obj, Mapping)) else None
    return m if (type(m) is dict or isinstance(m, Mapping)) else {}


def _generation(obj: Mapping[str, Any]) -> int:
    g = _meta(obj).get("generation")
    return int(g) if isinstance(g, int) or (isinstance(g, str) and g.isdigit()) else 0


def revision_name(vm_name: str, obj: Mapping[str, Any]) -> str:
    """The seeds' form: `<vm>-<object name>-<object uid>-<object generation>` (KubeVirt <= v1.2)."""
    m = _meta(obj)
    return f"{vm_name}-{m.get('name') or ''}-{m.get('uid') or ''}-{_generation(obj)}"


def kubevirt_revision_name(vm_name: str, obj: Mapping[str, Any], version: str = K.VERSION) -> str:
    """KubeVirt v1.3+'s form `<vm>-<name>-<version>-<uid>-<generation>` (revision.GenerateName)."""
    m = _meta(obj)
    return f"{vm_name}-{m.get('name') or ''}-{version}-{m.get('uid') or ''}-{_generation(obj)}"


def parse_revision_name(name: str, vm_name: str) -> tuple[str, str, int] | None:
    """(object name, uid, generation) from a name in either form, or None if it is neither."""
    m = _UID_GEN.search(name or "")
    if not m or not name.startswith(f"{vm_name}-"):
        return None
    middle = name[len(vm_name) + 1:m.start()]
    for version in (K.VERSION, *K.OLD_VERSIONS):
        if middle.endswith(f"-{version}"):
            middle = middle[: -len(version) - 1]
            break
    return (middle, m.group(1), int(m.group(2))) if middle else None


# --- building ------------------------------------------------------------------------------------

def object_kind(obj: Mapping[str, Any], kind: str | None = None) -> str:
    """The CamelCase kind of an instancetype/preference (any case, singular or plural, as matchers
    spell it): the scheme decides it in KubeVirt, not the caller's TypeMeta."""
    given = kind if kind is not None else (obj.get("kind") if (type(obj) is dict or isinstance(obj, Mapping)) else None)
    word = str(given or "").lower()
    found = _KIND_BY_LOWER.get(word) or _KIND_BY_LOWER.get(word[:-1] if word.endswith("s") else "")
    if found is None:
        raise UnexpectedKindError(f"unexpected type: {given}")
    return found


def stored_object(obj: Mapping[str, Any], kind: str | None = None, *, handed_over: bool = False) -> dict[str, Any]:
    """`obj` as a revision's `data` holds it: v1beta1, CamelCase kind, metadata stripped.
    `handed_over`: `obj` is the caller's to give up (a fresh read it drops): the result takes its
    parts instead of copies (its top level and metadata are new dicts either way)."""
    k = object_kind(obj, kind)
    out = dict(obj) if handed_over and type(obj) is dict else copy_json(dict(obj))
    if out.get("apiVersion") in _INSTANCETYPE_GROUP_OLD:
        out = v1alpha.convert_to_v1beta1(out)[0]
    out["apiVersion"] = K.API_VERSION
    out["kind"] = k
    meta = dict(out.get("metadata") or {})
    for key in _STRIPPED_META:
        meta.pop(key, None)
    if not K.BY_KIND[k].namespaced:
        meta.pop("namespace", None)
    out["metadata"] = meta
    return out


def revision_labels(obj: Mapping[str, Any], kind: str | None = None) -> dict[str, str]:
    m = _meta(obj)
    return {
        K.LABEL_OBJECT_GENERATION: str(_generation(obj)),
        K.LABEL_OBJECT_KIND: object_kind(obj, kind),
        K.LABEL_OBJECT_NAME: str(m.get("name") or ""),
        K.LABEL_OBJECT_UID: str(m.get("uid") or ""),
        K.LABEL_OBJECT_VERSION: K.VERSION,
    }


def owner_reference(vm: Mapping[str, Any]) -> dict[str, Any]:
    """The controller reference to the VM (metav1.NewControllerRef)."""
    m = _meta(vm)
    return {"apiVersion": K.KUBEVIRT_API_VERSION, "kind": "VirtualMachine", "name": m.get("name") or "",
            "uid": m.get("uid") or "", "controller": True, "blockOwnerDeletion": True}


def build_revision(vm: Mapping[str, Any], obj: Mapping[str, Any], *, kind: str | None = None, name: str | None = None,
                   handed_over: bool = False) -> dict[str, Any]:
    """The ControllerRevision capturing `obj` for `vm` (named `revision_name` unless `name` is given).
    `handed_over`: as `stored_object`'s (the controller's pin of an object it just read)."""
    data = stored_object(obj, kind, handed_over=handed_over)
    meta: dict[str, Any] = {"name": name or revision_name(_meta(vm).get("name") or "", data)}
    if _meta(vm).get("namespace"):
        meta["namespace"] = _meta(vm)["namespace"]
    meta["ownerReferences"] = [owner_reference(vm)]
    meta["labels"] = revision_labels(data)
    return {"apiVersion": REVISION_API_VERSION, "kind": REVISION_KIND, "metadata": meta,
            "data": data, "revision": 0}


# --- reading -------------------------------------------------------------------------------------

def _go_type(kind: str, api_version: str) -> str:
    return f"*{api_version.rpartition('/')[2] or 'v1'}.{kind}"


def _raw(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))


def _spec_revision(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The v1beta1 object held by a v1alpha1 SpecRevision `{apiVersion, spec: <base64>}`, or None
    when `data` does not strictly have that shape, as a preference spec (tried first) or an
    instancetype spec (compatibility.decodeSpecRevision): KubeVirt then decodes it as an object."""
    if not set(data) <= {"apiVersion", "spec"} or not isinstance(data.get("spec"), str) \
            or not isinstance(data.get("apiVersion", ""), str):
        return None
    try:
        return v1alpha.convert_revision_data(dict(data))
    except Error:
        return None


def revision_object(cr: Mapping[str, Any], *, allow_old: bool = True) -> dict[str, Any]:
    """The v1beta1 instancetype/preference a revision holds (compatibility.Decode).

    `data` may be the object or its JSON text. Old payloads are converted unless `allow_old` is
    False (KubeVirt v1.7+, which no longer registers the v1alpha versions)."""
    return _decoded(cr, allow_old, read_only=False)


def read_revision_object(cr: Mapping[str, Any], *, allow_old: bool = True) -> Mapping[str, Any]:
    """`revision_object` for a caller that only reads the answer (and does not keep it past a
    change of `cr`): a current payload is `cr`'s own `data`, not a copy."""
    return _decoded(cr, allow_old, read_only=True)


def _decoded(cr: Mapping[str, Any], allow_old: bool, read_only: bool) -> dict[str, Any]:
    data = cr.get("data") if (type(cr) is dict or isinstance(cr, Mapping)) else None
    if data is None:
        raise DecodeError("unexpected type in ControllerRevision: <nil>")
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except ValueError as e:
            raise DecodeError(f"failed to decode object in ControllerRevision: {e}") from None
    if not (type(data) is dict or isinstance(data, Mapping)):
        go = json_type(data)
        raise DecodeError("failed to decode object in ControllerRevision: couldn't get version/kind; json parse "
                          f"error: json: cannot unmarshal {go} into Go value of type struct {{ APIVersion string "
                          '"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }')
    if allow_old:
        old = _spec_revision(data)
        if old is not None:
            return old
    kind, api_version = data.get("kind"), data.get("apiVersion")
    if not isinstance(kind, str) or not kind:
        raise DecodeError(f"failed to decode object in ControllerRevision: Object 'Kind' is missing in '{_raw(data)}'")
    api_version = api_version if isinstance(api_version, str) else ""
    if kind in K.ALL_TYPE_KINDS and api_version == K.API_VERSION:
        return data if read_only and type(data) is dict else copy_json(dict(data))
    if kind in K.ALL_TYPE_KINDS and api_version in _INSTANCETYPE_GROUP_OLD and allow_old:
        # The generated v1alpha->v1beta1 conversion (fields v1beta1 added dropped, value fields
        # turned into always-set pointers), as KubeVirt v1.3-v1.6 applied to stored payloads.
        return v1alpha.convert_revision_data(dict(data))
    res = K.BY_KIND.get(kind)
    if res is not None and res.api_version == api_version and res.group.endswith("kubevirt.io") \
            and res.group != "cdi.kubevirt.io":
        # Registered in KubeVirt's client scheme but not an instancetype or preference.
        raise DecodeError(f"unexpected type in ControllerRevision: {_go_type(kind, api_version)}")
    raise DecodeError(f'failed to decode object in ControllerRevision: no kind "{kind}" is registered for '
                      f'version "{api_version}" in scheme "pkg/runtime/scheme.go:100"')


def revision_spec(cr: Mapping[str, Any], accepted: tuple[str, ...] = K.ALL_TYPE_KINDS) -> dict[str, Any]:
    """The spec a revision holds, when its object is one of the `accepted` kinds
    (compatibility.GetInstancetypeSpec / GetPreferenceSpec)."""
    return object_spec(revision_object(cr), accepted)


def object_spec(obj: Mapping[str, Any], accepted: tuple[str, ...] = K.ALL_TYPE_KINDS) -> dict[str, Any]:
    """`revision_spec` of the object `revision_object` decoded (taken as it is, not copied again)."""
    if obj["kind"] not in accepted:
        raise DecodeError(f"unexpected type in ControllerRevision: {_go_type(obj['kind'], obj['apiVersion'])}")
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _typed_spec(obj: Mapping[str, Any]) -> Any:
    """The spec as Go would hold it (pointers, zero values, canonical quantities), for comparing."""
    from instancetype.api import v1beta1

    spec = obj.get("spec")
    if obj["kind"] in K.INSTANCETYPE_KINDS:
        return v1beta1.to_dict(v1beta1.decode_instancetype_spec(spec))
    return v1beta1.to_dict(v1beta1.decode_preference_spec(spec))


def _drop_empty_lists(v: Any) -> Any:
    # equality.Semantic.DeepEqual holds a nil slice equal to an empty one.
    if isinstance(v, dict):
        return {k: _drop_empty_lists(x) for k, x in v.items() if x != []}
    if isinstance(v, list):
        return [_drop_empty_lists(x) for x in v]
    return v


def same_content(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Do two revisions hold the same spec? Metadata (names, uid, labels, resourceVersion) is
    ignored; specs compare as Go values (revision.Compare)."""
    oa, ob = revision_object(a), revision_object(b)
    if (oa["kind"] in K.INSTANCETYPE_KINDS) != (ob["kind"] in K.INSTANCETYPE_KINDS):
        return False
    return bool(_drop_empty_lists(_typed_spec(oa)) == _drop_empty_lists(_typed_spec(ob)))


def check_existing(built: Mapping[str, Any], existing: Mapping[str, Any]) -> dict[str, Any]:
    """The existing revision when it holds what `built` would (reuse it), else KubeVirt's error."""
    if not same_content(built, existing):
        raise Error(f"found existing ControllerRevision with unexpected data: {_meta(built).get('name') or ''}",
                    reason="FailedCreate")
    return copy_json(dict(existing))


# --- upgrade -------------------------------------------------------------------------------------

def needs_upgrade(cr: Mapping[str, Any]) -> bool:
    """Version detection is by label only: anything but object-version v1beta1 is upgraded
    (pkg/instancetype/upgrade), even a v1beta1 payload without labels."""
    labels = _meta(cr).get("labels") or {}
    return labels.get(K.LABEL_OBJECT_VERSION) != K.VERSION


def _recovered_metadata(cr: Mapping[str, Any], obj: dict[str, Any], vm: Mapping[str, Any] | None) -> dict[str, Any]:
    """A SpecRevision kept no metadata; its revision name (`<vm>-<name>-<uid>-<gen>`) and the VM's
    matcher still say which object it captured, so the upgraded object carries them."""
    meta = dict(obj.get("metadata") or {})
    if meta.get("name") not in (OLD_INSTANCETYPE_NAME, OLD_PREFERENCE_NAME):
        return obj
    vm_name = _meta(vm).get("name") if vm else None
    owners = [r for r in _meta(cr).get("ownerReferences") or () if isinstance(r, Mapping)
              and r.get("kind") == "VirtualMachine"]
    vm_name = vm_name or (owners[0].get("name") if owners else None)
    parsed = parse_revision_name(_meta(cr).get("name") or "", vm_name) if vm_name else None
    side = "preference" if obj["kind"] in K.PREFERENCE_KINDS else "instancetype"
    matcher = ((vm or {}).get("spec") or {}).get(side) if vm else None
    if isinstance(matcher, Mapping):
        table = K.PREFERENCE_MATCHER_KINDS if side == "preference" else K.INSTANCETYPE_MATCHER_KINDS
        kind = table.get(str(matcher.get("kind") or "").lower())
        if kind:
            obj["kind"] = kind
    if parsed:
        meta["name"], meta["uid"], meta["generation"] = parsed
    elif isinstance(matcher, Mapping) and matcher.get("name"):
        meta["name"] = matcher["name"]
    if K.BY_KIND[obj["kind"]].namespaced and _meta(cr).get("namespace"):
        meta["namespace"] = _meta(cr)["namespace"]
    obj["metadata"] = meta
    return obj


def recovered_object(cr: Mapping[str, Any], vm: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The v1beta1 object an old-payload revision holds, with the name, uid and generation a
    v1alpha1 SpecRevision lost recovered from the revision's name and `vm`'s matcher when they can."""
    return _recovered_metadata(cr, revision_object(cr), vm)


def _owner_vm(cr: Mapping[str, Any]) -> dict[str, Any]:
    """The VM a revision's controller ownerReference names (name, uid, namespace), or {}."""
    for ref in _meta(cr).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("kind") == "VirtualMachine":
            meta = {"name": ref.get("name") or "", "uid": ref.get("uid") or ""}
            if _meta(cr).get("namespace"):
                meta["namespace"] = _meta(cr)["namespace"]
            return {"metadata": meta}
    return {}


def upgraded_revision_name(old_name: str, vm_name: str, data: Mapping[str, Any]) -> str:
    """The name of the revision replacing `old_name`: KubeVirt's upgrade builds it with the normal
    rule of its release, `<vm>-<object>-v1beta1-<uid>-<generation>` (revision.GenerateName), which
    differs from the seeds' form `<vm>-<object>-<uid>-<generation>` that old revisions carry. When
    the old revision already has that name (an unlabelled revision in KubeVirt's form), the seeds'
    form is used: the two forms never coincide, so the new name is never the old one."""
    name = kubevirt_revision_name(vm_name, data)
    return name if name != old_name else revision_name(vm_name, data)


def upgraded_revision(cr: Mapping[str, Any], vm: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The brand-new revision replacing the old-payload `cr` for `vm` (pkg/instancetype/upgrade):
    the decoded object as v1beta1 data, the five labels, owned by the VM (`vm`, else the VM that
    owns `cr`), named `upgraded_revision_name`. `cr` itself is left as it is."""
    owner = vm if isinstance(vm, Mapping) and _meta(vm).get("name") else _owner_vm(cr)
    data = stored_object(recovered_object(cr, vm))
    name = upgraded_revision_name(_meta(cr).get("name") or "", _meta(owner).get("name") or "", data)
    out = build_revision(owner, data, name=name)
    if "namespace" not in out["metadata"] and _meta(cr).get("namespace"):
        out["metadata"]["namespace"] = _meta(cr)["namespace"]
    if not _meta(owner).get("uid"):
        del out["metadata"]["ownerReferences"]      # no VM known: nothing to own it
    return out
