"""The head of KubeVirt's VM `sync` (pkg/virt-controller/watch/vm/vm.go, v1.9.0): the VM's
finalizer, and a VM being deleted.

    a VM not being deleted    gets `kubevirt.io/virtualMachineControllerFinalize` (addVMFinalizer),
                              written before anything else, then the reconcile goes on
    a VM being deleted        its VMI is stopped (stopVMI: deleted; the simulated node lets it
                              go at once, controller/node.py); once no VMI is left (or the VM
                              is deleted with the `orphan` finalizer, its VMI kept) the
                              finalizer goes (removeVMFinalizer), and the VM with it when no
                              other finalizer holds it. Nothing else runs: no start, no
                              instancetype sync; the status says `Terminating`.

A VMI another owner controls, or none, is not this VM's to stop: a VM being deleted adopts
nothing (ClaimVirtualMachineInstanceByName), so its finalizer goes.
"""
from __future__ import annotations

from instancetype.jsonutil import clone
from instancetype.store.base import NotFound
from instancetype.store.finalizers import ORPHAN, finalizers_of, marked, releasable

from . import vmis
from .state import VMSync, get_vmi, name_of

FINALIZER = "kubevirt.io/virtualMachineControllerFinalize"     # v1.VirtualMachineControllerFinalizer


def sync(s: VMSync) -> dict | None:
    if not marked(s.vm):
        held = finalizers_of(s.vm)
        if FINALIZER in held:
            return None
        return s.restart_from(_with_finalizers(s, [*held, FINALIZER]))
    vmi = get_vmi(s.store, s.vm)
    s.vmi = vmi if vmi is not None and _owned(s.vm, vmi) else None
    if s.vmi is not None and ORPHAN not in finalizers_of(s.vm):
        vmis.stop(s)
        if s.vmi is not None:       # held by another finalizer: the VM waits, Terminating
            return _status(s)
        if not _reread(s):          # the VMI's going may have changed the VM (foregroundDeletion off)
            return s.stored
    if FINALIZER in finalizers_of(s.vm):
        left = _with_finalizers(s, [f for f in finalizers_of(s.vm) if f != FINALIZER])
        if releasable(left):
            return left             # gone: nothing holds it any more
        s.stored, s.vm = left, clone(left)
    return _status(s)


def _reread(s: VMSync) -> bool:
    """The VM read again (False: gone)."""
    name, ns = name_of(s.vm)
    try:
        fresh = s.store.get("VirtualMachine", name, ns)
    except NotFound:
        return False
    if (fresh.get("metadata") or {}).get("uid") != (s.stored.get("metadata") or {}).get("uid"):
        return False
    s.stored, s.vm = fresh, clone(fresh)
    return True


def _status(s: VMSync) -> dict:
    from . import status

    return status.write(s)


def _owned(vm: dict, vmi: dict) -> bool:
    """The VMI's controller reference names this VM."""
    uid = (vm.get("metadata") or {}).get("uid")
    return any(isinstance(r, dict) and r.get("controller") and r.get("uid") == uid
               for r in (vmi.get("metadata") or {}).get("ownerReferences") or ())


def _with_finalizers(s: VMSync, held: list[str]) -> dict:
    """The VM's finalizers replaced on the resourceVersion read (KubeVirt's JSON patch tests the
    old list): a VM changed meanwhile is a Conflict, retried from a fresh read."""
    meta = {**(s.stored.get("metadata") or {}), "finalizers": held}
    return s.store.update({**s.stored, "metadata": meta})
