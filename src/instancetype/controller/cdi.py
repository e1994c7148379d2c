"""The simulated CDI: what containerized-data-importer v1.64 (the CDI KubeVirt v1.9 builds against)
does with a DataVolume, without moving any bytes.

`sync(store, dv)` is CDI's DataVolume reconcile (pkg/controller/datavolume: `getDataVolumeOp`,
the import, PVC-clone and snapshot-clone reconcilers, `updateStatus`, `updateConditions`), done
**at once**: one call takes a DataVolume whose source exists straight to `Succeeded` at 100.0%,
with its PersistentVolumeClaim (the DataVolume's name, Bound, CDI's labels, owned by the
DataVolume; `upload.claim`) and CDI's three conditions (Bound True "PVC <name> Bound", Ready
True, Running False "Import Complete"/"Clone Complete", reason Completed). There are no
intermediate phases (ImportScheduled, ImportInProgress, CloneInProgress...) and no importer pod.

    source                        CDI's operation     complete when
    blank http registry s3 gcs    import              at once
    imageio vddk
    pvc {namespace, name}         PVC clone           the source claim exists and is populated
    snapshot {namespace, name}    snapshot clone      the VolumeSnapshot exists
    sourceRef DataSource          the DataSource's pvc or snapshot, as above (a missing
                                  DataSource: nothing is done, as CDI's `getSourceRefOp`)
    upload                        left to controller/upload.py (virtctl image-upload)

A clone whose source is missing stays `Pending` with the conditions CDI writes then (Bound and
Ready False, reason `CloneWithoutSource`, "The source pvc <name> doesn't exist"; Running False);
a source claim that is not populated yet (Pending, or its own DataVolume not Succeeded) leaves
the clone `CloneScheduled`. Once the source appears, its write calls `sync_waiting`, which
completes every DataVolume waiting (the embedded store in the same transaction:
`Cluster._storage_pass`; a cluster's controller from its PVC, DataSource and VolumeSnapshot
informers: `runner.VMController`).

What it does not do: storage classes and WaitForFirstConsumer binding (every claim binds at
once), quotas, clone authorization, size detection (a DataVolume without a size takes its
source's, else 1Gi), progress, retries, failures (no DataVolume ever becomes `Failed`), the
DataSource's own status, and data: an imported or cloned claim has no image file.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from instancetype.jsonutil import dig
from instancetype.store.base import AlreadyExists, NotFound, Store, now

from .upload import CDI_LABELS, CREATED_FOR_DV, POD_PHASE, claim, owner_ref

SOURCE_KINDS = ("PersistentVolumeClaim", "DataSource", "VolumeSnapshot")   # a clone waits on them
TRIGGER_KINDS = ("DataVolume", *SOURCE_KINDS)                             # what re-runs CDI
IMPORT_SOURCES = ("http", "s3", "gcs", "registry", "blank", "imageio", "vddk")
CLONE_WITHOUT_SOURCE = "CloneWithoutSource"                  # clone-controller-base.go
MESSAGE_CLONE_WITHOUT_SOURCE = "The source {kind} {name} doesn't exist"
DEFAULT_SIZE = "1Gi"
FINAL_PHASES = ("Succeeded", "Failed")      # a Failed one (written by someone else) is left as it is


def sync(store: Store, dv: dict) -> dict | None:
    """One DataVolume reconciled: its claim created and its status written (on the
    resourceVersion read), when they differ from what is stored. Returns the DataVolume
    written, or None when nothing changed."""
    meta = dv.get("metadata") or {}
    status = dv.get("status") or {}
    if meta.get("deletionTimestamp") or status.get("phase") in FINAL_PHASES:
        return None
    if "upload" in (dig(dv, "spec", "source", default=None) or {}):
        return None
    op = _operation(store, dv)
    if op is None:
        return None
    kind, source = op
    if kind == "import":
        return _complete(store, dv, None, "Import Complete")
    src_kind, src_ns, src_name = source
    found = store.find("PersistentVolumeClaim" if src_kind == "pvc" else "VolumeSnapshot", src_name, src_ns)
    if found is None:
        message = MESSAGE_CLONE_WITHOUT_SOURCE.format(kind=src_kind, name=src_name)
        return _write_status(store, dv, "Pending", None, [
            _cond("Bound", "False", message, CLONE_WITHOUT_SOURCE),
            _cond("Ready", "False", message, CLONE_WITHOUT_SOURCE),
            _cond("Running", "False")])
    if src_kind == "pvc" and not _populated(store, found):
        return _write_status(store, dv, "CloneScheduled", None, [
            _cond("Bound", "False", "No PVC found", "NotFound"), _cond("Ready", "False"), _cond("Running", "False")])
    return _complete(store, dv, found, "Clone Complete")


def sync_waiting(store: Store, namespace: str | None = None) -> list[dict]:
    """A possible source appeared or changed: every DataVolume not yet Succeeded reconciled
    again (sources may live in other namespaces: all of them by default). Returns those written."""
    out = []
    for dv in list(store.list("DataVolume", namespace)):
        if waiting(dv):
            written = sync(store, dv)
            if written is not None:
                out.append(written)
    return out


def waiting(dv: Mapping) -> bool:
    """Not filled yet (a source written may let it complete)."""
    return (dv.get("status") or {}).get("phase") not in FINAL_PHASES and not (dv.get("metadata") or {}).get(
        "deletionTimestamp")


def settle(store: Store, since: Any, requeue: Callable[[dict], None], *, rounds: int) -> bool:
    """The embedded store's informers: every DataVolume written since resourceVersion `since`
    is filled (`sync`), a source written (a
    claim, DataSource, VolumeSnapshot, a DataVolume now Succeeded) lets the waiting ones
    complete (`sync_waiting`), and `requeue(dv)` is called for each DataVolume written (its VM's
    turn); round after round until nothing more is written, at most `rounds`. True when any
    round had something to do."""
    wrote = False
    for _ in range(rounds):
        mark = store.resource_version()
        # Which kinds changed, from the feed without its objects (one query: a write of no
        # storage object, e.g. a VM start, decodes nothing here); then the triggers' events.
        changed = {ev.kind for ev in store.changes(since, objects=False)}
        events = [ev.object for kind in TRIGGER_KINDS if kind in changed for ev in store.changes(since, kind=kind)
                  if ev.object is not None]
        since = mark
        if not events:
            return wrote
        wrote = True
        touched: dict[tuple, dict] = {}
        sources = False
        for obj in events:
            if obj.get("kind") != "DataVolume":
                sources = True
                continue
            meta = obj.get("metadata") or {}
            try:
                dv = store.get("DataVolume", meta.get("name") or "", meta.get("namespace"))
            except NotFound:
                dv = obj               # deleted: its VM creates it again
            else:
                dv = sync(store, dv) or dv
                sources = sources or not waiting(dv)     # a populated claim: clones of it may go
            touched[(meta.get("namespace"), meta.get("name"))] = dv
        if sources:
            for dv in sync_waiting(store):
                touched[(dv["metadata"].get("namespace"), dv["metadata"]["name"])] = dv
        for dv in touched.values():
            requeue(dv)
    return wrote


def _operation(store: Store, dv: dict) -> tuple[str, Any] | None:
    """CDI's `getDataVolumeOp`: ("import", None), ("clone", (pvc|snapshot, namespace, name)), or None."""
    spec = dv.get("spec") or {}
    ns = (dv.get("metadata") or {}).get("namespace") or "default"
    ref = spec.get("sourceRef")
    if isinstance(ref, dict):
        return _source_ref_op(store, ref, ns)
    source = spec.get("source")
    if not isinstance(source, dict):
        return None
    for kind in ("pvc", "snapshot"):
        if isinstance(source.get(kind), dict):
            return "clone", (kind, source[kind].get("namespace") or ns, source[kind].get("name") or "")
    if any(k in source for k in IMPORT_SOURCES):
        return "import", None
    return None


def _source_ref_op(store: Store, ref: dict, ns: str) -> tuple[str, Any] | None:
    """`getSourceRefOp`: the DataSource's source (one link of a DataSource chain followed, as
    `ResolveDataSourceChain`); a DataSource not found is CDI's no-op."""
    if ref.get("kind") != "DataSource":
        return None
    ds = store.find("DataSource", ref.get("name") or "", ref.get("namespace") or ns)
    if ds is None:
        return None
    ds_ns = ds["metadata"].get("namespace") or ns
    source = dig(ds, "spec", "source", default=None) or {}
    chained = source.get("dataSource")
    if isinstance(chained, dict):
        ds = store.find("DataSource", chained.get("name") or "", chained.get("namespace") or ds_ns)
        if ds is None:
            return None
        ds_ns = ds["metadata"].get("namespace") or ds_ns
        source = dig(ds, "spec", "source", default=None) or {}
    for kind in ("pvc", "snapshot"):
        if isinstance(source.get(kind), dict):
            return "clone", (kind, source[kind].get("namespace") or ds_ns, source[kind].get("name") or "")
    return None


def _populated(store: Store, pvc: dict) -> bool:
    """CDI's `IsPopulated`: Bound, and if a DataVolume controls it, that one Succeeded."""
    if (pvc.get("status") or {}).get("phase") != "Bound":
        return False
    meta = pvc.get("metadata") or {}
    owner = next((r for r in meta.get("ownerReferences") or ()
                  if isinstance(r, dict) and r.get("kind") == "DataVolume" and r.get("controller")), None)
    if owner is None:
        return True
    dv = store.find("DataVolume", owner.get("name") or "", meta.get("namespace"))
    return dv is None or (dv.get("status") or {}).get("phase") == "Succeeded"


def _complete(store: Store, dv: dict, source: dict | None, message: str) -> dict | None:
    """The DataVolume's claim (created, or an existing one adopted with `allowClaimAdoption`),
    then the status of a finished population."""
    meta = dv["metadata"]
    ns = meta.get("namespace") or "default"
    pvc = store.find("PersistentVolumeClaim", meta["name"], ns)
    if pvc is None:
        pvc = _create_claim(store, dv, source)
    elif not _owned_by(pvc, dv):
        if ((meta.get("annotations") or {}).get("cdi.kubevirt.io/allowClaimAdoption") or "").lower() != "true":
            return None     # CDI's ErrResourceExists: the claim belongs to someone else
        if not any(isinstance(r, dict) and r.get("controller") for r in pvc["metadata"].get("ownerReferences") or ()):
            pvc["metadata"]["ownerReferences"] = [*(pvc["metadata"].get("ownerReferences") or ()), owner_ref(dv)]
            pvc = store.update(pvc)
    return _write_status(store, dv, "Succeeded", pvc["metadata"]["name"], [
        _cond("Bound", "True", f"PVC {pvc['metadata']['name']} Bound", "Bound"),
        _cond("Ready", "True"),
        _cond("Running", "False", message, "Completed")], progress="100.0%")


def _create_claim(store: Store, dv: dict, source: dict | None) -> dict:
    spec = dv.get("spec") or {}
    storage = spec.get("storage") if isinstance(spec.get("storage"), dict) else spec.get("pvc")
    storage = storage if isinstance(storage, dict) else {}
    size = str(dig(storage, "resources", "requests", "storage", default="") or _source_size(source) or DEFAULT_SIZE)
    modes = storage.get("accessModes") or dig(source or {}, "spec", "accessModes", default=None) or ["ReadWriteOnce"]
    meta = dv["metadata"]
    pvc = claim(meta["name"], meta.get("namespace") or "default", size, access=str(modes[0]),
                volume_mode=storage.get("volumeMode") or "Filesystem",
                storage_class=storage.get("storageClassName") or "",
                labels={**CDI_LABELS, **(meta.get("labels") or {})},
                annotations={POD_PHASE: "Succeeded", CREATED_FOR_DV: meta["uid"]}, owner=owner_ref(dv))
    try:
        created = store.create(pvc)
    except AlreadyExists:           # a cache behind the API server: the one just made
        return store.get("PersistentVolumeClaim", meta["name"], meta.get("namespace"))
    if (created.get("status") or {}).get("phase") != "Bound":
        # The API server resets a claim's status on create (Pending): it is written through its subresource.
        created["status"] = pvc["status"]
        created = store.update(created, subresource="status")
    return created


def _source_size(source: dict | None) -> str:
    if source is None:
        return ""
    if source.get("kind") == "VolumeSnapshot":
        return str(dig(source, "status", "restoreSize", default="") or "")
    return str(dig(source, "status", "capacity", "storage", default="")
               or dig(source, "spec", "resources", "requests", "storage", default="") or "")


def _owned_by(pvc: dict, dv: dict) -> bool:
    uid = dv["metadata"].get("uid")
    return any(isinstance(r, dict) and r.get("uid") == uid for r in pvc["metadata"].get("ownerReferences") or ())


def _cond(kind: str, status: str, message: str = "", reason: str = "") -> dict:
    out = {"type": kind, "status": status}
    if message:
        out["message"] = message
    if reason:
        out["reason"] = reason
    return out


def _write_status(store: Store, dv: dict, phase: str, claim_name: str | None, conditions: list[dict], *,
                  progress: str | None = None) -> dict | None:
    """CDI's status update: only when something changed; a condition keeps its times while its
    status stays (`updateCondition`), its heartbeat moves when its message or reason does."""
    old = dv.get("status") or {}
    status = {k: v for k, v in old.items() if k not in ("phase", "conditions", "claimName", "progress")}
    status["phase"] = phase
    if claim_name:
        status["claimName"] = claim_name
    if progress or old.get("progress"):
        status["progress"] = progress or old["progress"]
    before = {c.get("type"): c for c in old.get("conditions") or () if isinstance(c, dict)}
    stamp = now()
    same = phase == old.get("phase") and status.get("claimName") == old.get("claimName") \
        and status.get("progress") == old.get("progress")
    merged = []
    for c in conditions:
        prev = before.get(c["type"])
        plain = {k: v for k, v in (prev or {}).items() if k not in ("lastTransitionTime", "lastHeartbeatTime")}
        if prev is not None and plain == c:
            merged.append(prev)
            continue
        same = False
        transition = stamp if prev is None or prev.get("status") != c["status"] else \
            prev.get("lastTransitionTime") or stamp
        merged.append({**c, "lastTransitionTime": transition, "lastHeartbeatTime": stamp})
    if same and len(before) == len(merged):
        return None
    status["conditions"] = merged
    return store.update({**dv, "status": status}, subresource="status")
