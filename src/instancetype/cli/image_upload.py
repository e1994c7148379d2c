"""virtctl `image-upload dv|pvc NAME` on the embedded cluster: the command line.

There is no CDI upload proxy: `controller/upload.py` plays CDI's part (the DataVolume and
claim, their phases, the bytes kept beside the state file under the claim's uid), in steps
that leave nothing saying `Succeeded` before the bytes are in place. Here: virtctl's flags, its
argument checks and messages; a progress bar is drawn only on a terminal. The
`--default-instancetype[-kind]` / `--default-preference[-kind]` labels are what
`inferFromVolume` reads later.
"""
from __future__ import annotations

import os
import stat
import sys
import time
from typing import Any

import click

from instancetype.api import kinds, names
from instancetype.api.gotext import quote

from .kubectl import CommandError, cluster_of, namespace_option, reports_errors


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


# --- the bytes ------------------------------------------------------------------------------------------

def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.2f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.2f} TiB"


def _draw(done: int, total: int, elapsed: float) -> None:
    width = 40
    frac = done / total if total else 1.0
    filled = int(width * frac)
    body = "=" * filled + (">" if filled < width else "") + "-" * max(0, width - filled - 1)
    speed = done / elapsed if elapsed > 0 else 0.0
    sys.stdout.write(f"\r {_fmt_bytes(done)} / {_fmt_bytes(total)} [{body}] {frac * 100:.2f}% "
                     f"{_fmt_bytes(speed)}/s")
    sys.stdout.flush()


class _Bar:
    """virtctl's progress bar, redrawn at most every 0.1 s."""

    def __init__(self, total: int):
        self.total, self.start, self.last, self.n = total, time.monotonic(), 0.0, 0

    def update(self, done: int) -> None:
        self.n = done
        now = time.monotonic()
        if now - self.last > 0.1 or done == self.total:
            _draw(done, self.total, now - self.start)
            self.last = now

    def done(self) -> None:
        _draw(self.n, self.total, time.monotonic() - self.start)


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
    return run(ctx, list(args), namespace, opts)


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
    bad = names.path_segment_errors(name)
    if bad:    # client-go's check before a name goes into a request's path
        raise UploadError(f"invalid resource name {quote(name)}: [{' '.join(bad)}]")
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


def _upload(cluster: Any, src: Any, total: int, path: str, name: str, ns: str, create_pvc: bool,
            opts: dict) -> int:
    from instancetype.controller.upload import UploadRequest, begin

    req = UploadRequest(name=name, namespace=ns, to_pvc=create_pvc, size=opts["size"], no_create=opts["no_create"],
                        archive=bool(opts["archive_path"]), storage_class=opts["storage_class"],
                        access_mode=opts["access_mode"], volume_mode=opts["volume_mode"],
                        force_bind=opts["force_bind"], labels=default_labels(opts), datasource=opts["datasource"])
    out = sys.stdout

    def say(line: str) -> None:
        out.write(line + "\n")

    if cluster.remote:
        return _claim_on_cluster(cluster, req, total, say)
    upload = begin(cluster, req, total, say)
    out.write(f"Uploading data to {upload.dest}\n")
    out.write("\n")
    out.flush()
    bar = _Bar(total) if out.isatty() else None
    upload.copy(src, bar.update if bar else None)
    if bar:
        bar.done()
    out.write("\n")
    for line in upload.finish():
        out.write(line + "\n")
    out.write("Uploading data completed successfully, waiting for processing to complete, you can hit ctrl-c "
              "without interrupting the progress\n")
    out.write("Processing completed successfully\n")
    out.write(f"Uploading {path} completed successfully\n")
    return 0


NO_UPLOAD_PROXY = ("the image bytes were not sent: no CDI upload proxy answers on this cluster (the {what} "
                   "{ns}/{name} is created and waits for them)")


def _claim_on_cluster(cluster: Any, req: Any, total: int, say: Any) -> int:
    """On a cluster: the DataVolume and its claim (CDI's labels, the default instancetype and
    preference labels) or the claim alone, as virtctl creates them; the bytes go through CDI's
    upload proxy, which this project does not run, so that is said in one line (exit 1, as
    virtctl when no upload proxy answers)."""
    from instancetype.controller.upload import _create, check_fits, parse_size
    from instancetype.store.base import NotFound

    ns, name = req.namespace, req.name
    try:
        cluster.get("PersistentVolumeClaim", name, ns)
        say(f"Using existing PVC {ns}/{name}")
    except NotFound:
        say(f"PVC {ns}/{name} not found ")    # sic: virtctl's trailing space
        if req.no_create:
            raise
        quantity = parse_size(req.size, req.to_pvc)
        check_fits(total, quantity)
        _create(cluster, req, str(quantity), say)
    sys.stdout.flush()
    raise UploadError(NO_UPLOAD_PROXY.format(what="PersistentVolumeClaim" if req.to_pvc else "DataVolume", ns=ns,
                                             name=name))
