"""Volume hotplug in the VM controller (pkg/virt-controller/watch/vm/vm.go: handleVolumeRequests,
handleDeclarativeVolumeHotplug with pkg/storage/hotplug HandleDeclarativeVolumes; updateStatus's
trimDoneVolumeRequests; syncRestartRequired's validLiveUpdateVolumes / validLiveUpdateDisks).

* `status.volumeRequests` (recorded by virt-api's VM subresource under `HotplugVolumes`): each is
  applied to the VM's template, and a running VMI gets the volume added or removed through the
  VMI's subresource rules (controller/volume_rules.vmi_patch); the template is then written,
  and a request whose volume and disk are in (or out of) the template is dropped from the status.
* the declarative sync (`DeclarativeHotplugVolumes` without `HotplugVolumes`): the running VMI's
  hotpluggable volumes and their disks follow the VM's template: new ones patched in, ones gone
  or changed patched out (a changed one comes back at the next sync).

The simulated node reports every volume it attaches at once (controller/node.volume_status); a
volume that was not ready to attach is looked at again at each reconcile.
"""
from __future__ import annotations

from instancetype.jsonutil import clone
from instancetype.store.base import APIError

from .. import node
from .. import volume_rules as rules
from .state import VMSync

ERROR_REASON = "HotplugVolumeError"          # hotplugVolumeErrorReason


def _template_spec(vm: dict) -> dict:
    return ((vm.get("spec") or {}).get("template") or {}).get("spec") or {}


def _running(vmi: dict | None) -> bool:
    return vmi is not None and not node.terminating(vmi) and (vmi.get("status") or {}).get("phase") == "Running"


def _any_hotpluggable(spec: dict) -> bool:
    return any(isinstance(v, dict) and rules.hotpluggable(v) for v in spec.get("volumes") or ())


def sync(s: VMSync) -> dict | None:
    if not (s.vm.get("status") or {}).get("volumeRequests") and not _any_hotpluggable(_template_spec(s.vm)) \
            and (s.vmi is None or not _any_hotpluggable(s.vmi.get("spec") or {})):
        return None         # the common case, at the cost of a scan: nothing to hot-plug or unplug
    spec = clone(_template_spec(s.vm))
    try:
        _volume_requests(s, spec)
    except APIError as e:
        s.failure = (ERROR_REASON, f"Error encountered while handling volume hotplug requests: {e}")
        return None
    if not rules.hotplug_gate(s.config) and rules.declarative_gate(s.config) \
            and (s.vm.get("spec") or {}).get("updateVolumesStrategy") != "Migration":
        try:
            _declarative(s, spec)
        except APIError as e:
            s.failure = (ERROR_REASON, f"Error encountered while handling declarative hotplug volumes: {e}")
            return None
    _pending_attachments(s)
    if spec != _template_spec(s.vm):
        vm_spec = clone(s.stored.get("spec") or {})
        vm_spec.setdefault("template", {})["spec"] = spec
        return s.restart_from(s.store.update({**s.stored, "spec": vm_spec}))
    return None


def _volume_requests(s: VMSync, spec: dict) -> None:
    """handleVolumeRequests."""
    requests = (s.vm.get("status") or {}).get("volumeRequests") or ()
    if not requests:
        return
    running = _running(s.vmi)
    names = {v.get("name") for v in ((s.vmi or {}).get("spec") or {}).get("volumes") or () if isinstance(v, dict)}
    for request in requests:
        if not isinstance(request, dict):
            continue
        rules.apply_request(spec, request)
        if not running:
            continue
        add, remove = request.get("addVolumeOptions"), request.get("removeVolumeOptions")
        if add is not None and add.get("name") not in names or remove is not None and remove.get("name") in names:
            assert s.vmi is not None
            s.vmi = rules.vmi_patch(s.store, s.vmi, request, s.config)


def _declarative(s: VMSync, spec: dict) -> None:
    """HandleDeclarativeVolumes' patchHotplugVolumes, against the template as handled so far."""
    vmi = s.vmi
    if not _running(vmi):
        return
    assert vmi is not None
    vmi_spec = vmi.get("spec") or {}
    vm_volumes = {v.get("name"): v for v in spec.get("volumes") or () if isinstance(v, dict)}
    vm_disks = {d.get("name"): d for d in ((spec.get("domain") or {}).get("devices") or {}).get("disks") or ()
                if isinstance(d, dict)}
    vmi_volumes = [v for v in vmi_spec.get("volumes") or () if isinstance(v, dict)]
    vmi_disks = [d for d in ((vmi_spec.get("domain") or {}).get("devices") or {}).get("disks") or ()
                 if isinstance(d, dict)]
    # filterHotplugVMIVolumes: a hotplugged volume gone from the VM, or changed there, goes
    kept = [v for v in vmi_volumes if not rules.hotpluggable(v) or (
        v.get("name") in vm_volumes
        and not (rules.hotpluggable(vm_volumes[v.get("name")]) and vm_volumes[v.get("name")] != v))]
    # getNewHotplugVMVolumes: the VM's hotpluggable volumes the VMI lacks (and has no status
    # for: one being unplugged still has its status)
    in_vmi = {v.get("name") for v in vmi_volumes}
    with_status = {v.get("name") for v in (vmi.get("status") or {}).get("volumeStatus") or () if isinstance(v, dict)}
    new = [clone(v) for v in vm_volumes.values() if rules.hotpluggable(v) and v.get("name") not in in_vmi
           and v.get("name") not in with_status]
    volumes = kept + new
    by_name = {v.get("name"): v for v in volumes}
    # filterHotplugVMIDisks / getNewHotplugVMDisks
    disks = []
    for d in vmi_disks:
        if d.get("name") not in by_name:
            vm_disk = vm_disks.get(d.get("name"))
            if vm_disk is None:
                continue
            if d.get("name") in vm_volumes and (vm_disk.get("cdrom") is None or d.get("cdrom") is None):
                continue
        disks.append(d)
    have = {d.get("name") for d in vmi_disks}
    disks += [clone(d) for name, d in vm_disks.items()
              if name in by_name and rules.hotpluggable(by_name[name]) and name not in have]
    if volumes == vmi_volumes and disks == vmi_disks:
        return
    changed = clone(vmi)
    changed["spec"]["volumes"] = volumes
    changed["spec"].setdefault("domain", {}).setdefault("devices", {})["disks"] = disks
    s.vmi = rules.hotplugged(s.store, vmi, changed)


def _pending_attachments(s: VMSync) -> None:
    """A hot-plugged volume the node could not attach yet (its claim missing, its DataVolume not
    filled) is looked at again."""
    vmi = s.vmi
    if not _running(vmi):
        return
    assert vmi is not None
    waiting = [v for v in (vmi.get("status") or {}).get("volumeStatus") or ()
               if isinstance(v, dict) and v.get("hotplugVolume") is not None and v.get("phase") != "Ready"]
    if not waiting:
        return
    changed = clone(vmi)
    status = node.volume_status(changed, lambda kind, name: rules.lookup(s.store, kind, name, changed))
    if status != vmi.get("status"):
        s.vmi = rules.hotplugged(s.store, vmi, changed)


def trim_done(vm: dict, status: dict) -> None:
    """trimDoneVolumeRequests: a request is done once its volume and disk are both in the
    template (an add) or both out of it (a remove)."""
    requests = status.get("volumeRequests")
    if not requests:
        return
    spec = _template_spec(vm)
    volumes = {v.get("name") for v in spec.get("volumes") or () if isinstance(v, dict)}
    disks = {d.get("name") for d in ((spec.get("domain") or {}).get("devices") or {}).get("disks") or ()
             if isinstance(d, dict)}
    kept = []
    for request in requests:
        add, remove = (request or {}).get("addVolumeOptions"), (request or {}).get("removeVolumeOptions")
        name = (add or remove or {}).get("name")
        done = (add is not None and name in volumes and name in disks) or (
            add is None and name not in volumes and name not in disks)
        if not done:
            kept.append(request)
    if kept:
        status["volumeRequests"] = kept
    else:
        status.pop("volumeRequests", None)      # an empty list, omitted


def _hotplug(volume: dict | None) -> bool:
    """storagetypes.IsHotplugVolume: hotpluggable, or a memory dump volume."""
    return volume is not None and (rules.hotpluggable(volume) or (
        isinstance(volume.get("memoryDump"), dict) and volume["memoryDump"].get("hotpluggable") is True))


def live_update_volumes(old: dict, new: dict) -> bool:
    """validLiveUpdateVolumes over two expanded template specs: only hotplug volumes were added,
    changed or removed (a claim or DataVolume may change too under the Migration strategy, which
    the simulation does not run)."""
    old_volumes = {v.get("name"): v for v in old.get("volumes") or () if isinstance(v, dict)}
    for v in new.get("volumes") or ():
        if not isinstance(v, dict):
            continue
        previous = old_volumes.pop(v.get("name"), None)
        if _hotplug(v):
            continue
        if previous is None or previous != v:
            return False
    return all(_hotplug(v) for v in old_volumes.values())


def live_update_disks(old: dict, new: dict) -> bool:
    """validLiveUpdateDisks: only disks of hotplug volumes were added, changed or removed (and
    no CD-ROM removed)."""
    def disks(spec: dict) -> dict:
        return {d.get("name"): d for d in ((spec.get("domain") or {}).get("devices") or {}).get("disks") or ()
                if isinstance(d, dict)}

    old_disks, new_disks = disks(old), disks(new)
    old_volumes = {v.get("name"): v for v in old.get("volumes") or () if isinstance(v, dict)}
    new_volumes = {v.get("name"): v for v in new.get("volumes") or () if isinstance(v, dict)}
    remaining = dict(old_disks)
    for name, disk in new_disks.items():
        previous = remaining.pop(name, None)
        if _hotplug(new_volumes.get(name)):
            continue
        if previous is None or previous != disk:
            return False
    for name, disk in remaining.items():
        if name in old_volumes and not _hotplug(old_volumes[name]):
            return False
        if disk.get("cdrom") is not None and name not in new_disks:
            return False
    return True
