"""CDI's part in an upload (virtctl image-upload) on the embedded cluster, in three steps.

1. `begin` (one transaction): find the claim to fill, or create what virtctl creates: the
   DataVolume (phase `UploadReady`) and the PersistentVolumeClaim CDI makes for it (bound, owned
   by the DataVolume, with CDI's labels), or just the claim (`image-upload pvc`). Its upload pod
   is `Running` (annotation `cdi.kubevirt.io/storage.pod.phase`).
2. `Upload.copy`: the bytes go to the claim's image file (`images.Images.write`: temporary file,
   fsync, rename), outside any transaction: other writers are not held up by a long copy.
3. `Upload.finish` (one transaction): only now, with the bytes in place, the pod phase says
   `Succeeded`, the DataVolume `Succeeded` at 100%, and `--datasource` points a DataSource at
   the claim.

A failure seen during the copy (a full disk...) undoes step 1 in one transaction. A process
killed in between leaves the objects saying `UploadReady`/`Running` (never `Succeeded`) and at
most a temporary file, which the next opening sweeps away; the same command run again resumes
with "Using existing PVC". A claim that says `Succeeded` but has no image (written by an older
instancetype that committed the status first) is taken as interrupted too.
"""
from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from instancetype.errors import StoreError
from instancetype.jsonutil import dig
from instancetype.store.base import NotFound

from .images import Images

UPLOAD_TARGET = "cdi.kubevirt.io/storage.upload.target"
CONTENT_TYPE = "cdi.kubevirt.io/storage.contentType"
POD_PHASE = "cdi.kubevirt.io/storage.pod.phase"
FORCE_BIND = "cdi.kubevirt.io/storage.bind.immediate.requested"
CREATED_FOR_DV = "cdi.kubevirt.io/createdForDataVolume"
CDI_LABELS = {"app": "containerized-data-importer", "app.kubernetes.io/component": "storage",
              "app.kubernetes.io/managed-by": "cdi-controller"}
CDI_API = "cdi.kubevirt.io/v1beta1"


class UploadRefused(StoreError):
    """virtctl's or CDI's refusal, worded as they word it."""


@dataclass
class UploadRequest:
    name: str
    namespace: str
    to_pvc: bool                          # `image-upload pvc` (else `dv`)
    size: str = ""                        # --size, "" when not given
    no_create: bool = False
    archive: bool = False
    storage_class: str = ""
    access_mode: str = ""
    volume_mode: str = ""
    force_bind: bool = False
    labels: dict = field(default_factory=dict)      # the --default-instancetype/preference labels
    datasource: bool = False


@dataclass
class Upload:
    """An upload under way: its claim is committed, its bytes not yet in place."""

    cluster: Any
    request: UploadRequest
    pvc: dict
    created: list[str]                   # kinds created by `begin`, undone by `abort`

    @property
    def images(self) -> Images:
        return self.cluster.images

    @property
    def uid(self) -> str:
        return self.pvc["metadata"]["uid"]

    @property
    def dest(self):
        return self.images.path(self.uid)

    def copy(self, src: BinaryIO, progress: Callable[[int], None] | None = None) -> int:
        try:
            return self.images.write(self.uid, src, progress)
        except OSError as e:
            self.abort()
            raise UploadRefused(f"error uploading image: {e}") from None

    def abort(self) -> None:
        """Undo what `begin` created (best effort: what is left, the next command sweeps or resumes)."""
        req = self.request
        try:
            for kind in reversed(self.created):
                try:
                    self.cluster.delete(kind, req.name, req.namespace)
                except NotFound:
                    pass
        except StoreError:
            pass

    def finish(self) -> list[str]:
        """The bytes are in place: say so, in one transaction. Returns virtctl's messages."""
        req = self.request
        if not self.images.exists(self.uid):
            raise UploadRefused(f"error uploading image: the image of PVC {req.name} is not in place")
        out: list[str] = []
        cluster = self.cluster
        with cluster.store.transaction():
            pvc = cluster.get("PersistentVolumeClaim", req.name, req.namespace)
            if pvc["metadata"]["uid"] != self.uid:
                raise UploadRefused(f"error uploading image: PVC {req.namespace}/{req.name} was replaced meanwhile")
            pvc["metadata"]["annotations"] = {**(pvc["metadata"].get("annotations") or {}), POD_PHASE: "Succeeded"}
            cluster.update(pvc)
            if not req.to_pvc:
                try:
                    dv = cluster.get("DataVolume", req.name, req.namespace)
                except NotFound:
                    dv = None
                if dv is not None:
                    dv["status"] = {**(dv.get("status") or {}), "phase": "Succeeded", "progress": "100.0%",
                                    "claimName": req.name}
                    cluster.store.update(dv, subresource="status")
            if req.datasource:
                out.append(_datasource(cluster, req))
        return out


def begin(cluster: Any, req: UploadRequest, total: int, say: Callable[[str], None]) -> Upload:
    """Step 1: the claim to fill, found or created (with its DataVolume), in one transaction.
    virtctl's messages go to `say` as they happen."""
    ns, name = req.namespace, req.name
    if cluster.images is None:
        raise UploadRefused("this cluster's store keeps no image files (it has no state file)")
    created: list[str] = []
    with cluster.store.transaction():
        try:
            pvc = cluster.get("PersistentVolumeClaim", name, ns)
        except NotFound:
            pvc = None
            say(f"PVC {ns}/{name} not found ")    # sic: virtctl's trailing space
            if req.no_create:
                raise
        if pvc is not None:
            pvc = _existing_pvc(cluster, pvc, req)
            size = str(dig(pvc, "spec", "resources", "requests", "storage", default=""))
            if size:
                check_fits(total, parse_size(size, True))
            say(f"Using existing PVC {ns}/{pvc['metadata']['name']}")
        else:
            quantity = parse_size(req.size, req.to_pvc)
            check_fits(total, quantity)
            pvc, created = _create(cluster, req, str(quantity), say)
    return Upload(cluster, req, pvc, created)


def _create(cluster: Any, req: UploadRequest, size: str, say: Callable[[str], None]) -> tuple[dict, list[str]]:
    ns, name = req.namespace, req.name
    content_type = "archive" if req.archive else "kubevirt"
    annotations = {UPLOAD_TARGET: "", CONTENT_TYPE: content_type, POD_PHASE: "Running"}
    if req.force_bind:
        annotations[FORCE_BIND] = ""
    if req.to_pvc:
        if req.access_mode == "ReadOnlyMany":
            raise UploadRefused("cannot upload to a readonly volume, use either ReadWriteOnce or ReadWriteMany")
        pvc = cluster.create(_pvc(req, size, labels=req.labels, annotations=annotations)).object
        say(f"PersistentVolumeClaim {ns}/{name} created")
        return pvc, ["PersistentVolumeClaim"]
    dv: dict[str, Any] = {
        "apiVersion": CDI_API, "kind": "DataVolume", "metadata": {"name": name, "namespace": ns},
        "spec": {"contentType": content_type, "source": {"upload": {}},
                 "storage": storage_spec(req, size)},
        "status": {"phase": "UploadReady", "progress": "N/A", "claimName": name}}
    if req.force_bind:
        dv["metadata"]["annotations"] = {FORCE_BIND: ""}
    if req.labels:
        dv["metadata"]["labels"] = dict(req.labels)
    dv = cluster.create(dv).object
    owner = owner_ref(dv)
    annotations[CREATED_FOR_DV] = dv["metadata"]["uid"]
    pvc = cluster.create(_pvc(req, size, labels={**CDI_LABELS, **req.labels}, annotations=annotations,
                              owner=owner)).object
    say(f"DataVolume {ns}/{name} created")
    return pvc, ["DataVolume"]     # its claim goes with it


def storage_spec(req: UploadRequest, size: str) -> dict:
    """virtctl `createStorageSpec` (the DataVolume's `spec.storage`)."""
    spec: dict[str, Any] = {"resources": {"requests": {"storage": size}}}
    if req.storage_class:
        spec["storageClassName"] = req.storage_class
    if req.access_mode:
        if req.access_mode == "ReadOnlyMany":
            raise UploadRefused("cannot upload to a readonly volume, use either ReadWriteOnce or ReadWriteMany if "
                                "supported")
        spec["accessModes"] = [req.access_mode]
    if req.volume_mode == "block":
        spec["volumeMode"] = "Block"
    elif req.volume_mode == "filesystem":
        spec["volumeMode"] = "Filesystem"
    return spec


def _pvc(req: UploadRequest, size: str, *, labels: dict, annotations: dict, owner: dict | None = None) -> dict:
    return claim(req.name, req.namespace, size, access=req.access_mode or "ReadWriteOnce",
                 volume_mode="Block" if req.volume_mode == "block" else "Filesystem",
                 storage_class=req.storage_class, labels=labels, annotations=annotations, owner=owner)


def claim(name: str, namespace: str, size: str, *, access: str = "ReadWriteOnce", volume_mode: str = "Filesystem",
          storage_class: str = "", labels: dict | None = None, annotations: dict | None = None,
          owner: dict | None = None) -> dict:
    """The PersistentVolumeClaim CDI fills, already Bound to a volume of its own (the simulation
    has no provisioner): for an upload here, for an import or clone in `controller/cdi.py`."""
    spec: dict[str, Any] = {"accessModes": [access], "resources": {"requests": {"storage": size}},
                            "volumeMode": volume_mode, "volumeName": f"pvc-{uuid.uuid4()}"}
    if storage_class:
        spec["storageClassName"] = storage_class
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "annotations": dict(annotations or {})}
    if labels:
        meta["labels"] = dict(labels)
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec,
            "status": {"phase": "Bound", "accessModes": [access], "capacity": {"storage": size}}}


def owner_ref(dv: dict) -> dict:
    """The controller ownerReference CDI puts on a DataVolume's claim."""
    return {"apiVersion": CDI_API, "kind": "DataVolume", "name": dv["metadata"]["name"],
            "uid": dv["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def _existing_pvc(cluster: Any, pvc: dict, req: UploadRequest) -> dict:
    """virtctl `getAndValidateUploadPVC` + `ensurePVCSupportsUpload`."""
    name, ns = req.name, req.namespace
    ann = (pvc.get("metadata") or {}).get("annotations") or {}
    if not req.no_create and not req.size:
        raise UploadRefused("PVC creation requires specifying a size")
    dv = None
    if not req.to_pvc:
        try:
            dv = cluster.get("DataVolume", name, ns)
        except NotFound:
            raise UploadRefused(f"no dataVolume is associated with the existing PVC {ns}/{name}") from None
    if ann.get(POD_PHASE) == "Succeeded" and (UPLOAD_TARGET not in ann or cluster.images.exists(pvc["metadata"]["uid"])):
        raise UploadRefused(f"PVC {name} already successfully imported/cloned/updated")
    if not req.no_create and UPLOAD_TARGET not in ann:
        raise UploadRefused(f"PVC {name} not available for upload")
    if req.archive and ann.get(CONTENT_TYPE) != "archive":
        raise UploadRefused(f"PVC {name} does not have archive contentType annotation")
    wanted = {**ann, UPLOAD_TARGET: "", POD_PHASE: "Running"}
    if wanted != ann:
        pvc["metadata"]["annotations"] = wanted
        pvc = cluster.update(pvc).object
    if dv is not None and (dv.get("status") or {}).get("phase") != "UploadReady":
        # Filled again (an interrupted upload, or a success recorded without its bytes): until
        # `finish`, the DataVolume says it waits for an upload.
        dv["status"] = {**(dv.get("status") or {}), "phase": "UploadReady", "progress": "N/A"}
        cluster.store.update(dv, subresource="status")
    return pvc


def _datasource(cluster: Any, req: UploadRequest) -> str:
    """virtctl `handleDataSource`: create, or relabel and repoint an existing DataSource."""
    name, ns = req.name, req.namespace
    try:
        ds = cluster.get("DataSource", name, ns)
    except NotFound:
        ds = {"apiVersion": CDI_API, "kind": "DataSource", "metadata": {"name": name, "namespace": ns},
              "spec": {"source": {"pvc": {"name": name, "namespace": ns}}}}
        if req.labels:
            ds["metadata"]["labels"] = dict(req.labels)
        cluster.create(ds)
        return f"Created a new DataSource {ns}/{name}"
    ds["metadata"]["labels"] = {**(ds["metadata"].get("labels") or {}), **req.labels}
    ds.setdefault("spec", {}).setdefault("source", {})["pvc"] = {"name": name, "namespace": ns}
    cluster.update(ds)
    return f"Updated an existing DataSource {ns}/{name}"


SIZE_REQUIRED = "when creating a resource, the size must be specified"   # virtctl v1.9, before any parse


def parse_size(size: str, to_pvc: bool):
    """The claim's size as virtctl parses `--size`; an empty one is virtctl's one-line refusal
    (`--size` is required whenever the claim is created), never a parse error."""
    from instancetype.api.quantity import Quantity
    from instancetype.errors import QuantityError

    if not size:
        raise UploadRefused(SIZE_REQUIRED)
    try:
        return Quantity.parse(size)
    except QuantityError as e:
        if to_pvc:
            raise UploadRefused(f"invalid size={size}: {e}") from None
        raise UploadRefused(f"validation failed for size={size}: {e}") from None


def check_fits(total: int, quantity: Any) -> None:
    """CDI refuses an image larger than the claim (its upload server's size validation)."""
    capacity = quantity.value()
    if total > capacity:
        raise UploadRefused(f"Virtual image size {total} is larger than the reported available storage {capacity}. "
                            "A larger PVC is required.")
