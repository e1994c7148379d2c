"""The VirtualMachineInstance KubeVirt creates when a VirtualMachine starts.

    build_vmi(vm, *, instancetype=None, preference=None, objects=(), config=None) -> dict

Three steps, as KubeVirt runs them:

1. admission: the VM validating webhook on a copy of the VM (engine/vm_admission.py
   `validate_template`; lookup failures are ignored there). A refusal raises `VMIError`
   with stage `admission` (spread check or conflicts, with causes; or the defaults'
   error) or `requirements` (one cause and `requirements_error`).
2. the VM controller builds the VMI (pkg/virt-controller/watch/vm/vm.go setupVMIFromVM
   and startVMI, pkg/instancetype/controller/vm ApplyToVMI):
   2.1 metadata from the template's, the VM's name and namespace, one owner reference;
       spec = the template's spec;
   2.2 `domain.firmware.uuid` = the SHA-1 name-based UUID of the VM's name when empty;
   2.3 default disks; 2.4 the `kubevirt.io/vm-generation` annotation, the migration target
       annotation for `WaitAsReceiver`, the controller's finalizer;
   2.5 the preference's five `preferredAutoattach*` values (lookup failure: stage `autoattach`);
   2.6 the `default-0` input when `autoattachInputDevice` is true and there are none;
   2.7 the default pod network;
   2.8 the annotations naming the instancetype and preference, then both applied to the
       VMI's `spec` (root `spec`; lookup failure or conflict: stage `apply`).
3. the VMI mutating webhook's defaults (engine/vmi_mutate.py); with `mutate=False` the VMI
   stops at step 2, as v1.9's controller sends it to an API server, whose call of the VMI
   mutating webhook makes step 3 (once: the mutator appends its finalizer unconditionally).

Specs: a VM matcher with a given spec (`instancetype=` / `preference=`, bare or a whole
object) uses that spec whatever the matcher's name, kind or revisionName say; a matcher
without one is looked up in `objects` by KubeVirt's rules (engine/find.py).
Returns `{"apiVersion", "kind", "metadata", "spec", "status"}`; nothing given is mutated.
"""
from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

from instancetype.api import kinds as K
from instancetype.engine import object_input, vm_decode, vm_fields
from instancetype.engine.apply import apply_to_spec
from instancetype.engine.defaults import set_default_network_interface, set_default_volume_disk
from instancetype.engine.find import find_instancetype, find_preference
from instancetype.engine.guard import public
from instancetype.engine.jsondata import child
from instancetype.engine.objects import ObjectIndex
from instancetype.engine.preference import apply_autoattach
from instancetype.engine.spec import instancetype_spec, preference_spec
from instancetype.engine.virt_config import cluster_config
from instancetype.engine.vm_admission import validate_template
from instancetype.engine.vmi_mutate import mutate_new_vmi
from instancetype.errors import DefaultsError, Error, VMIError

# KubeVirt's firmware UUID namespace (pkg/virt-controller/watch/vm: firmwareUUIDns).
FIRMWARE_UUID_NAMESPACE = uuid.UUID("6a1a24a1-4061-4607-8bf4-a3963d0c5895")
VM_GENERATION_ANNOTATION = "kubevirt.io/vm-generation"
MIGRATION_TARGET_ANNOTATION = "kubevirt.io/create-migration-target"
CONTROLLER_FINALIZER = "kubevirt.io/virtualMachineControllerFinalize"
DEFAULT_INPUT_NAME = "default-0"

_INSTANCETYPE_NAME_ANNOTATIONS = {K.INSTANCETYPE: K.ANNOTATION_INSTANCETYPE_NAME,
                                  K.CLUSTER_INSTANCETYPE: K.ANNOTATION_CLUSTER_INSTANCETYPE_NAME}
_PREFERENCE_NAME_ANNOTATIONS = {K.PREFERENCE: K.ANNOTATION_PREFERENCE_NAME,
                                K.CLUSTER_PREFERENCE: K.ANNOTATION_CLUSTER_PREFERENCE_NAME}


class _Lookup:
    """One side's spec, found once: the given spec, a lookup in `objects`, or the lookup's error."""

    __slots__ = ("matcher", "spec", "error")

    def __init__(self, vm: dict[str, Any], key: str, given: Any, index: ObjectIndex,
                 normalise: Callable[[Any], dict[str, Any] | None], find: Callable[[dict[str, Any], ObjectIndex], dict[str, Any] | None]):
        m = vm["spec"].get(key)
        self.matcher = m if isinstance(m, dict) else None
        self.spec: dict[str, Any] | None = None
        self.error: Error | None = None
        if self.matcher is None:
            return
        if given is not None:
            self.spec = normalise(given)
            return
        try:
            self.spec = find(vm, index)
        except Error as e:
            self.error = e

    def found(self) -> dict[str, Any] | None:
        """The spec for admission: a failed lookup counts as absent."""
        return self.spec if self.error is None else None

    def required(self, stage: str) -> dict[str, Any] | None:
        """The spec for the controller: a failed lookup stops the start at `stage`."""
        if self.error is not None:
            raise VMIError(str(self.error), stage=stage, causes=[], requirements_error=None)
        return self.spec


def _admit(template: Any, it: _Lookup, pref: _Lookup, config: Any) -> None:
    rejection = validate_template(template, it.found(), pref.found(), config)
    if rejection is None:
        return
    stage = "requirements" if rejection.kind == "requirements" else "admission"
    raise VMIError(rejection.message, stage=stage, causes=list(rejection.causes),
                   requirements_error=rejection.requirements_error)


_FIRMWARE_UUID_PREFIX = FIRMWARE_UUID_NAMESPACE.bytes


@lru_cache(maxsize=4096)
def _firmware_uuid(name: str) -> str:
    """The VMI's firmware UUID: uuid5 of the VM's name (a pure function of it, kept per name),
    `str(uuid.uuid5(FIRMWARE_UUID_NAMESPACE, name))` without building a `UUID` (whose checks
    and integer arithmetic cost twice the hash): the SHA-1's first 16 bytes with the version
    (5) and the RFC 4122 variant set, in the 8-4-4-4-12 text form."""
    b = bytearray(hashlib.sha1(_FIRMWARE_UUID_PREFIX + name.encode()).digest()[:16])
    b[6] = (b[6] & 0x0F) | 0x50
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _setup_vmi(vm: dict[str, Any]) -> dict[str, Any]:
    """setupVMIFromVM: metadata and spec from the template (taken over: `vm` is a private copy)."""
    vm_meta = got if isinstance(got := vm.get("metadata"), dict) else {}
    template = vm["spec"].get("template")
    template = template if isinstance(template, dict) else {}
    meta = template.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    meta.pop("generateName", None)
    name = vm_meta.get("name") or ""
    meta["name"] = name
    if vm_meta.get("namespace"):
        meta["namespace"] = vm_meta["namespace"]
    else:
        meta.pop("namespace", None)
    meta["ownerReferences"] = [{"apiVersion": K.KUBEVIRT_API_VERSION, "kind": "VirtualMachine", "name": name,
                                "uid": vm_meta.get("uid") or "", "controller": True,
                                "blockOwnerDeletion": True}]
    spec = template.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    firmware = child(child(spec, "domain"), "firmware")
    if not firmware.get("uuid"):
        firmware["uuid"] = _firmware_uuid(name)
    set_default_volume_disk(spec)
    return {"apiVersion": K.KUBEVIRT_API_VERSION, "kind": "VirtualMachineInstance", "metadata": meta,
            "spec": spec, "status": {}}


def _name_annotations(annotations: dict[str, Any], lookup: _Lookup, kinds: dict[str, Any], names: dict[str, Any]) -> None:
    """The annotation naming a matcher's object; an unknown kind gives none."""
    m = lookup.matcher
    if m is None:
        return
    kind = kinds.get(str(m.get("kind") or "").lower())
    if kind is not None:
        annotations[names[kind]] = m.get("name") or ""


@public("build VirtualMachineInstance")
def build_vmi(vm: Mapping[str, Any], *, instancetype: Any = None, preference: Any = None,
              objects: Iterable[Mapping[str, Any]] = (), config: Any = None, mutate: bool = True) -> dict[str, Any]:
    """The VMI KubeVirt creates when `vm` starts. Raises `VMIError` when the start stops."""
    work = vm_fields.normalize_vm(vm_decode.load_vm(vm))
    cfg = cluster_config(config)
    index = object_input.object_index(objects, vm_fields.namespace(work))
    it = _Lookup(work, "instancetype", instancetype, index, instancetype_spec, find_instancetype)
    pref = _Lookup(work, "preference", preference, index, preference_spec, find_preference)

    # 1. admission, on its own copy of the template
    _admit(work["spec"].get("template"), it, pref, cfg)

    # 2. the VM controller (the VM copy is ours: its template becomes the VMI)
    vmi = _setup_vmi(work)
    meta, spec = vmi["metadata"], vmi["spec"]
    annotations = child(meta, "annotations")
    vm_meta = got if isinstance(got := work.get("metadata"), dict) else {}
    generation = vm_meta.get("generation")
    annotations[VM_GENERATION_ANNOTATION] = str(generation if isinstance(generation, int) else 0)
    if work["spec"].get("runStrategy") == "WaitAsReceiver":
        annotations[MIGRATION_TARGET_ANNOTATION] = "true"
    finalizers = meta.get("finalizers")
    meta["finalizers"] = (list(finalizers) if isinstance(finalizers, list) else []) + [CONTROLLER_FINALIZER]

    if pref.matcher is not None:                                                   # 2.5
        apply_autoattach(pref.required("autoattach"), spec)
    devices = child(child(spec, "domain"), "devices")
    if devices.get("autoattachInputDevice") is True and not devices.get("inputs"):  # 2.6
        devices["inputs"] = [{"name": DEFAULT_INPUT_NAME}]
    try:
        set_default_network_interface(spec, cfg)                                  # 2.7
    except DefaultsError as e:
        raise VMIError(str(e), stage="admission", causes=[], requirements_error=None) from None

    it_spec = it.required("apply")                                                 # 2.8
    pref_spec = pref.required("apply")
    if it_spec is not None or pref_spec is not None:
        _name_annotations(annotations, it, K.INSTANCETYPE_MATCHER_KINDS, _INSTANCETYPE_NAME_ANNOTATIONS)
        _name_annotations(annotations, pref, K.PREFERENCE_MATCHER_KINDS, _PREFERENCE_NAME_ANNOTATIONS)
        conflicts = apply_to_spec(spec, meta, it_spec, pref_spec, root="spec")
        if conflicts:
            raise VMIError(f"VMI conflicts with instancetype spec in fields: [{', '.join(conflicts)}]",
                           stage="apply", causes=[], requirements_error=None)

    # 3. the VMI mutating webhook (an API server's call of it, when the VMI is sent to one)
    try:
        if mutate:     # (the default disks and pod network were added in 2.3 and 2.7)
            mutate_new_vmi(vmi, cfg, network_and_disks_done=True)
    except DefaultsError as e:
        raise VMIError(str(e), stage="admission", causes=[], requirements_error=None) from None
    if not annotations:
        meta.pop("annotations", None)
    return vmi
