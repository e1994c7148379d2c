"""Shared ControllerRevisions: one per distinct instancetype/preference spec, named by content. Pure.

KubeVirt pins every VM to revisions of its own (`<vm>-<object>-<uid>-<generation>`, owned by the
VM), so N VMs on one instancetype and preference store 2N revisions holding two distinct specs
(seed 000's "Reducing the number of created ControllerRevisions"). With the cluster's opt-in
(`instancetype.kubevirt.io/shared-revisions: "true"` on the KubeVirt object) a VM is pinned to a
revision named by what it holds instead:

    <object name>-<kind short>-<16 hex digits of sha256(canonical JSON of {kind, name, spec})>

e.g. `u1.medium-vmcit-3f0c9a1e2b7d4c55`; kind short is `vmit`, `vmcit`, `vmp` or `vmcp`
(VirtualMachine[Cluster]Instancetype / VirtualMachine[Cluster]Preference). Canonical JSON is the
v1beta1 spec with sorted keys and no spaces. The name stays within a DNS subdomain's 253
characters by shortening the object-name part (never the hash). The revision lives in the VM's
namespace, carries the five `instancetype.kubevirt.io/object-*` labels of the object that first
captured it plus `instancetype.kubevirt.io/shared-revision: "true"`, and has no ownerReferences:
VMs release it, and the controller deletes it when no VM's `revisionName` names it any more
(controller/shared_revisions.py). A spec change gives a new name, so a shared revision is never
rewritten: the VMs pinned to it keep their spec.

Old payloads (a v1alpha1 SpecRevision, a v1alpha object, a revision without the object-version
label) found under a shared name are never rewritten either (a revision's data is immutable on an
API server): `upgraded_shared_revision` is the shared revision of the decoded object, named by its
content as usual. When that is the old revision's own name (the old payload holds exactly the
spec its name hashes), the name's hash is taken over the content plus `upgradedFrom: <old name>`
(`upgraded_shared_name`), so the new revision never has the old one's name and every VM pinned to
the old one, and every new pin finding it, converges on the same new revision.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from instancetype.api import kinds as K
from instancetype.api.names import SUBDOMAIN_MAX_LEN

from .revisions import (
    REVISION_API_VERSION,
    REVISION_KIND,
    object_kind,
    recovered_object,
    revision_labels,
    stored_object,
)

ANNOTATION_SHARED_REVISIONS = f"{K.GROUP}/shared-revisions"   # on the KubeVirt object: the opt-in
LABEL_SHARED_REVISION = f"{K.GROUP}/shared-revision"          # on a shared revision: "true"
HASH_HEX = 16
KIND_SHORT = {
    K.INSTANCETYPE: "vmit", K.CLUSTER_INSTANCETYPE: "vmcit",
    K.PREFERENCE: "vmp", K.CLUSTER_PREFERENCE: "vmcp",
}
_SHARED_NAME = re.compile(rf"-(?:{'|'.join(KIND_SHORT.values())})-[0-9a-f]{{{HASH_HEX}}}$")
_NOT_NAME_CHARS = re.compile(r"[^a-z0-9.-]+")


def enabled(kubevirt: Mapping[str, Any] | None) -> bool:
    """Whether the KubeVirt object opts in (the annotation's value is exactly "true")."""
    meta = kubevirt.get("metadata") if isinstance(kubevirt, Mapping) else None
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    return isinstance(annotations, Mapping) and annotations.get(ANNOTATION_SHARED_REVISIONS) == "true"


def content_hash(data: Mapping[str, Any], upgraded_from: str | None = None) -> str:
    """The hex digest naming a revision's `data` (a stored v1beta1 object): kind, name and spec
    (and, for the replacement of an old payload of the same name, that name)."""
    meta = got if isinstance(got := data.get("metadata"), Mapping) else {}
    payload = {"kind": data.get("kind"), "name": meta.get("name") or "", "spec": data.get("spec") or {}}
    if upgraded_from:
        payload["upgradedFrom"] = upgraded_from
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_HEX]


def shared_name(data: Mapping[str, Any], upgraded_from: str | None = None) -> str:
    """`<object name>-<kind short>-<hash>` for a stored object, at most 253 characters."""
    kind = data["kind"]
    meta = got if isinstance(got := data.get("metadata"), Mapping) else {}
    suffix = f"-{KIND_SHORT[kind]}-{content_hash(data, upgraded_from)}"
    # Object names are already DNS subdomains; the cleaning only guards the revision's own name.
    prefix = _NOT_NAME_CHARS.sub("-", str(meta.get("name") or "").lower())
    prefix = prefix[: SUBDOMAIN_MAX_LEN - len(suffix)].strip(".-")
    return (prefix + suffix) if prefix else suffix[1:]


def is_shared_name(name: Any) -> bool:
    """Whether a revision name has the shared form (decides without reading the revision)."""
    return isinstance(name, str) and bool(_SHARED_NAME.search(name))


def is_shared(cr: Mapping[str, Any]) -> bool:
    meta = cr.get("metadata") if isinstance(cr, Mapping) else None
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return isinstance(labels, Mapping) and labels.get(LABEL_SHARED_REVISION) == "true"


def build_shared_revision(obj: Mapping[str, Any], namespace: str, *, kind: str | None = None) -> dict[str, Any]:
    """The shared ControllerRevision holding `obj` for the VMs of `namespace`."""
    data = stored_object(obj, object_kind(obj, kind))
    labels = {**revision_labels(data), LABEL_SHARED_REVISION: "true"}
    meta = {"name": shared_name(data), "namespace": namespace, "labels": labels}
    return {"apiVersion": REVISION_API_VERSION, "kind": REVISION_KIND, "metadata": meta, "data": data, "revision": 0}


def upgraded_shared_name(built: Mapping[str, Any], old_name: str) -> str:
    """The name of the shared revision replacing an old payload named `old_name`, `built` being
    the shared revision of its decoded object: `built`'s own name unless it is `old_name`."""
    name = built["metadata"]["name"]
    return name if name != old_name else shared_name(built["data"], upgraded_from=old_name)


def upgraded_shared_revision(cr: Mapping[str, Any], vm: Mapping[str, Any] | None, namespace: str) -> dict[str, Any]:
    """The shared revision replacing the old-payload shared revision `cr` (see the module's text)."""
    built = build_shared_revision(recovered_object(cr, vm), namespace)
    old_name = str((cr.get("metadata") or {}).get("name") or "")
    built["metadata"]["name"] = upgraded_shared_name(built, old_name)
    return built


def same_stored_spec(built: Mapping[str, Any], existing: Mapping[str, Any]) -> bool:
    """The cheap check before `revisions.same_content`: the same kind and spec as stored JSON."""
    a, b = built.get("data"), existing.get("data")
    return isinstance(a, Mapping) and isinstance(b, Mapping) and a.get("kind") == b.get("kind") \
        and a.get("apiVersion") == b.get("apiVersion") and a.get("spec") == b.get("spec")


def pinned_names(vm: Mapping[str, Any]) -> set[str]:
    """The revision names a VM's spec pins (`spec.instancetype/preference.revisionName`)."""
    spec = vm.get("spec") if isinstance(vm, Mapping) else None
    out = set()
    for side in ("instancetype", "preference"):
        m = spec.get(side) if isinstance(spec, Mapping) else None
        name = m.get("revisionName") if isinstance(m, Mapping) else None
        if isinstance(name, str) and name:
            out.add(name)
    return out


def referenced_names(vm: Mapping[str, Any]) -> set[str]:
    """What a VM held: its spec pins and its status refs (a status ref outlives a spec edit until
    the controller syncs it)."""
    out = pinned_names(vm)
    status = vm.get("status") if isinstance(vm, Mapping) else None
    for key in ("instancetypeRef", "preferenceRef"):
        ref = status.get(key) if isinstance(status, Mapping) else None
        crr = ref.get("controllerRevisionRef") if isinstance(ref, Mapping) else None
        name = crr.get("name") if isinstance(crr, Mapping) else None
        if isinstance(name, str) and name:
            out.add(name)
    return out
