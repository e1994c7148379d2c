"""KubeVirt's `handleDataVolumes` (pkg/virt-controller/watch/vm/vm.go) and the DataVolume it
creates from each of the VM's `spec.dataVolumeTemplates` (`CreateDataVolumeManifest`,
pkg/storage/types `GenerateDataVolumeFromTemplate` and `GetResolvedCloneSource`).

In `sync`, after the instancetype sync and before `syncRunStrategy` (unless the VM says
`kubevirt.io/immediate-data-volume-creation: "false"`, then at the start only, `ready_to_start`):

* a template without its DataVolume: the DataVolume is created, named and labelled as the
  template, annotated `cdi.kubevirt.io/allowClaimAdoption: "true"`, labelled
  `kubevirt.io/created-by: <VM uid>`, controlled by the VM (so it goes with the VM), its
  `sourceRef` to a DataSource resolved into the DataSource's `pvc`/`snapshot` source. A
  DataSource that does not exist creates nothing: the reconcile stops with KubeVirt's
  `FailedCreate` "Error encountered while creating DataVolumes: unable to create DataVolume
  manifest: datasources.cdi.kubevirt.io "<name>" not found" (the `Failure` condition);
* a DataVolume Succeeded, WaitForFirstConsumer or PendingPopulation is ready; any other phase
  is not (a Pending one whose Bound condition says ErrExceededQuota is an error);
* while one is not ready, a VM whose run strategy is not Halted stops here: no VMI is created
  ("Waiting on DataVolumes to be ready"), the status is written as it stands.

The simulated CDI (controller/cdi.py) fills what is created; a DataVolume's change re-queues its
VM (the embedded store in the write's transaction, a cluster's controller from its informer).
"""
from __future__ import annotations

from instancetype.errors import Error
from instancetype.jsonutil import clone, dig
from instancetype.store.base import AlreadyExists, APIError, NotFound, Store

from . import status
from .state import VMSync, name_of, run_strategy

IMMEDIATE_CREATION = "kubevirt.io/immediate-data-volume-creation"     # v1.ImmediateDataVolumeCreation
ALLOW_CLAIM_ADOPTION = "cdi.kubevirt.io/allowClaimAdoption"
CREATED_BY = "kubevirt.io/created-by"                                 # v1.CreatedByLabel
READY_PHASES = ("Succeeded", "WaitForFirstConsumer", "PendingPopulation")
FAILED_CREATE = "FailedCreate"


class DataVolumeError(Error):
    """What handleDataVolumes returns as its error (the text after KubeVirt's prefix)."""


def sync(s: VMSync) -> dict | None:
    """The step: DataVolumes created; the reconcile ends here while they are not ready."""
    annotations = (s.vm.get("metadata") or {}).get("annotations") or {}
    if annotations.get(IMMEDIATE_CREATION) == "false":
        return None
    try:
        ready = handle(s.store, s.vm)
    except DataVolumeError as e:
        s.failure = (FAILED_CREATE, f"Error encountered while creating DataVolumes: {e}")
        return status.write(s)
    if not ready and run_strategy(s.vm) != "Halted":
        return status.write(s)      # "Waiting on DataVolumes to be ready."
    return None


def ready_to_start(s: VMSync) -> bool:
    """startVMI's own `handleDataVolumes`: no VMI while a DataVolume is missing or not ready
    (an error is the reconcile's `FailedCreate`)."""
    try:
        return handle(s.store, s.vm)
    except DataVolumeError as e:
        s.failure = (FAILED_CREATE, f"Error encountered while creating DataVolumes: {e}")
        return False


def handle(store: Store, vm: dict) -> bool:
    """handleDataVolumes: True when every template's DataVolume exists and is ready."""
    _, ns = name_of(vm)
    ready = True
    for template in dig(vm, "spec", "dataVolumeTemplates", default=None) or ():
        if not isinstance(template, dict):
            continue
        name = dig(template, "metadata", "name", default="") or ""
        current = store.find("DataVolume", name, ns)
        if current is None:
            ready = False
            try:
                dv = manifest(store, template, vm)
            except NotFound as e:
                raise DataVolumeError(f"unable to create DataVolume manifest: {e}") from None
            _check_clone(dv)
            try:
                store.create(dv)
            except AlreadyExists as e:
                if store.find("PersistentVolumeClaim", name, ns) is not None:
                    continue        # vm.go: an old CDI that does not adopt claims
                if store.find("DataVolume", name, ns) is not None:
                    continue        # a cache behind the API server: the one just created
                raise DataVolumeError(f"failed to create DataVolume: {e}") from None
            except APIError as e:
                if e.code >= 500 or e.code in (409, 429):
                    raise           # an outage or a race: the reconcile is retried
                raise DataVolumeError(f"failed to create DataVolume: {e}") from None
            continue
        phase = (current.get("status") or {}).get("phase")
        if phase in READY_PHASES:
            continue
        if phase == "Pending":
            bound = next((c for c in (current.get("status") or {}).get("conditions") or ()
                          if isinstance(c, dict) and c.get("type") == "Bound"), None)
            if bound is not None and bound.get("status") != "True" and bound.get("reason") == "ErrExceededQuota":
                raise DataVolumeError(f"DataVolume {name} importer is not running due to an error: "
                                      f"{bound.get('message', '')}")
        ready = False
    return ready


def manifest(store: Store, template: dict, vm: dict) -> dict:
    """CreateDataVolumeManifest: the DataVolume of one template, owned by `vm`. A DataSource
    named by `sourceRef` that does not exist is the store's NotFound."""
    name, ns = name_of(vm)
    meta = clone(template.get("metadata") or {})
    meta["namespace"] = ns
    meta["labels"] = {**(meta.get("labels") or {}), CREATED_BY: str((vm.get("metadata") or {}).get("uid") or "")}
    meta["annotations"] = {**(meta.get("annotations") or {}), ALLOW_CLAIM_ADOPTION: "true"}
    vm_meta = vm.get("metadata") or {}
    meta["ownerReferences"] = [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": name,
                                "uid": vm_meta.get("uid"), "controller": True, "blockOwnerDeletion": True}]
    for k in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
        meta.pop(k, None)
    spec = clone(template.get("spec") or {})
    priority = dig(vm, "spec", "template", "spec", "priorityClassName", default="")
    if not spec.get("priorityClassName") and priority:
        spec["priorityClassName"] = priority
    source = resolved_clone_source(store, ns, spec)
    if source is not None:
        spec.pop("sourceRef", None)
        spec["source"] = source
    return {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": meta, "spec": spec}


def resolved_clone_source(store: Store, namespace: str, spec: dict) -> dict | None:
    """GetResolvedCloneSource: a `sourceRef` DataSource's pvc/snapshot (its status's source when
    it points at another DataSource), each with a namespace; None for any other source."""
    ns = namespace
    source = spec.get("source")
    ref = spec.get("sourceRef")
    if isinstance(ref, dict) and ref.get("kind") == "DataSource":
        ns = ref.get("namespace") or namespace
        ds = store.get("DataSource", ref.get("name") or "", ns)
        resolved = dig(ds, "spec", "source", default=None) or {}
        if resolved.get("dataSource") is not None:
            resolved = dig(ds, "status", "source", default=None) or {}
        source = {k: clone(resolved[k]) for k in ("pvc", "snapshot") if resolved.get(k) is not None}
    if not isinstance(source, dict):
        return None
    for kind in ("pvc", "snapshot"):
        if isinstance(source.get(kind), dict):
            out = clone(source)
            if not out[kind].get("namespace"):
                out[kind]["namespace"] = ns
            return out
    return None


def _check_clone(dv: dict) -> None:
    """handleCloneDataVolume: a sourceRef left unresolved is refused (clone authorization is not
    simulated; a missing source claim is allowed, and waits)."""
    if (dv.get("spec") or {}).get("sourceRef") is not None:
        raise DataVolumeError("DataVolume sourceRef not supported")
