"""virtctl `image-upload dv|pvc NAME` on the embedded cluster.

There is no CDI upload proxy: the image's bytes are kept beside the state file
(`<state file>.images/<namespace>/<name>`), checked against `--size` first (CDI's own check:
an image larger than the claim is refused), and the objects virtctl and CDI would leave behind
are stored: the DataVolume (phase Succeeded) and the PersistentVolumeClaim CDI creates for it
(bound, owned by the DataVolume, with CDI's labels and the DataVolume's), or just the PVC
(`image-upload pvc`), plus with `--datasource` a DataSource pointing at the PVC. The
`--default-instancetype[-kind]` / `--default-preference[-kind]` labels are what `inferFromVolume`
reads later. Messages are virtctl's; a progress bar is drawn only on a terminal.
"""
from __future__ import annotations

import os
import stat
import sys
import time
import uuid
from pathlib import Path
from typing import Any, BinaryIO

import click

from instancetype.api import kinds
from instancetype.controller.images import image_path
from instancetype.jsonutil import dig

from .kubectl import CommandError, cluster_of, namespace_option, reports_errors

UPLOAD_TARGET = "cdi.kubevirt.io/storage.upload.target"
CONTENT_TYPE = "cdi.kubevirt.io/storage.contentType"
POD_PHASE = "cdi.kubevirt.io/storage.pod.phase"
FORCE_BIND = "cdi.kubevirt.io/storage.bind.immediate.requested"
CREATED_FOR_DV = "cdi.kubevirt.io/createdForDataVolume"
CDI_LABELS = {"app": "containerized-data-importer", "app.kubernetes.io/component": "storage",
              "app.kubernetes.io/managed-by": "cdi-controller"}
CDI_API = "cdi.kubevirt.io/v1beta1"


class UploadError(CommandError):
    """virtctl's error text (printed as is, as virtctl's `Execute` prints an error)."""


def default_labels(opts: dict) -> dict:
    """virtctl `setDefaultInstancetypeLabels`: only the non-empty values; a kind only with its name."""
    labels = {}
    if opts["default_instancetype"]:
        labels[kinds.LABEL_DEFAULT_INSTANCETYPE] = opts["default_instancetype"]
        if opts["default_instancetype_kind"]:
            labels[kinds.LABEL_DEFAULT_INSTANCETYPE_KIND] = opts["default_instancetype_kind"]
    if opts["default_preference"]:
        labels[kinds.LABEL_DEFAULT_PREFERENCE] = opts["default_preference"]
        if opts["default_preference_kind"]:
            labels[kinds.LABEL_DEFAULT_PREFERENCE_KIND] = opts["default_preference_kind"]
    return labels


def validate_defaults(opts: dict) -> None:
    """virtctl `validateDefaultInstancetypeArgs`."""
    for flag, allowed in (("instancetype", kinds.INSTANCETYPE_KINDS), ("preference", kinds.PREFERENCE_KINDS)):
        kind = opts[f"default_{flag}_kind"]
        if kind and kind not in allowed:
            raise UploadError(f"invalid default-{flag}-kind: invalid kind: {kind}. Allowed values are: "
                              f"[{' '.join(allowed)}]")
    if not opts["default_instancetype"] and opts["default_instancetype_kind"]:
        raise UploadError("--default-instancetype must be provided with --default-instancetype-kind")
    if not opts["default_preference"] and opts["default_preference_kind"]:
        raise UploadError("--default-preference must be provided with --default-preference-kind")
    if (opts["default_instancetype"] or opts["default_preference"]) and opts["no_create"]:
        raise UploadError("--default-instancetype and --default-preference cannot be used with --no-create")


def _parse_size(size: str, create_pvc: bool):
    from instancetype.api.quantity import Quantity
    from instancetype.errors import QuantityError

    try:
        return Quantity.parse(size)
    except QuantityError as e:
        if create_pvc:
            raise UploadError(f"invalid size={size}: {e}") from None
        raise UploadError(f"validation failed for size={size}: {e}") from None


def storage_spec(opts: dict, size: str) -> dict:
    """virtctl `createStorageSpec` (the DataVolume's `spec.storage`)."""
    spec: dict[str, Any] = {"resources": {"requests": {"storage": size}}}
    if opts["storage_class"]:
        spec["storageClassName"] = opts["storage_class"]
    if opts["access_mode"]:
        if opts["access_mode"] == "ReadOnlyMany":
            raise UploadError("cannot upload to a readonly volume, use either ReadWriteOnce or ReadWriteMany if "
                              "supported")
        spec["accessModes"] = [opts["access_mode"]]
    if opts["volume_mode"] == "block":
        spec["volumeMode"] = "Block"
    elif opts["volume_mode"] == "filesystem":
        spec["volumeMode"] = "Filesystem"
    return spec


def _pvc(name: str, ns: str, size: str, opts: dict, *, labels: dict, annotations: dict,
         owner: dict | None = None) -> dict:
    access = opts["access_mode"] or "ReadWriteOnce"
    spec: dict[str, Any] = {"accessModes": [access], "resources": {"requests": {"storage": size}},
                            "volumeMode": "Block" if opts["volume_mode"] == "block" else "Filesystem",
                            "volumeName": f"pvc-{uuid.uuid4()}"}
    if opts["storage_class"]:
        spec["storageClassName"] = opts["storage_class"]
    meta: dict[str, Any] = {"name": name, "namespace": ns, "annotations": annotations}
    if labels:
        meta["labels"] = labels
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec,
            "status": {"phase": "Bound", "accessModes": [access], "capacity": {"storage": size}}}


# --- the bytes ------------------------------------------------------------------------------------------

def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.2f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.2f} TiB"


def copy_image(src: BinaryIO, total: int, dest: Path, *, bar: bool) -> None:
    """Copy to `dest` (via a temporary file, so a failed copy leaves nothing half-written)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.part")
    done, start, last = 0, time.monotonic(), 0.0
    with open(tmp, "wb") as out:
        while True:
            chunk = src.read(1 << 20)
            if not chunk:
                break
            out.write(chunk)
            done += len(chunk)
            now = time.monotonic()
            if bar and (now - last > 0.1 or done == total):
                _draw(done, total, now - start)
                last = now
    if bar:
        _draw(done, total, time.monotonic() - start)
    os.replace(tmp, dest)


def _draw(done: int, total: int, elapsed: float) -> None:
    width = 40
    frac = done / total if total else 1.0
    filled = int(width * frac)
    body = "=" * filled + (">" if filled < width else "") + "-" * max(0, width - filled - 1)
    speed = done / elapsed if elapsed > 0 else 0.0
    sys.stdout.write(f"\r {_fmt_bytes(done)} / {_fmt_bytes(total)} [{body}] {frac * 100:.2f}% "
                     f"{_fmt_bytes(speed)}/s")
    sys.stdout.flush()


# --- the command ----------------------------------------------------------------------------------------

@click.command("image-upload")
@click.argument("args", nargs=-1)
@namespace_option
@click.option("--size", default="", help="The size of the DataVolume/PVC to create (ex. 10Gi, 500Mi).")
@click.option("--image-path", default="", help="Path to the local VM image.")
@click.option("--archive-path", default="", help="Path to the local archive.")
@click.option("--pvc-name", default="", help="The destination DataVolume/PVC name.")
@click.option("--storage-class", default="", help="The storage class for the PVC.")
@click.option("--access-mode", default="", help="The access mode for the PVC (e.g., ReadWriteOnce).")
@click.option("--volume-mode", default="", help="block or filesystem.")
@click.option("--no-create", is_flag=True, help="Don't attempt to create a new DataVolume/PVC.")
@click.option("--force-bind", is_flag=True, help="Force bind the PVC, ignoring the WaitForFirstConsumer logic.")
@click.option("--datasource", is_flag=True, help="Create a DataSource pointing to the created DataVolume/PVC.")
@click.option("--default-instancetype", default="", help="The default instance type to associate with the image.")
@click.option("--default-instancetype-kind", default="", help="The default instance type kind.")
@click.option("--default-preference", default="", help="The default preference to associate with the image.")
@click.option("--default-preference-kind", default="", help="The default preference kind.")
@click.option("--insecure", is_flag=True, help="Accepted for virtctl compatibility.")
@click.option("--uploadproxy-url", default="", help="Accepted for virtctl compatibility (no proxy here).")
@click.option("--wait-secs", default=300, type=click.IntRange(min=0), help="Accepted for virtctl compatibility.")
@click.option("--retry", default=5, type=click.IntRange(min=0), help="Accepted for virtctl compatibility.")
@click.pass_context
@reports_errors
def image_upload_cmd(ctx, args, namespace, **opts):
    """Upload a VM image to a DataVolume/PersistentVolumeClaim (virtctl image-upload)."""
    return run(ctx, list(args), namespace or "default", opts)


def _parse_args(args: list[str], opts: dict) -> tuple[bool, str]:
    if opts["pvc_name"]:
        if args:
            raise UploadError("cannot use --pvc-name and args")
        if opts["size"]:
            raise UploadError("if any flags in the group [pvc-name size] are set none of the others can be; "
                              "[pvc-name size] were all set")
        return True, opts["pvc_name"]
    if len(args) != 2:
        raise UploadError("expecting two args")
    kind = args[0].lower()
    if kind not in ("dv", "pvc"):
        raise UploadError(f"invalid resource type {args[0]}")
    return kind == "pvc", args[1]


def run(ctx: click.Context, args: list[str], ns: str, opts: dict) -> int:
    from instancetype.errors import Error

    if len(args) > 2:    # cobra.MaximumNArgs(2)
        raise UploadError(f"accepts at most 2 arg(s), received {len(args)}")
    create_pvc, name = _parse_args(args, opts)
    if opts["image_path"] and opts["archive_path"]:
        raise UploadError("if any flags in the group [image-path archive-path] are set none of the others can be; "
                          "[archive-path image-path] were all set")
    validate_defaults(opts)
    path = opts["image_path"] or opts["archive_path"]
    if not path:
        raise UploadError("either image-path or archive-path must be provided")
    try:
        src = open(path, "rb")
    except OSError as e:
        raise UploadError(f"failed to open image file: open {path}: {(e.strerror or str(e)).lower()}") from None
    with src:
        if not stat.S_ISREG(os.fstat(src.fileno()).st_mode):    # a device or a pipe has no size to check
            raise UploadError(f"failed to open image file: {path}: not a regular file")
        total = os.fstat(src.fileno()).st_size
        with cluster_of(ctx) as cluster:
            try:
                return _upload(cluster, src, total, path, name, ns, create_pvc, opts)
            except Error as e:
                raise UploadError(str(e)) from None


def _upload(cluster: Any, src: BinaryIO, total: int, path: str, name: str, ns: str, create_pvc: bool,
            opts: dict) -> int:
    from instancetype.store.base import NotFound

    archive = bool(opts["archive_path"])
    content_type = "archive" if archive else "kubevirt"
    out = sys.stdout
    created: list[tuple[str, str]] = []
    try:
        pvc = cluster.get("PersistentVolumeClaim", name, ns)
    except NotFound:
        pvc = None
        out.write(f"PVC {ns}/{name} not found\n")
        if opts["no_create"]:
            raise
    if pvc is not None:
        pvc = _existing_pvc(cluster, pvc, name, ns, create_pvc, opts, archive)
        size = str(dig(pvc, "spec", "resources", "requests", "storage", default=""))
        if size:
            _check_fits(total, _parse_size(size, True))
        out.write(f"Using existing PVC {ns}/{pvc['metadata']['name']}\n")
    else:
        quantity = _parse_size(opts["size"], create_pvc)
        _check_fits(total, quantity)
        size = str(quantity)
        labels = default_labels(opts)
        # Created as CDI leaves them once the upload succeeded; removed again if the copy fails.
        annotations = {UPLOAD_TARGET: "", CONTENT_TYPE: content_type, POD_PHASE: "Succeeded"}
        if opts["force_bind"]:
            annotations[FORCE_BIND] = ""
        if create_pvc:
            if opts["access_mode"] == "ReadOnlyMany":
                raise UploadError("cannot upload to a readonly volume, use either ReadWriteOnce or ReadWriteMany")
            pvc = cluster.create(_pvc(name, ns, size, opts, labels=labels, annotations=annotations)).object
            created.append(("PersistentVolumeClaim", name))
            out.write(f"PersistentVolumeClaim {ns}/{name} created\n")
        else:
            dv = {"apiVersion": CDI_API, "kind": "DataVolume",
                  "metadata": {"name": name, "namespace": ns},
                  "spec": {"contentType": content_type, "source": {"upload": {}},
                           "storage": storage_spec(opts, size)},
                  "status": {"phase": "Succeeded", "progress": "100.0%", "claimName": name}}
            if opts["force_bind"]:
                dv["metadata"]["annotations"] = {FORCE_BIND: ""}
            if labels:
                dv["metadata"]["labels"] = labels
            dv = cluster.create(dv).object
            created.append(("DataVolume", name))
            owner = {"apiVersion": CDI_API, "kind": "DataVolume", "name": name, "uid": dv["metadata"]["uid"],
                     "controller": True, "blockOwnerDeletion": True}
            annotations[CREATED_FOR_DV] = dv["metadata"]["uid"]
            pvc = cluster.create(_pvc(name, ns, size, opts, labels={**CDI_LABELS, **labels},
                                      annotations=annotations, owner=owner)).object
            out.write(f"DataVolume {ns}/{name} created\n")
    dest = image_path(cluster.store.path, ns, name)
    out.write(f"Uploading data to {dest}\n")
    out.write("\n")
    out.flush()
    try:
        copy_image(src, total, dest, bar=out.isatty())
    except OSError as e:
        for kind, n in reversed(created):
            try:
                cluster.delete(kind, n, ns)
            except NotFound:
                pass
        raise UploadError(f"error uploading image: {e}") from None
    out.write("\n")
    if not created:
        _finish(cluster, name, ns)
    if opts["datasource"]:
        _datasource(cluster, name, ns, opts)
    out.write("Uploading data completed successfully, waiting for processing to complete, you can hit ctrl-c "
              "without interrupting the progress\n")
    out.write("Processing completed successfully\n")
    out.write(f"Uploading {path} completed successfully\n")
    return 0


def _check_fits(total: int, quantity: Any) -> None:
    """CDI refuses an image larger than the claim (its upload server's size validation)."""
    capacity = quantity.value()
    if total > capacity:
        raise UploadError(f"Virtual image size {total} is larger than the reported available storage {capacity}. "
                          "A larger PVC is required.")


def _existing_pvc(cluster: Any, pvc: dict, name: str, ns: str, create_pvc: bool, opts: dict, archive: bool) -> dict:
    """virtctl `getAndValidateUploadPVC` + `ensurePVCSupportsUpload`."""
    from instancetype.store.base import NotFound

    ann = (pvc.get("metadata") or {}).get("annotations") or {}
    if not opts["no_create"] and not opts["size"]:
        raise UploadError("PVC creation requires specifying a size")
    if not create_pvc:
        try:
            cluster.get("DataVolume", name, ns)
        except NotFound:
            raise UploadError(f"no dataVolume is associated with the existing PVC {ns}/{name}") from None
    if ann.get(POD_PHASE) == "Succeeded":
        raise UploadError(f"PVC {name} already successfully imported/cloned/updated")
    if not opts["no_create"] and UPLOAD_TARGET not in ann:
        raise UploadError(f"PVC {name} not available for upload")
    if archive and ann.get(CONTENT_TYPE) != "archive":
        raise UploadError(f"PVC {name} does not have archive contentType annotation")
    if UPLOAD_TARGET not in ann:
        pvc["metadata"]["annotations"] = {**ann, UPLOAD_TARGET: ""}
        pvc = cluster.update(pvc).object
    return pvc


def _finish(cluster: Any, name: str, ns: str) -> None:
    """What CDI does once the bytes are in an existing claim: its upload pod succeeded."""
    pvc = cluster.get("PersistentVolumeClaim", name, ns)
    pvc["metadata"]["annotations"] = {**(pvc["metadata"].get("annotations") or {}), POD_PHASE: "Succeeded"}
    cluster.update(pvc)


def _datasource(cluster: Any, name: str, ns: str, opts: dict) -> None:
    """virtctl `handleDataSource`: create, or relabel and repoint an existing DataSource."""
    from instancetype.store.base import NotFound

    labels = default_labels(opts)
    try:
        ds = cluster.get("DataSource", name, ns)
    except NotFound:
        ds = {"apiVersion": CDI_API, "kind": "DataSource", "metadata": {"name": name, "namespace": ns},
              "spec": {"source": {"pvc": {"name": name, "namespace": ns}}}}
        if labels:
            ds["metadata"]["labels"] = labels
        cluster.create(ds)
        sys.stdout.write(f"Created a new DataSource {ns}/{name}\n")
        return
    ds["metadata"]["labels"] = {**(ds["metadata"].get("labels") or {}), **labels}
    ds.setdefault("spec", {}).setdefault("source", {})["pvc"] = {"name": name, "namespace": ns}
    cluster.update(ds)
    sys.stdout.write(f"Updated an existing DataSource {ns}/{name}\n")
