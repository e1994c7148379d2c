"""virtctl `addvolume` / `removevolume`: what virt-api's VM and VMI subresources check and write
(pkg/virt-api/rest/volumes.go: addVolumeRequestHandler, removeVolumeRequestHandler,
vmVolumePatch, vmiVolumePatch, vmVolumePatchStatus, verifyVolumeOption,
generateVMVolumeRequestPatch), on any store, with `controller.ApplyVolumeRequestOnVMISpec`
(pkg/controller/controller.go) that they and the VM controller share.

With v1.9's default feature gates (`DeclarativeHotplugVolumes`, Beta) the VM's subresource changes
the VM's template (a hotpluggable volume and its disk) and the VM controller hot-plugs it into the
running VMI (controller/vmsync/volumes.py); the VMI's subresource refuses a VMI owned by a VM.
With `HotplugVolumes` on (deprecated, it wins over the declarative gate) the VM's subresource
records the request in the VM's `status.volumeRequests` for the controller to carry out, and the
VMI's subresource patches the VMI itself (an "ephemeral" hotplug, lost at the next start).

The embedded Cluster calls `act` directly; virt-api (`webhook/virtapi/actions.volume_action`) is
given this module as its `VolumeVerbs` by whoever builds it (serve), so that the drivers import no
other. What the simulated node then reports for a hot-plugged volume: `node.volume_status`.
"""
from __future__ import annotations

from typing import Any

from instancetype.jsonutil import clone
from instancetype.store.base import APIError, BadRequest, Conflict, Invalid, NotFound, Store, internal_error

from . import node
from .pause import VMI_RESOURCE, fetch_vmi

VM_RESOURCE = "virtualmachine.kubevirt.io"
HOTPLUG_GATE, DECLARATIVE_GATE = "HotplugVolumes", "DeclarativeHotplugVolumes"
NOT_ENABLED = "Enable DeclarativeHotplugVolumes or HotplugVolumes feature gate to use this API."
VMI_NOT_RUNNING = "VMI is not running"
STATUS_VALIDATOR = "kubevirt-crd-status-validator.kubevirt.io"
ACTIONS = ("addvolume", "removevolume")


# --- the cluster's feature gates (featuregate.IsEnabled) -------------------------------------------

def _gate(config: dict | None, gate: str, *, beta: bool) -> bool:
    dev = (config or {}).get("developerConfiguration") or {}
    if gate in (dev.get("featureGates") or ()):
        return True
    if gate in (dev.get("disabledFeatureGates") or ()):
        return False
    return beta


def hotplug_gate(config: dict | None) -> bool:
    """HotplugVolumesEnabled: the deprecated gate, off unless listed."""
    return _gate(config, HOTPLUG_GATE, beta=False)


def declarative_gate(config: dict | None) -> bool:
    """DeclarativeHotplugVolumesEnabled: Beta in v1.9, on unless disabled."""
    return _gate(config, DECLARATIVE_GATE, beta=True)


def check_enabled(config: dict | None) -> None:
    if not (hotplug_gate(config) or declarative_gate(config)):
        raise BadRequest(NOT_ENABLED)


# --- the options (v1.AddVolumeOptions, v1.RemoveVolumeOptions) -----------------------------------

def add_request(options: dict) -> dict:
    """The handler's checks of decoded AddVolumeOptions, then the VirtualMachineVolumeRequest it
    builds: the disk named after the volume, the source marked hotpluggable."""
    if not options.get("name"):
        raise BadRequest("AddVolumeOptions requires name to be set")
    if options.get("disk") is None:
        raise BadRequest("AddVolumeOptions requires disk to not be nil")
    if options.get("volumeSource") is None:
        raise BadRequest("AddVolumeOptions requires VolumeSource to not be nil")
    opts = clone(options)
    opts["disk"] = {**opts["disk"], "name": opts["name"]}
    source = opts["volumeSource"]
    for kind in ("dataVolume", "persistentVolumeClaim"):
        if source.get(kind) is not None:
            source[kind] = {**source[kind], "hotpluggable": True}
            break
    return {"addVolumeOptions": opts}


def remove_request(options: dict) -> dict:
    if not options.get("name"):
        raise BadRequest("RemoveVolumeOptions requires name to be set")
    return {"removeVolumeOptions": clone(options)}


def dry_run(request: dict) -> bool:
    """getDryRunOption: the options' first `dryRun` value is `All` (other values are ignored)."""
    opts = request.get("addVolumeOptions") or request.get("removeVolumeOptions") or {}
    return (opts.get("dryRun") or [None])[0] == "All"


# --- the rules shared with the controller --------------------------------------------------------

def _source_name(volume: dict) -> str:
    """The DataVolume's or claim's name a volume (or HotplugVolumeSource) refers to, else ""."""
    dv, pvc = volume.get("dataVolume"), volume.get("persistentVolumeClaim")
    if isinstance(dv, dict):
        return dv.get("name") or ""
    if isinstance(pvc, dict):
        return pvc.get("claimName") or ""
    return ""


def hotpluggable(volume: dict) -> bool:
    """storagetypes.IsDeclarativeHotplugVolume: a DataVolume or claim marked hotpluggable."""
    return any(isinstance(volume.get(k), dict) and volume[k].get("hotpluggable") is True
               for k in ("dataVolume", "persistentVolumeClaim"))


def verify(volumes: list, request: dict) -> str | None:
    """verifyVolumeOption: why the request cannot apply to `volumes`, or None."""
    add, remove = request.get("addVolumeOptions"), request.get("removeVolumeOptions")
    for volume in volumes:
        if not isinstance(volume, dict):
            continue
        if add is not None:
            source = _source_name(add.get("volumeSource") or {})
            if volume.get("name") == add.get("name"):
                return f"Unable to add volume [{add.get('name')}] because volume with that name already exists"
            if source and _source_name(volume) == source:
                return f"Unable to add volume source [{source}] because it already exists"
        elif remove is not None and remove.get("name") in (volume.get("name"), _source_name(volume) or None):
            if not hotpluggable(volume):
                return f"Unable to remove volume [{volume.get('name')}] because it is not hotpluggable"
            return None
    if remove is not None:
        return f"Unable to remove volume [{remove.get('name')}] because it does not exist"
    return None


def apply_request(spec: dict, request: dict) -> dict:
    """ApplyVolumeRequestOnVMISpec: `spec` (a VMI spec, changed in place and returned) with the
    volume and disk added, or both removed."""
    add, remove = request.get("addVolumeOptions"), request.get("removeVolumeOptions")
    devices = spec.setdefault("domain", {}).setdefault("devices", {})
    volumes = [v for v in spec.get("volumes") or () if isinstance(v, dict)]
    disks = [d for d in devices.get("disks") or () if isinstance(d, dict)]
    if add is not None:
        name = add.get("name")
        if any(v.get("name") == name for v in volumes):
            return spec
        volume: dict[str, Any] = {"name": name}
        source = add.get("volumeSource") or {}
        for kind in ("persistentVolumeClaim", "dataVolume"):
            if source.get(kind) is not None:
                volume[kind] = {**source[kind], "hotpluggable": True}
                break
        spec["volumes"] = volumes + [volume]
        if add.get("disk") is not None:
            devices["disks"] = disks + [{**clone(add["disk"]), "name": name}]
    elif remove is not None:
        name = remove.get("name")
        spec["volumes"] = [v for v in volumes if v.get("name") != name]
        devices["disks"] = [d for d in disks if d.get("name") != name]
    return spec


def _template_spec(vm: dict) -> dict:
    return ((vm.get("spec") or {}).get("template") or {}).get("spec") or {}


def _conflict(resource: str, name: str, detail: str) -> Conflict:
    return Conflict(f'Operation cannot be fulfilled on {resource} "{name}": {detail}', kind=resource, name=name)


def fetch_vm(store: Store, name: str, namespace: str) -> dict:
    try:
        return store.get("VirtualMachine", name, namespace)
    except NotFound:
        raise NotFound(f'{VM_RESOURCE} "{name}" not found', kind="virtualmachine", name=name) from None


def _patch_failed(what: str, e: APIError) -> APIError:
    """virt-api's answer when its patch fails: an Invalid error as the API server gave it, a
    Conflict to retry (the read is stale), anything else `unable to patch ...`."""
    if isinstance(e, (Invalid, Conflict)):
        return e
    return internal_error(f"unable to patch {what}: {e}")


# --- the three patches ------------------------------------------------------------------------

def vm_spec_patch(store: Store, name: str, namespace: str, request: dict, config: dict | None, *,
                  inline: bool) -> dict:
    """vmVolumePatch (DeclarativeHotplugVolumes): the VM's template gets (or loses) the volume
    and disk; admission runs as on any VM update; the controller then hot-plugs."""
    vm = fetch_vm(store, name, namespace)
    problem = verify(_template_spec(vm).get("volumes") or [], request)
    if problem:
        raise _conflict(VM_RESOURCE, name, problem)
    changed = clone(vm)
    spec = changed.setdefault("spec", {}).setdefault("template", {}).setdefault("spec", {})
    apply_request(spec, request)
    return write_vm(store, vm, changed, config, inline=inline, what="vm")


def write_vm(store: Store, old: dict, new: dict, config: dict | None, *, inline: bool, what: str) -> dict:
    """A VM update as the API server takes it: on a store that calls no webhooks, KubeVirt's
    admission first; on the resourceVersion read; then (inline) the controller's reconcile."""
    from instancetype.lifecycle.admission import Refused, admit

    try:
        if not store.calls_admission_webhooks:
            try:
                new = admit(store, new, operation="UPDATE", old=old, config=config).obj
            except Refused as e:
                raise Invalid(f'admission webhook "{e.webhook}" denied the request: {e.result.message}') from None
        stored = store.update(new)
    except APIError as e:
        raise _patch_failed(what, e) from None
    if inline:
        from . import vm as vmctl

        stored = vmctl.reconcile(store, stored, config)
    return stored


def vm_status_patch(store: Store, name: str, namespace: str, request: dict, config: dict | None, *,
                    inline: bool) -> dict:
    """vmVolumePatchStatus (HotplugVolumes): the request appended to `status.volumeRequests`
    (generateVMVolumeRequestPatch), checked as the status webhook checks it
    (validateVolumeRequests), for the controller to carry out."""
    vm = fetch_vm(store, name, namespace)
    problem = verify(_template_spec(vm).get("volumes") or [], request)
    if problem:
        raise _conflict(VM_RESOURCE, name, problem)
    requests = list((vm.get("status") or {}).get("volumeRequests") or ())
    problem, requests = _queued(requests, request)
    if problem:
        raise _conflict(VM_RESOURCE, name, problem)
    changed = clone(vm)
    changed.setdefault("status", {})["volumeRequests"] = requests
    _admit_status(changed, config)
    try:
        stored = store.update(changed, subresource="status")
    except APIError as e:
        raise _patch_failed("vm status", e) from None
    if inline:
        from . import vm as vmctl

        stored = vmctl.reconcile(store, stored, config)
    return stored


def _queued(requests: list, request: dict) -> tuple[str | None, list]:
    """addAddVolumeRequests / addRemoveVolumeRequests."""
    add, remove = request.get("addVolumeOptions"), request.get("removeVolumeOptions")
    if add is not None:
        name = add.get("name")
        for queued in requests:
            if (queued.get("addVolumeOptions") or {}).get("name") == name and queued.get("addVolumeOptions"):
                return f"add volume request for volume [{name}] already exists", requests
            if (queued.get("removeVolumeOptions") or {}).get("name") == name and queued.get("removeVolumeOptions"):
                return (f"unable to add volume since a remove volume request for volume [{name}] already exists "
                        f"and is still being processed"), requests
        return None, requests + [request]
    name = remove.get("name") if remove else None
    kept = []
    for queued in requests:
        if queued.get("addVolumeOptions") and queued["addVolumeOptions"].get("name") == name:
            continue        # the add it cancels goes
        if queued.get("removeVolumeOptions") and queued["removeVolumeOptions"].get("name") == name:
            return f"a remove volume request for volume [{name}] already exists and is still being processed", requests
        kept.append(queued)
    return None, kept + [request]


def _admit_status(vm: dict, config: dict | None) -> None:
    """The VM status webhook's validateVolumeRequests (VMsAdmitter.AdmitStatus)."""
    from instancetype.engine.vm_validation import volume_requests
    from instancetype.engine.vm_validation.spec import context, validate_vmi_spec

    causes = volume_requests.validate_volume_requests(vm, context(config), validate_vmi_spec)
    if causes:
        message = ", ".join(c.message for c in causes)
        raise Invalid(f'admission webhook "{STATUS_VALIDATOR}" denied the request: {message}')


def owned_by_vm(vmi: dict) -> bool:
    """ownedByVirtualMachine: the VMI's controller is a kubevirt.io/v1 VirtualMachine."""
    return any(isinstance(r, dict) and r.get("controller") and r.get("kind") == "VirtualMachine"
               and r.get("apiVersion") == "kubevirt.io/v1"
               for r in (vmi.get("metadata") or {}).get("ownerReferences") or ())


def vmi_patch(store: Store, vmi: dict, request: dict, config: dict | None) -> dict:
    """vmiVolumePatch on the VMI as read: owned by a VM only with HotplugVolumes; Running; the
    volume and disk patched into its spec; then the simulated node's report of the volume
    (`node.volume_status`), in the same write."""
    check_vmi(vmi, request, config)
    changed = clone(vmi)
    apply_request(changed.setdefault("spec", {}), request)
    try:
        return hotplugged(store, vmi, changed)
    except APIError as e:
        raise _patch_failed("vmi", e) from None


def hotplugged(store: Store, vmi: dict, changed: dict) -> dict:
    """Write `changed` (the VMI with its volumes patched) with the volume status the simulated
    node reports for it; KubeVirt's VMI CRD has no status subresource, a store that serves one
    gets the status through it."""
    _admit_vmi_update(vmi, changed)
    changed["status"] = node.volume_status(changed, lambda kind, n: lookup(store, kind, n, changed))
    written = store.update(changed)
    if written.get("status") != changed["status"]:
        written = store.update({**written, "status": changed["status"]}, subresource="status")
    return written


VMI_UPDATE_VALIDATOR = "virtualmachineinstances-update-validator.kubevirt.io"


def _admit_vmi_update(old: dict, new: dict) -> None:
    """The VMI update validator's verifyHotplugVolumes for the volumes added (AdmitHotplugStorage):
    a claim or DataVolume, with a disk whose configuration a hotplug allows."""
    from instancetype.engine.vm_validation.volume_requests import hotplug_disk

    before = {v.get("name") for v in (old.get("spec") or {}).get("volumes") or () if isinstance(v, dict)}
    spec = new.get("spec") or {}
    disks = {d.get("name"): d for d in ((spec.get("domain") or {}).get("devices") or {}).get("disks") or ()
             if isinstance(d, dict)}
    for volume in spec.get("volumes") or ():
        name = volume.get("name") if isinstance(volume, dict) else None
        if name is None or name in before:
            continue
        if volume.get("dataVolume") is None and volume.get("persistentVolumeClaim") is None:
            message = f"volume {name} is not a PVC or DataVolume"
        elif name not in disks:
            message = f"disk {name} does not exist"
        else:
            causes = hotplug_disk(disks[name], name, "Hotplug configuration", "")
            message = ", ".join(c.message for c in causes)
        if message:
            raise Invalid(f'admission webhook "{VMI_UPDATE_VALIDATOR}" denied the request: {message}')


def lookup(store: Store, kind: str, name: str, vmi: dict) -> dict | None:
    try:
        return store.get(kind, name, (vmi.get("metadata") or {}).get("namespace"))
    except NotFound:
        return None


# --- the subresources, end to end ------------------------------------------------------------

def act(store: Store, action: str, kind: str, name: str, namespace: str, options: dict,
        config: dict | None = None, *, inline: bool = True) -> None:
    """PUT .../{virtualmachines,virtualmachineinstances}/NAME/{addvolume,removevolume} with the
    decoded options, in the handler's order. A dry run stops after the checks (and, for the VM's
    spec, admission: the caller undoes the transaction)."""
    check_enabled(config)
    request = add_request(options) if action == "addvolume" else remove_request(options)
    dry = dry_run(request)
    if kind == "vmi":
        vmi = fetch_vmi(store, name, namespace)
        if dry:
            check_vmi(vmi, request, config)
            return
        stored = vmi_patch(store, vmi, request, config)
        if inline:
            from .pause import _reconcile_owner

            _reconcile_owner(store, stored, config)
    elif hotplug_gate(config):
        vm_status_patch(store, name, namespace, request, config, inline=inline and not dry)
    else:
        vm_spec_patch(store, name, namespace, request, config, inline=inline and not dry)


def check_vmi(vmi: dict, request: dict, config: dict | None) -> None:
    """vmiVolumePatch's checks, in its order."""
    name = (vmi.get("metadata") or {}).get("name") or ""
    namespace = (vmi.get("metadata") or {}).get("namespace") or "default"
    if owned_by_vm(vmi) and not hotplug_gate(config):
        raise BadRequest(f"VMI {namespace}/{name} is owned by a VM")
    if (vmi.get("status") or {}).get("phase") != "Running":
        raise _conflict(VMI_RESOURCE, name, VMI_NOT_RUNNING)
    problem = verify((vmi.get("spec") or {}).get("volumes") or [], request)
    if problem:
        raise _conflict(VMI_RESOURCE, name, problem)
