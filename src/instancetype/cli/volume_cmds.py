"""virtctl `addvolume VMI --volume-name=NAME` and `removevolume VMI --volume-name=NAME`
(pkg/virtctl/vm/add_volume.go, remove_volume.go, v1.7), on the embedded store or a cluster.

As virtctl: `--dry-run` prints `Dry Run execution` first; addvolume finds the volume as a
DataVolume, else a PersistentVolumeClaim, of that name (`error adding volume, Volume NAME is not
a DataVolume or PersistentVolumeClaim`), checks `--disk-type` (disk, lun) and `--bus` (disk: scsi
or virtio; lun: scsi) and `--cache` (none, writethrough, writeback), gives the disk the volume's
name as its serial unless `--serial` says otherwise, then calls the VMI's subresource, or the
VM's with `--persist`. Success: `Successfully submitted add volume request to VM VMI for volume
NAME` (remove: `... remove volume request ...`) on stdout; a refusal: `error adding volume, <the
server's message>` (`error removing volume, ...`), exit 1.
"""
from __future__ import annotations

import sys

import click

from .completers import complete_vms
from .kubectl import CommandError, cluster_of, namespace_option, reports_errors

CACHES = ("none", "writethrough", "writeback")


def _one_name(args: tuple[str, ...]) -> str:
    if len(args) != 1:         # cobra.ExactArgs(1)
        raise CommandError(f"accepts 1 arg(s), received {len(args)}")
    return args[0]


def _required(volume_name: str | None) -> str:
    if volume_name is None:    # cmd.MarkFlagRequired
        raise CommandError('required flag(s) "volume-name" not set')
    return volume_name


def _volume_source(cluster, name: str, namespace: str) -> dict:
    """getVolumeSourceFromVolume: a DataVolume of that name, else a claim."""
    from instancetype.errors import Error

    for kind, source in (("DataVolume", {"dataVolume": {"name": name, "hotpluggable": True}}),
                         ("PersistentVolumeClaim", {"persistentVolumeClaim": {"claimName": name,
                                                                              "hotpluggable": True}})):
        try:
            cluster.get(kind, name, namespace)
            return source
        except Error:
            continue
    raise CommandError(f"error adding volume, Volume {name} is not a DataVolume or PersistentVolumeClaim")


def _disk(disk_type: str, bus: str) -> dict:
    if disk_type == "disk":
        if bus not in ("scsi", "virtio"):
            raise CommandError(f"Invalid bus type '{bus}' for disk. Only 'scsi' and 'virtio' are supported.")
        return {"name": "", "disk": {"bus": bus}}
    if disk_type == "lun":
        if bus != "scsi":
            raise CommandError(f"Invalid bus type '{bus}' for LUN disk. Only 'scsi' bus is supported.")
        return {"name": "", "lun": {"bus": bus}}
    raise CommandError(f"Invalid disk type '{disk_type}'. Only LUN and Disk are supported.")


@click.command("addvolume")
@click.argument("args", nargs=-1, shell_complete=complete_vms)
@click.option("--volume-name", help="name used in volumes section of spec")
@click.option("--serial", default="", help="serial number you want to assign to the disk")
@click.option("--cache", default="", help="caching options attribute control the cache mechanism")
@click.option("--persist", is_flag=True, help="if set, the added volume will be persisted in the VM spec (if it exists)")
@click.option("--dry-run", is_flag=True, help="Check the request, change nothing.")
@click.option("--disk-type", default="disk", help="specifies disk type to be hotplugged (disk/lun). Disk by default.")
@click.option("--bus", default="scsi", help="specifies disk bus. scsi by default.")
@namespace_option
@click.pass_context
@reports_errors
def addvolume_cmd(ctx: click.Context, args: tuple[str, ...], volume_name: str | None, serial: str, cache: str,
                  persist: bool, dry_run: bool, disk_type: str, bus: str, namespace: str) -> int:
    """Add a volume to a running VM (virtctl addvolume)."""
    name, volume, options = _request(args, volume_name, dry_run)
    with cluster_of(ctx) as cluster:
        source = _volume_source(cluster, volume, namespace)     # before the flags are checked
        disk = _disk(disk_type, bus)
        disk["serial"] = serial or volume
        if cache:
            if cache not in CACHES:
                raise CommandError(f"error adding volume, invalid cache value {cache}")
            disk["cache"] = cache
        options.update(disk=disk, volumeSource=source)
        _call(cluster, "add", name, namespace, options, persist)
    sys.stdout.write(f"Successfully submitted add volume request to VM {name} for volume {volume}\n")
    return 0


def _request(args: tuple[str, ...], volume_name: str | None, dry_run: bool) -> tuple[str, str, dict]:
    """The VM's name, the volume's, and the options both verbs start from (virtctl checks the
    arguments, then says it is a dry run, before it reads anything)."""
    name = _one_name(args)
    volume = _required(volume_name)
    options: dict = {"name": volume}
    if dry_run:
        sys.stdout.write("Dry Run execution\n")
        options["dryRun"] = ["All"]
    return name, volume, options


def _call(cluster, action: str, name: str, namespace: str, options: dict, persist: bool) -> None:
    from instancetype.errors import Error

    verb = "adding" if action == "add" else "removing"
    call = cluster.add_volume if action == "add" else cluster.remove_volume
    try:
        call(name, namespace, options, persist=persist)
    except Error as e:
        raise CommandError(f"error {verb} volume, {e}") from None


@click.command("removevolume")
@click.argument("args", nargs=-1, shell_complete=complete_vms)
@click.option("--volume-name", help="name used in volumes section of spec")
@click.option("--persist", is_flag=True, help="if set, the volume will be removed from the VM spec too (if it exists)")
@click.option("--dry-run", is_flag=True, help="Check the request, change nothing.")
@namespace_option
@click.pass_context
@reports_errors
def removevolume_cmd(ctx: click.Context, args: tuple[str, ...], volume_name: str | None, persist: bool,
                     dry_run: bool, namespace: str) -> int:
    """Remove a hotplugged volume from a running VM (virtctl removevolume)."""
    name, volume, options = _request(args, volume_name, dry_run)
    with cluster_of(ctx) as cluster:
        _call(cluster, "remove", name, namespace, options, persist)
    sys.stdout.write(f"Successfully submitted remove volume request to VM {name} for volume {volume}\n")
    return 0
