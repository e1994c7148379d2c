"""The spec a VMI was started with, and the VM's generations, as KubeVirt v1.9 keeps them
(pkg/virt-controller/watch/vm/vm.go).

* At every start (`createVMRevision`) the VM's spec, its matchers' `revisionName`s filled in from
  the status refs (`patchVMRevision`), is stored in a ControllerRevision
  `revision-start-vm-<vm uid>-<generation>` owned by the VM (older ones of the VM deleted), and
  named in the VMI's `status.virtualMachineRevisionName`: restart-required compares against it.
* The VMI carries the VM generation it reflects in its `kubevirt.io/vm-generation` annotation,
  bumped (`conditionallyBumpGenerationAnnotationOnVmi`) only while the VM's template still equals
  the one the VMI was started from: a run strategy change bumps it, a template change does not.
* `status.desiredGeneration` is `metadata.generation`; `status.observedGeneration` is the VMI's
  annotation (`syncGenerationInfo`; a VMI without one is back-filled from the start revision's
  name); with no VMI both are left as they are.
"""
from __future__ import annotations

import logging

from instancetype.engine.revisions import owner_reference
from instancetype.engine.vmi import VM_GENERATION_ANNOTATION
from instancetype.store.base import AlreadyExists, NotFound, Store

from .. import revisions
from .state import VMSync, name_of

log = logging.getLogger("instancetype.controller")

PREFIX = "revision-start-vm-"
# Our own label on the start revisions, so that a start finds the VM's older ones without reading
# every revision of the namespace (KubeVirt indexes them by owner instead).
START_LABEL = "instancetype.kubevirt.io/vm-start-revision"


def revision_name(uid: str, generation: int) -> str:
    return f"{PREFIX}{uid}-{generation}"


def is_start_revision(cr: dict) -> bool:
    return str((cr.get("metadata") or {}).get("name") or "").startswith(PREFIX)


def revision_spec(vm: dict) -> dict:
    """patchVMRevision: the VM's spec with the pinned revisions named in its matchers."""
    spec = dict(vm.get("spec") or {})
    status = vm.get("status") or {}
    for side, ref_key, *_ in revisions.SIDES:
        ref = ((status.get(ref_key) or {}).get("controllerRevisionRef") or {}).get("name")
        if isinstance(spec.get(side), dict) and ref:
            spec[side] = {**spec[side], "revisionName": ref}
    return spec


def create_start_revision(store: Store, vm: dict) -> tuple[str, dict | None]:
    """createVMRevision: the revision of this generation (kept if it exists), older ones deleted.
    Returns its name, and the spec it holds when this call created it (None: it existed)."""
    meta = vm.get("metadata") or {}
    uid, generation = meta.get("uid") or "", meta.get("generation") or 0
    name, ns = name_of(vm)
    wanted = revision_name(uid, generation)
    exists = False
    # The selector as a mapping: its text would be parsed character by character at each start.
    for cr in list(store.list("ControllerRevision", ns, label_selector={START_LABEL: uid})):
        cr_name = cr["metadata"]["name"]
        if cr_name == wanted:
            exists = True
            continue
        try:
            store.delete("ControllerRevision", cr_name, ns)
        except NotFound:
            pass
    if exists:
        return wanted, None
    spec = revision_spec(vm)
    cr = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
          "metadata": {"name": wanted, "namespace": ns, "labels": {START_LABEL: uid},
                       "ownerReferences": [owner_reference(vm)]},
          "data": {"spec": spec}, "revision": generation}
    try:
        store.create_handed_over(cr)
    except AlreadyExists:
        return wanted, None
    return wanted, spec


def start_spec(store: Store, vmi: dict | None, started: tuple[str, dict] | None = None) -> dict | None:
    """getLastVMRevisionSpec: the VM spec the running VMI was started from (None: not known).
    `started`: the revision this reconcile just created (its name and spec), not read again."""
    if started is not None and ((vmi or {}).get("status") or {}).get("virtualMachineRevisionName") == started[0]:
        return started[1]
    return _read_start_spec(store, vmi)


def _read_start_spec(store: Store, vmi: dict | None) -> dict | None:
    cr = _start_revision(store, vmi)
    data = (cr or {}).get("data")
    spec = data.get("spec") if isinstance(data, dict) else None
    return spec if isinstance(spec, dict) else None


def _start_revision(store: Store, vmi: dict | None) -> dict | None:
    name = ((vmi or {}).get("status") or {}).get("virtualMachineRevisionName")
    if not name:
        return None
    try:
        return store.get("ControllerRevision", name, ((vmi or {}).get("metadata") or {}).get("namespace") or "default")
    except NotFound:
        return None


def _annotation(vmi: dict) -> str | None:
    return ((vmi.get("metadata") or {}).get("annotations") or {}).get(VM_GENERATION_ANNOTATION)


def _patch_annotation(s: VMSync, generation: int) -> None:
    """patchVmGenerationAnnotationOnVmi, on the resourceVersion read (the JSON patch's test)."""
    meta = (s.vmi or {}).get("metadata") or {}
    annotations = {**(meta.get("annotations") or {}), VM_GENERATION_ANNOTATION: str(generation)}
    name, ns = name_of(s.vm)
    s.vmi = s.store.patch("VirtualMachineInstance", name, {"metadata": {
        "resourceVersion": meta.get("resourceVersion"), "annotations": annotations}}, ns)


def bump(s: VMSync) -> None:
    """conditionallyBumpGenerationAnnotationOnVmi."""
    if s.vmi is None:
        return
    generation = (s.vm.get("metadata") or {}).get("generation")
    if generation is None or _annotation(s.vmi) == str(generation):
        return
    spec = start_spec(s.store, s.vmi)
    if spec is not None and spec.get("template") == (s.vm.get("spec") or {}).get("template"):
        _patch_annotation(s, generation)


def observed(s: VMSync) -> int | None:
    """syncGenerationInfo's observed generation: the VMI's annotation, else back-filled from the
    start revision's name (`parseGeneration`)."""
    try:
        return int(_annotation(s.vmi or {}) or "")
    except ValueError:
        pass
    cr = _start_revision(s.store, s.vmi)
    if cr is None:
        return None
    try:
        generation = int(cr["metadata"]["name"].rpartition("-")[2])
    except ValueError:
        return None
    _patch_annotation(s, generation)
    return generation
