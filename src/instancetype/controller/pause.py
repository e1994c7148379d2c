"""virtctl `pause`, `unpause` and `soft-reboot`: what virt-api checks before it asks virt-handler
(pkg/virt-api/rest/lifecycle.go: PauseVMIRequestHandler, UnpauseVMIRequestHandler,
SoftRebootVMIRequestHandler) and what the simulated node then does, on any store. The embedded
Cluster calls it directly; virt-api (`webhook/virtapi/actions.vmi_action`) is given this module
as its `VMIVerbs` by whoever builds it (serve), so that the drivers import no other.

The checks raise the Status errors virt-api answers with (409 Conflict, 403 Forbidden, 404
NotFound on `virtualmachineinstance.kubevirt.io`). The node's part is the VMI status virt-handler
writes once libvirt paused or resumed the domain (`node.set_paused`); the VM's `Paused`
condition and printable status follow from the VM controller's reconcile (`inline`: here, as the
embedded store runs it; else the controller watching the VMI does it).

A soft reboot changes nothing a status shows: without a guest agent (none is connected in the
simulation) virt-launcher presses the ACPI power button (SoftRebootVMI), which v1.9 accepts unless
the VMI disables ACPI; the guest's reboot is invisible to the control plane.
"""
from __future__ import annotations

from instancetype.store.base import Conflict, Forbidden, NotFound, Store, now
from instancetype.store.kubevirt import Settings

from . import node

VMI_RESOURCE = "virtualmachineinstance.kubevirt.io"
VM_RESOURCE = "virtualmachine.kubevirt.io"
NOT_RUNNING = "VM is not running"                      # vmNotRunning (pause, soft reboot)
VMI_NOT_RUNNING = "VMI is not running"                 # vmiNotRunning (unpause)
NOT_PAUSED = "VMI is not paused"                       # vmiNotPaused
ALREADY_PAUSED = "VMI is already paused"
IS_PAUSED = "VMI is paused"
NO_AGENT_NO_ACPI = "VMI neither have the agent connected nor the ACPI feature enabled"
LIVENESS_PROBE = "Pausing VMIs with a non-GuestAgentPing LivenessProbe is not supported"
SNAPSHOT_IN_PROGRESS = "VM snapshot is in progress"   # vmSnapshotInprogress


def _conflict(resource: str, name: str, detail: str) -> Conflict:
    return Conflict(f'Operation cannot be fulfilled on {resource} "{name}": {detail}')


def fetch_vmi(store: Store, name: str, namespace: str) -> dict:
    """FetchVirtualMachineInstance: NotFound names `virtualmachineinstance.kubevirt.io`."""
    try:
        return store.get("VirtualMachineInstance", name, namespace)
    except NotFound:
        raise NotFound(f'{VMI_RESOURCE} "{name}" not found', kind="virtualmachineinstance", name=name) from None


def _name(vmi: dict) -> str:
    return (vmi.get("metadata") or {}).get("name") or ""


def _phase(vmi: dict) -> str:
    return (vmi.get("status") or {}).get("phase") or ""


def _condition(vmi: dict, kind: str) -> dict | None:
    return next((c for c in (vmi.get("status") or {}).get("conditions") or ()
                 if isinstance(c, dict) and c.get("type") == kind), None)


def check_pause(vmi: dict) -> None:
    """PauseVMIRequestHandler's validate: Running, no liveness probe but a guest-agent ping, no
    `Paused` condition (whatever its status)."""
    name = _name(vmi)
    if _phase(vmi) != "Running":
        raise _conflict(VMI_RESOURCE, name, NOT_RUNNING)
    probe = (vmi.get("spec") or {}).get("livenessProbe")
    if probe is not None and (not isinstance(probe, dict) or probe.get("guestAgentPing") is None):
        raise Forbidden(f'{VMI_RESOURCE} "{name}" is forbidden: {LIVENESS_PROBE}')
    if _condition(vmi, "Paused") is not None:
        raise _conflict(VMI_RESOURCE, name, ALREADY_PAUSED)


def check_vm_not_snapshotting(store: Store, name: str, namespace: str) -> None:
    """UnpauseVMIRequestHandler's first check: the VM of that name, if any, has no snapshot in progress."""
    try:
        vm = store.get("VirtualMachine", name, namespace)
    except NotFound:
        return
    if (vm.get("status") or {}).get("snapshotInProgress") is not None:
        raise _VMConflict(_conflict(VM_RESOURCE, name, SNAPSHOT_IN_PROGRESS).message, name)


class _VMConflict(Conflict):
    """A Conflict on the VM (NewConflict(v1.Resource("virtualmachine"))): its details name the VM."""

    def __init__(self, message: str, name: str):
        super().__init__(message)
        self.vm_name = name

    def status(self) -> dict:
        return {**super().status(), "details": {"name": self.vm_name, "group": "kubevirt.io", "kind": "virtualmachine"}}


def check_unpause(vmi: dict) -> None:
    """UnpauseVMIRequestHandler's validate: Running and a `Paused` condition."""
    name = _name(vmi)
    if _phase(vmi) != "Running":
        raise _conflict(VMI_RESOURCE, name, VMI_NOT_RUNNING)
    if _condition(vmi, "Paused") is None:
        raise _conflict(VMI_RESOURCE, name, NOT_PAUSED)


def check_soft_reboot(vmi: dict) -> None:
    """SoftRebootVMIRequestHandler's validate: Running, not paused (condition True), and the
    agent connected or ACPI not disabled."""
    name = _name(vmi)
    if _phase(vmi) != "Running":
        raise _conflict(VMI_RESOURCE, name, NOT_RUNNING)
    paused = _condition(vmi, "Paused")
    if paused is not None and paused.get("status") == "True":
        raise _conflict(VMI_RESOURCE, name, IS_PAUSED)
    agent = _condition(vmi, "AgentConnected")
    if agent is None:
        features = ((vmi.get("spec") or {}).get("domain") or {}).get("features")
        acpi = features.get("acpi") if isinstance(features, dict) else None
        if isinstance(acpi, dict) and acpi.get("enabled") is False:
            raise _conflict(VMI_RESOURCE, name, NO_AGENT_NO_ACPI)


def _set_paused(store: Store, vmi: dict, paused: bool, settings: Settings | None, inline: bool) -> dict:
    """The node's report (on the resourceVersion read), then the owner VM's reconcile. KubeVirt's
    VMI has no status subresource (the API server's CRD neither), the embedded store serves one:
    the status goes through it when the main write kept the stored one (as `vm._create_vmi`)."""
    reported = node.set_paused(vmi, paused, now())
    stored = store.update(reported)
    if stored.get("status") != reported["status"]:
        stored = store.update({**stored, "status": reported["status"]}, subresource="status")
    if inline:
        _reconcile_owner(store, stored, settings)
    return stored


def _reconcile_owner(store: Store, vmi: dict, settings: Settings | None) -> None:
    from . import vm as vmctl

    meta = vmi.get("metadata") or {}
    for ref in meta.get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("kind") == "VirtualMachine" and ref.get("controller"):
            try:
                vm = store.get("VirtualMachine", ref.get("name") or "", meta.get("namespace"))
            except NotFound:
                return
            vmctl.reconcile(store, vm, settings)
            return


def pause(store: Store, vmi: dict, settings: Settings | None = None, *, dry_run: bool = False,
          inline: bool = True) -> dict:
    """Pause a running VMI (`vmi` as read); a dry run stops after the checks, as virt-api does."""
    check_pause(vmi)
    return vmi if dry_run else _set_paused(store, vmi, True, settings, inline)


def unpause(store: Store, vmi: dict, settings: Settings | None = None, *, dry_run: bool = False,
            inline: bool = True) -> dict:
    check_unpause(vmi)
    return vmi if dry_run else _set_paused(store, vmi, False, settings, inline)


def soft_reboot(store: Store, vmi: dict, settings: Settings | None = None, *, dry_run: bool = False,
                inline: bool = True) -> dict:
    """Accepted as v1.9 accepts it (ACPI, no agent); the simulated guest has nothing to reboot."""
    check_soft_reboot(vmi)
    return vmi


ACTIONS = {"pause": pause, "unpause": unpause, "softreboot": soft_reboot}


def act(store: Store, action: str, name: str, namespace: str, settings: Settings | None = None, *,
        dry_run: bool = False, inline: bool = True) -> dict:
    """`action` (pause, unpause, softreboot) of the VMI `namespace/name`, read from `store`;
    `settings` the cluster's (None: all defaults)."""
    return ACTIONS[action](store, fetch_vmi(store, name, namespace), settings, dry_run=dry_run, inline=inline)
