"""virtctl `addvolume` / `removevolume`: what virt-api's VM and VMI subresources check and write
(pkg/virt-api/rest/volumes.go: addVolumeRequestHandler, removeVolumeRequestHandler,
vmVolumePatch, vmVolumePatchStatus, generateVMVolumeRequestPatch), on any store; the rules they
share with the VM controller (verifyVolumeOption, ApplyVolumeRequestOnVMISpec, vmiVolumePatch)
are controller/volume_rules.py.

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

from instancetype.jsonutil import clone
from instancetype.store.base import APIError, BadRequest, Invalid, NotFound, Store
from instancetype.store.kubevirt import Settings

from .pause import fetch_vmi
from .volume_rules import (
    apply_request,
    check_enabled,
    check_vmi,
    conflict,
    hotplug_gate,
    patch_failed,
    verify,
    vmi_patch,
)

__all__ = ["ACTIONS", "act", "check_enabled"]      # check_enabled: virt-api's VolumeVerbs

VM_RESOURCE = "virtualmachine.kubevirt.io"
STATUS_VALIDATOR = "kubevirt-crd-status-validator.kubevirt.io"
ACTIONS = ("addvolume", "removevolume")

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


def _template_spec(vm: dict) -> dict:
    return ((vm.get("spec") or {}).get("template") or {}).get("spec") or {}


def fetch_vm(store: Store, name: str, namespace: str) -> dict:
    try:
        return store.get("VirtualMachine", name, namespace)
    except NotFound:
        raise NotFound(f'{VM_RESOURCE} "{name}" not found', kind="virtualmachine", name=name) from None


# --- the three patches ------------------------------------------------------------------------

def vm_spec_patch(store: Store, name: str, namespace: str, request: dict, settings: Settings, *,
                  inline: bool) -> dict:
    """vmVolumePatch (DeclarativeHotplugVolumes): the VM's template gets (or loses) the volume
    and disk; admission runs as on any VM update; the controller then hot-plugs."""
    vm = fetch_vm(store, name, namespace)
    problem = verify(_template_spec(vm).get("volumes") or [], request)
    if problem:
        raise conflict(VM_RESOURCE, name, problem)
    changed = clone(vm)
    spec = changed.setdefault("spec", {}).setdefault("template", {}).setdefault("spec", {})
    apply_request(spec, request)
    return write_vm(store, vm, changed, settings, inline=inline, what="vm")


def write_vm(store: Store, old: dict, new: dict, settings: Settings, *, inline: bool, what: str) -> dict:
    """A VM update as the API server takes it: on a store that calls no webhooks, KubeVirt's
    admission first; on the resourceVersion read; then (inline) the controller's reconcile."""
    from instancetype.lifecycle.admission import Refused, admit

    try:
        if not store.calls_admission_webhooks:
            try:
                new = admit(store, new, operation="UPDATE", old=old, config=settings.config).obj
            except Refused as e:
                raise Invalid(f'admission webhook "{e.webhook}" denied the request: {e.result.message}') from None
        stored = store.update(new)
    except APIError as e:
        raise patch_failed(what, e) from None
    if inline:
        from . import vm as vmctl

        stored = vmctl.reconcile(store, stored, settings)
    return stored


def vm_status_patch(store: Store, name: str, namespace: str, request: dict, settings: Settings, *,
                    inline: bool) -> dict:
    """vmVolumePatchStatus (HotplugVolumes): the request appended to `status.volumeRequests`
    (generateVMVolumeRequestPatch), checked as the status webhook checks it
    (validateVolumeRequests), for the controller to carry out."""
    vm = fetch_vm(store, name, namespace)
    problem = verify(_template_spec(vm).get("volumes") or [], request)
    if problem:
        raise conflict(VM_RESOURCE, name, problem)
    requests = list((vm.get("status") or {}).get("volumeRequests") or ())
    problem, requests = _queued(requests, request)
    if problem:
        raise conflict(VM_RESOURCE, name, problem)
    changed = clone(vm)
    changed.setdefault("status", {})["volumeRequests"] = requests
    _admit_status(changed, settings.config)
    try:
        stored = store.update(changed, subresource="status")
    except APIError as e:
        raise patch_failed("vm status", e) from None
    if inline:
        from . import vm as vmctl

        stored = vmctl.reconcile(store, stored, settings)
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


# --- the subresources, end to end ------------------------------------------------------------

def act(store: Store, action: str, kind: str, name: str, namespace: str, options: dict,
        settings: Settings | None = None, *, inline: bool = True) -> None:
    """PUT .../{virtualmachines,virtualmachineinstances}/NAME/{addvolume,removevolume} with the
    decoded options, in the handler's order. A dry run stops after the checks (and, for the VM's
    spec, admission: the caller undoes the transaction). `settings`: the cluster's (None: all
    defaults)."""
    settings = settings if settings is not None else Settings()
    config = settings.config
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

            _reconcile_owner(store, stored, settings)
    elif hotplug_gate(config):
        vm_status_patch(store, name, namespace, request, settings, inline=inline and not dry)
    else:
        vm_spec_patch(store, name, namespace, request, settings, inline=inline and not dry)

