"""The VM's VMI: as found (another owner's, one on its way out), started (KubeVirt's `startVMI`),
stopped (`stopVMI`), and let go by the simulated node."""
from __future__ import annotations

from instancetype.errors import Error, VMIError
from instancetype.store.base import AlreadyExists, NotFound, Store, now
from instancetype.store.finalizers import finalizers_of, releasable
from instancetype.store.source import StoreObjects

from .. import node, node_usage
from .. import state_requests as requests
from . import generation, pin
from .state import VMSync, clear_restart_required, conflict, get_vmi, name_of


def observe(s: VMSync) -> dict | None:
    """Read the VMI. Another VM's (an earlier VM of the same name, being collected) is a Conflict
    to retry later; one on its way out (its deletion waits on finalizers) is let go, and the
    status written without it: a new one, if the run strategy wants one, starts once it is gone."""
    s.vmi = get_vmi(s.store, s.vm)
    if s.vmi is not None and foreign(s.vm, s.vmi):
        raise conflict(s.vm, "a VirtualMachineInstance of another owner still exists")
    if s.vmi is not None and node.terminating(s.vmi):
        s.vmi = release(s.store, s.vmi)
        if s.vmi is not None:
            # Still there: another finalizer holds it, or this store shows it late (a cache
            # behind the API server). The status says it is stopping; its deletion event
            # brings the VM back here, and a new one, if the run strategy wants one, starts then.
            from . import status

            return status.write(s)
    return None


def foreign(vm: dict, vmi: dict) -> bool:
    """The VMI's controller is another VM (an earlier one of the same name)."""
    uid = (vm.get("metadata") or {}).get("uid")
    owners = [r.get("uid") for r in (vmi.get("metadata") or {}).get("ownerReferences") or ()
              if isinstance(r, dict) and r.get("controller") and r.get("uid")]
    return bool(uid and owners and uid not in owners)


def start(s: VMSync) -> None:
    """startVMI: pin, build the VMI from the pinned types, create it (`s.vmi`); a failure is
    `s.failure` (KubeVirt's FailedFindInstancetype / FailedFindPreference / FailedCreate)."""
    import instancetype

    from . import datavolumes

    if not datavolumes.ready_to_start(s):
        return
    pinned = pin.capture(s)
    if pinned is None:
        return
    try:
        vmi = instancetype.build_vmi(s.vm, objects=_WithPinned(s.store, pinned), config=s.config,
                                     mutate=not s.store.calls_admission_webhooks)
        if requests.start_paused(s.vm):
            vmi.setdefault("spec", {})["startStrategy"] = "Paused"     # setupVMIFromVM
    except VMIError as e:
        reason = {"autoattach": "FailedFindPreference", "apply": "FailedFindInstancetype"}.get(e.stage, "FailedCreate")
        s.failure = (reason, str(e))
        return
    except Error as e:
        s.failure = ("FailedCreate", str(e))
        return
    clear_restart_required(s.vm)
    revision, spec = generation.create_start_revision(s.store, s.vm)
    vmi.setdefault("status", {})["virtualMachineRevisionName"] = revision
    if spec is not None:
        s.started = (revision, spec)
    s.vmi = _create(s.store, s.vm, vmi, s.config)


class _WithPinned(StoreObjects):
    """The store's objects, and the revisions this start just created or read: the VMI is built
    from them even where the store's reads lag behind its writes (a cluster's informer cache)."""

    __slots__ = ("pinned",)

    def __init__(self, store: Store, pinned: dict[str, dict]):
        super().__init__(store)
        self.pinned = pinned

    def lookup(self, kind: str, name: str, namespace: str):
        if kind == "ControllerRevision" and name in self.pinned:
            cr = self.pinned[name]
            if ((cr.get("metadata") or {}).get("namespace") or "default") == (namespace or "default"):
                return cr
        return super().lookup(kind, name, namespace)


def _create(store: Store, vm: dict, vmi: dict, config: dict | None) -> dict:
    """Create the VMI, placed on a node (or left waiting for one: controller/node.py). A VMI of that name may exist though the
    read said none (a cache behind the API server): ours is used as it is; another VM's (an
    earlier VM of the same name, not yet collected) is a Conflict to retry later."""
    name, ns = name_of(vm)
    chosen, message = node.place(store, vmi, config)
    if chosen is not None:
        scheduled = node.schedule(vmi, now(), chosen, claims=node.claim_access_modes(store, ns), config=config)
    else:
        scheduled = node.unschedulable(vmi, message, now())
    try:
        created = store.create_handed_over(scheduled)     # `vmi` itself, placed: built by the caller
    except AlreadyExists:
        node_usage.current().forget(vmi)
        created = store.get("VirtualMachineInstance", name, ns)
        if foreign(vm, created) or node.terminating(created):
            raise conflict(vm, "the previous VirtualMachineInstance still exists") from None
    except BaseException:
        node_usage.current().forget(vmi)       # not created: the assumed placement is undone
        raise
    if scheduled.get("status") and not created.get("status"):
        # A VMI kind served with a status subresource drops the status on create: report it.
        created["status"] = scheduled["status"]
        created = store.update(created, subresource="status")
    node_usage.current().created(created)
    return created


def stop(s: VMSync) -> None:
    """stopVMI: the VMI deleted (its finalizers released by the simulated node); `s.vmi` is then
    None, or the VMI on its way out while another finalizer holds it."""
    name, ns = name_of(s.vm)
    clear_restart_required(s.vm)
    if s.vmi is not None and node.terminating(s.vmi):
        s.vmi = release(s.store, s.vmi)         # deleted before: only the node's part is left
        return
    try:
        deleted = s.store.delete("VirtualMachineInstance", name, ns)
    except NotFound:
        s.vmi = None
        return
    s.vmi = release(s.store, deleted) if node.terminating(deleted) else None


def release(store: Store, vmi: dict) -> dict | None:
    """The simulated node's part in a VMI's deletion: no guest to stop (a graceful shutdown ends
    at once, well within any terminationGracePeriodSeconds), so KubeVirt's finalizers go at once
    (on the resourceVersion read: a Conflict is retried). Returns the VMI as left: None once gone,
    else held by other finalizers."""
    updated = node.released(vmi)
    if updated is None:
        return vmi if finalizers_of(vmi) else None
    try:
        left = store.update(updated)
    except NotFound:
        return None
    return None if releasable(left) else left
