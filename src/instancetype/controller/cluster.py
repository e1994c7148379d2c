"""The Python API of the embedded cluster: a store, its admission and its VM controller.

    from instancetype.controller import Cluster
    with Cluster.open("state.db") as c:
        c.apply(instancetype_obj); c.apply(vm_obj)      # ApplyResult(action, object, warnings)
        c.get("VirtualMachine", "vm1"); c.start("vm1")

Every write is admitted first (`lifecycle.admission`), then stored, then reconciled by the
controller, all in one transaction: a refused object changes nothing, and an accepted one lands
with the work it triggers. What `apply`, `create` and `update` receive is checked to be JSON once,
on the way in; the writes it leads to (the object admitted, the controller's revisions, VMI and
status, all built from checked objects) are made in the store's `json_checked_by_caller()` block
and not walked again. Any other write to the store is walked.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from instancetype.api import kinds
from instancetype.api.versions import needs_upgrade, upgrade
from instancetype.errors import Error
from instancetype.jsonutil import clone
from instancetype.lifecycle.admission import admit
from instancetype.store import finalizers
from instancetype.store.base import (
    DEFAULT_NAMESPACE,
    AlreadyExists,
    BadRequest,
    NotFound,
    StateFileError,
    Store,
    StoreReads,
    VMIActions,
    check_create,
    check_json,
    merge_patch,
)
from instancetype.store.kubevirt import Settings, choose_kubevirt

from .apply import check_applied, original_of, three_way_patch, with_last_applied

if TYPE_CHECKING:
    from .images import Images

def _applied_namespace(obj: dict, namespace: str | None) -> str | None:
    """The namespace kubectl sets on an object it applies (cli-runtime's builder): a namespaced
    kind's own, else `-n`, else the default; None for a cluster-scoped (or unknown) kind."""
    kind = obj.get("kind")
    res = kinds.BY_KIND.get(kinds.FLAVOR_KINDS.get(kind, kind)) if isinstance(kind, str) else None
    if res is None or not res.namespaced:
        return None
    own = (obj.get("metadata") or {}).get("namespace")
    if isinstance(own, str) and own:
        return own
    # a namespace that is no string is refused by check_create next; the annotation does not matter
    return namespace if isinstance(namespace, str) and namespace else DEFAULT_NAMESPACE


LOOKUP_KINDS = {"PersistentVolumeClaim", "DataVolume", "DataSource", "VolumeSnapshot", "ControllerRevision"}
DELETION_ROUNDS = 32        # a deletion's follow-ups settle in two or three; the bound is for a bug
# How many rounds of CDI's work and the VMs it re-queues one write may take (a round per link:
# a VM creates its DataVolumes, CDI fills them, the VM starts; a source completes a clone...).
STORAGE_ROUNDS = 8


class _ReadAgain:
    """A write's settings that have to be read again: the write was the KubeVirt object."""


_READ_AGAIN = _ReadAgain()


class _DryRun(Exception):
    pass


@dataclass
class ApplyResult:
    action: str                     # created | configured | unchanged
    object: dict
    warnings: list[str] = field(default_factory=list)


class Cluster(StoreReads, VMIActions):
    def __init__(self, store: Store, images: Images | None = None):
        from .images import Images
        from .kept import Kept
        from .node_usage import NodeUsage
        from .shared_revisions import SharedRevisions

        self.store = store
        # The controller's memory of shared revisions, this store's alone (bound around each write).
        self.shared_revisions = SharedRevisions()
        # What the VMIs on each node request (the scheduler's cache), bound around each write too.
        self.node_usage = NodeUsage()
        # The KubeVirt object (the cluster's settings), read at every write.
        self._kubevirt = Kept("KubeVirt", kinds.KUBEVIRT_NAMESPACE)
        path = store.path
        # Uploaded images live beside the state file (none for a store without one).
        self.images = images if images is not None else Images.beside(path) if path is not None else None

    @classmethod
    def open(cls, state: str | None = None, *, catalog: bool = True) -> Cluster:
        """The cluster in the state file (see `store.base.default_state_path`). On first use, and
        when this project's catalogue changed, the common-instancetypes catalogue is deployed."""
        from instancetype.store.sqlite import SqliteStore

        cluster = cls(SqliteStore(state))
        try:
            if cluster.store.read_only:
                return cluster      # readable as it is: nothing deployed, nothing swept
            cluster._ensure_kubevirt_namespace()
            cluster._ensure_nodes()
            if catalog:
                cluster.sync_catalog_if_needed()
            cluster.sweep_images()
        except BaseException:
            cluster.close()
            raise
        return cluster

    def _ensure_kubevirt_namespace(self) -> None:
        """KubeVirt is installed: on first use its namespace and its `KubeVirt` object exist (whose
        `spec.configuration` holds the cluster settings), as `default` does."""
        try:
            self.store.get("Namespace", kinds.KUBEVIRT_NAMESPACE)
            return
        except NotFound:
            pass
        with self.store.transaction() as tx:
            try:
                tx.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": kinds.KUBEVIRT_NAMESPACE}})
            except AlreadyExists:
                return
            if tx.count("KubeVirt") == 0:
                kv = tx.create({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                                "metadata": {"name": kinds.KUBEVIRT_NAME, "namespace": kinds.KUBEVIRT_NAMESPACE},
                                "spec": {"configuration": {}}})
                kv["status"] = {"phase": "Deployed", "observedKubeVirtVersion": kinds.KUBEVIRT_VERSION,
                                "conditions": [{"type": "Available", "status": "True", "reason": "AllComponentsReady",
                                                "message": "All components are ready."}]}
                tx.update(kv, subresource="status")

    def _ensure_nodes(self) -> None:
        """The default simulated node (controller/nodes.py) when the store has no node."""
        from .nodes import ensure_default_node

        if self.store.count("Node") == 0:
            with self.store.transaction() as tx:
                ensure_default_node(tx)

    def sync_catalog_if_needed(self) -> None:
        from instancetype.lifecycle import catalog_sync

        if catalog_sync.needs_sync(self.store):
            self.sync_catalog()

    def sync_catalog(self, *, dry_run: bool = False) -> list:
        """`instancetype catalog sync`: deploy, restore and prune the managed catalogue objects."""
        from instancetype.lifecycle import catalog_sync

        with self.store.transaction() as tx:
            changes = catalog_sync.sync(tx, dry_run=dry_run)
            if changes and not dry_run:
                with self.shared_revisions.bound(), self.node_usage.bound():
                    self._retry_failed_vms(tx, None, self._settings(tx))
        return changes

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- writes ----------------------------------------------------------------------------------

    def apply(self, obj: dict, *, namespace: str | None = None) -> ApplyResult:
        """kubectl apply: create, or three-way merge patch onto the live object."""
        check_applied(obj)
        applied = with_last_applied(obj, _applied_namespace(obj, namespace))
        converted, warnings = upgrade(applied) if needs_upgrade(applied) else (applied, [])
        # The API server's own checks (decodable metadata, a valid name and namespace) come first;
        # check_applied has walked the object already (JSON only), and the rest is built from it.
        check_create(converted, namespace, json_shape=False)
        kind = converted["kind"]
        meta = converted.get("metadata") or {}
        name = meta.get("name") or ""
        ns = meta.get("namespace") or namespace
        with self.store.transaction() as tx, tx.json_checked_by_caller():
            settings = self._settings(tx)
            current = tx.find(kind, name, ns)
            if current is None:
                admitted = admit(tx, converted, operation="CREATE", config=settings.config)
                stored = tx.create_handed_over(admitted.obj, namespace=ns)   # admission's own copy
                action = "created"
            else:
                original = original_of(current)
                if original is not None and needs_upgrade(original):
                    original = upgrade(original)[0]
                patch = three_way_patch(original, converted, current)
                if not patch:
                    return ApplyResult("unchanged", current, warnings)
                merged = merge_patch(clone(current), patch)
                admitted = admit(tx, merged, operation="UPDATE", old=current, config=settings.config)
                stored = tx.update(admitted.obj)
                action = "configured"
            stored = self._after_write(tx, stored, settings)
        return ApplyResult(action, stored, warnings + admitted.warnings)

    def apply_all(self, objs, *, namespace: str | None = None, keep_objects: bool = False
                  ) -> list[ApplyResult | Error]:
        """Apply many objects in one transaction (one commit): each object still lands or is refused
        on its own (a savepoint each), and the result list says which. The stored objects are kept
        in the results only with `keep_objects` (memory stays flat in the number of objects)."""
        results: list[ApplyResult | Error] = []
        with self.store.transaction():
            for obj in objs:
                try:
                    result = self.apply(obj, namespace=namespace)   # a savepoint of its own
                except StateFileError:
                    raise        # the file failed (a full disk...): the whole batch is undone
                except Error as e:
                    results.append(e)
                    continue
                if not keep_objects:
                    result.object = {"kind": result.object.get("kind"), "metadata": {
                        k: v for k, v in (result.object.get("metadata") or {}).items() if k in ("name", "namespace")}}
                results.append(result)
        return results

    def create(self, obj: dict, *, namespace: str | None = None) -> ApplyResult:
        """kubectl create: the object as given (an old version converted as `apply` converts it);
        an existing one is the store's AlreadyExists."""
        converted, warnings = upgrade(obj) if isinstance(obj, dict) and needs_upgrade(obj) else (obj, [])
        check_create(converted, namespace)
        with self.store.transaction() as tx, tx.json_checked_by_caller():
            settings = self._settings(tx)
            admitted = admit(tx, converted, operation="CREATE", config=settings.config)
            stored = self._after_write(tx, tx.create(admitted.obj, namespace=namespace), settings)
        return ApplyResult("created", stored, warnings + admitted.warnings)

    def update(self, obj: dict) -> ApplyResult:
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
            raise BadRequest("Object is not a valid Kubernetes object: expected a JSON object with metadata")
        check_json(obj)
        with self.store.transaction() as tx, tx.json_checked_by_caller():
            settings = self._settings(tx)
            meta = obj["metadata"]
            current = tx.get(obj.get("kind", ""), meta.get("name", ""), meta.get("namespace"))
            admitted = admit(tx, obj, operation="UPDATE", old=current, config=settings.config)
            stored = self._after_write(tx, tx.update(admitted.obj), settings)
        return ApplyResult("configured", stored, admitted.warnings)

    def delete(self, kind: str, name: str, namespace: str | None = None, *, propagation: str = "Background",
               grace_period: int | None = None) -> dict:
        """Delete an object as the API server does (`store.finalizers`): one its finalizers hold is
        marked and returned marked, and goes once they are removed (a VM's by the controller,
        once its VMI is stopped: `vmsync/deletion.py`); what it owns goes with it (a VM's VMI and
        revisions, a DataVolume's PVC, a namespace's objects) unless `propagation` is Orphan. The
        uploaded images of deleted claims go by uid, once the deletion is committed (what a
        crash leaves, the next sweep removes). All of it lands in one transaction, or nothing."""
        from .images import IMAGE_KINDS

        since = self.store.resource_version()
        with self.store.transaction() as tx:
            answer = tx.delete(kind, name, namespace, propagation=propagation, grace_period=grace_period)
            settings = self._settings(tx)
            with self.shared_revisions.bound(), self.node_usage.bound():
                self._after_deletions(tx, since, settings)    # a VM or VMI deleted: its VM, the node
                if answer.get("kind") == "DataVolume":
                    self._storage_pass(tx, since, settings)   # a DataVolume deleted re-queues its VM
            self._after_capacity_change(tx, since, settings)
            gone = [ev.uid for ev in tx.changes(since) if ev.type == "DELETED" and ev.kind in IMAGE_KINDS]
        # Inside a caller's transaction the deletion may still be rolled back: the images stay
        # until a sweep finds them unowned.
        if gone and self.images is not None and not self.store.in_transaction:
            self.images.remove(gone)
        return answer

    def _after_deletions(self, tx: Store, since: int | str, settings: Settings) -> None:
        """What deletions since `since` start, carried out in the same transaction, until nothing
        new follows (bounded): a VM being deleted reconciled (its VMI stopped, its finalizer
        removed), a VMI being deleted let go by the simulated node through its VM (or directly,
        when no VM owns it), a VMI gone re-queues its VM, a VM gone releases its shared revisions."""
        from . import vm as vmctl

        cursor = since
        for _ in range(DELETION_ROUNDS):
            events = list(tx.changes(cursor))
            if not events:
                return
            cursor = events[-1].resource_version
            marked: dict[tuple[str, str, str], str] = {}       # (kind, ns, name) -> uid, once each
            for ev in events:
                if ev.object is None:
                    continue
                if ev.type == "DELETED" and ev.kind == "VirtualMachine":
                    self.shared_revisions.on_vm_deleted(tx, ev.object)
                elif ev.type == "DELETED" and ev.kind == "VirtualMachineInstance":
                    self._reconcile_owner(tx, ev.object, settings)
                elif ev.type == "MODIFIED" and ev.kind in ("VirtualMachine", "VirtualMachineInstance"):
                    marked[(ev.kind, ev.namespace, ev.name)] = ev.uid
            for (kind, ns, name), uid in marked.items():
                try:
                    obj = tx.get(kind, name, ns)        # as it is now: an earlier step may have changed it
                except NotFound:
                    continue
                if (obj.get("metadata") or {}).get("uid") != uid or not finalizers.marked(obj):
                    continue
                if kind == "VirtualMachine":
                    vmctl.reconcile(tx, obj, settings)
                elif not self._reconcile_owner(tx, obj, settings):
                    vmctl.release_vmi(tx, obj)

    def sweep_images(self) -> int:
        """Remove image files no claim owns (deleted claims, killed uploads)."""
        if self.images is None:
            return 0
        self.images.adopt_named(self._claim_uid)
        return self.images.sweep(lambda: self.store.uids("PersistentVolumeClaim"))

    def _claim_uid(self, namespace: str, name: str) -> str | None:
        try:
            return self.store.get("PersistentVolumeClaim", name, namespace)["metadata"]["uid"]
        except NotFound:
            return None

    # --- virtctl ---------------------------------------------------------------------------------

    def start(self, name: str, namespace: str | None = None, *, paused: bool = False) -> dict:
        return self._vm_action("start", name, namespace, paused=paused)

    def stop(self, name: str, namespace: str | None = None, *, grace_period: int | None = None) -> dict:
        return self._vm_action("stop", name, namespace, grace_period=grace_period)

    def restart(self, name: str, namespace: str | None = None, *, grace_period: int | None = None) -> dict:
        return self._vm_action("restart", name, namespace, grace_period=grace_period)

    def _vm_action(self, action: str, name: str, namespace: str | None, **options) -> dict:
        """virtctl's verbs with their options (`paused`; `grace_period`, virtctl's `--force
        --grace-period`), by the controller's one copy of virt-api's rules."""
        from . import vm as vmctl

        if action == "restart":
            vmctl.check_restart_grace(options.get("grace_period"))   # before the VM is read, as virt-api
        with self.store.transaction() as tx, self.shared_revisions.bound(), self.node_usage.bound():
            since = tx.resource_version()
            vm = tx.get("VirtualMachine", name, namespace)
            settings = self._settings(tx)     # a VM action does not write the KubeVirt object
            done = getattr(vmctl, action)(tx, vm, settings, **options)
            if self._storage_pass(tx, since, settings):     # DataVolumes created at the start
                done = tx.get("VirtualMachine", name, namespace)
            self._after_capacity_change(tx, since, settings)
            return done

    def _vmi_action(self, action: str, name: str, namespace: str | None) -> dict:
        """virtctl `pause`/`unpause`/`soft-reboot` of a VMI, by the one copy of virt-api's rules
        (`controller.pause`, in virt-api's order; a dry run is the caller's rolled-back transaction)."""
        from . import pause

        ns = namespace or "default"
        with self.store.transaction() as tx:
            if action == "unpause":
                pause.check_vm_not_snapshotting(tx, name, ns)
            return pause.act(tx, action, name, ns, self._settings(tx))

    def add_volume(self, name: str, namespace: str | None = None, options: dict | None = None, *,
                   persist: bool = False) -> None:
        """virtctl addvolume: `options` (AddVolumeOptions) to the VM's subresource with
        `persist`, else the VMI's."""
        self._volume_action("addvolume", name, namespace, options, persist)

    def remove_volume(self, name: str, namespace: str | None = None, options: dict | None = None, *,
                      persist: bool = False) -> None:
        self._volume_action("removevolume", name, namespace, options, persist)

    def _volume_action(self, action: str, name: str, namespace: str | None, options: dict | None,
                       persist: bool) -> None:
        """By the one copy of virt-api's rules (`controller.volume_hotplug`); a dry run is the
        caller's rolled-back transaction."""
        from . import volume_hotplug

        options = dict(options or {})
        try:
            with self.store.transaction() as tx, self.shared_revisions.bound():
                volume_hotplug.act(tx, action, "vm" if persist else "vmi", name, namespace or "default",
                                   options, self._settings(tx))
                if (options.get("dryRun") or [None])[0] == "All":
                    raise _DryRun      # virt-api's dry run: the writes ran (admission and all), none stays
        except _DryRun:
            pass

    def expand_vm(self, name: str, namespace: str | None = None) -> dict:
        """virtctl expand --vm: the stored VM expanded against the stored objects."""
        import instancetype
        from instancetype.store.source import StoreObjects

        vm = self.store.get("VirtualMachine", name, namespace)
        return instancetype.expand(vm, objects=StoreObjects(self.store), config=self.config())

    def expand_spec(self, vm: dict, namespace: str | None = None) -> dict:
        """virtctl expand --file: a VM that is not stored, expanded in `namespace` against the
        stored objects, by virt-api's expand-vm-spec rules (its schema check; its own namespace
        must be empty or that one)."""
        from instancetype.lifecycle.expand import expand_spec

        return expand_spec(self.store, namespace or kinds.DEFAULT_NAMESPACE, vm)

    # --- the controller's triggers -------------------------------------------------------------
    # The VM controller (and the engine it runs) is imported on first write, not when a command
    # that only reads (get, describe, wait) opens the cluster.

    def _settings(self, tx: Store) -> Settings:
        """The KubeVirt object read once for a write: its configuration and its shared-revisions
        opt-in (`store.kubevirt.Settings`), passed down the write's reconciles. The object is kept
        between writes and followed through the change feed (controller/kept.py), not listed and
        decoded at each; each write gets its own copy of it."""
        if not tx.transactional:
            return Settings.read(tx)
        return Settings.of(clone(choose_kubevirt(self._kubevirt.objects(tx))))

    def _after_write(self, tx: Store, stored: dict, settings: Settings) -> dict:
        """The controller's work after a write, in its transaction, under the settings read
        before the write."""
        if stored.get("kind") == "KubeVirt":
            # This write may have changed the opt-in: read again where a pin needs it.
            settings = Settings(settings.config)
        with self.shared_revisions.bound(), self.node_usage.bound():
            # the write's own resourceVersion: what it and its reconciles changed follows it
            since = int((stored.get("metadata") or {}).get("resourceVersion") or 1) - 1
            out = self._reconcile_after(tx, stored, settings)
            if finalizers.marked(stored):
                # an object being deleted written (a finalizer removed): the deletion carries on
                self._after_deletions(tx, since, settings)
            if self._storage_pass(tx, since, settings):
                meta = out.get("metadata") or {}
                try:        # the object as the pass left it (a DataVolume filled, a VM started)
                    out = tx.get(out.get("kind") or "", meta.get("name") or "", meta.get("namespace"))
                except NotFound:
                    pass
            # the configuration read before the write, unless the write was the KubeVirt object
            self._after_capacity_change(tx, since, _READ_AGAIN if stored.get("kind") == "KubeVirt" else settings)
            return out

    def _storage_pass(self, tx: Store, since, settings: Settings) -> bool:
        """The simulated CDI and the DataVolume triggers in the write's transaction (what a
        cluster's controller does from its informers: `cdi.settle`); a DataVolume written
        re-queues the VM that owns it. True when anything was written."""
        from . import cdi

        def requeue(dv: dict) -> None:
            # A VM's own DataVolume re-queues that VM; a filled one no VM owns (a hot-plugged
            # volume's) lets a VMI waiting for it attach it: one scan of its namespace, not one
            # per filled template DataVolume (a batch of VMs would have scanned N times).
            if not self._reconcile_owner(tx, dv, settings) and not cdi.waiting(dv):
                self._retry_failed_vms(tx, (dv.get("metadata") or {}).get("namespace"), settings)

        return cdi.settle(tx, since, requeue, rounds=STORAGE_ROUNDS)

    def _after_capacity_change(self, tx: Store, since, settings: Settings | _ReadAgain) -> None:
        """kube-scheduler's retry of unschedulable pods: when a node was written or a VMI went
        since `since`, the VMs whose VMIs wait for a node are reconciled (controller/vmsync/placement.py).
        `settings`: the write's, as its caller read them (`_READ_AGAIN`: read them now)."""
        # The feed without its objects: the question is only which kinds and types changed.
        if not any(ev.kind == "Node" or (ev.type == "DELETED" and ev.kind == "VirtualMachineInstance")
                   for ev in tx.changes(since, objects=False)):
            return
        with self.shared_revisions.bound(), self.node_usage.bound():
            self._retry_pending(tx, self._settings(tx) if isinstance(settings, _ReadAgain) else settings)

    def _retry_pending(self, tx: Store, settings: Settings) -> None:
        from .node_usage import Answers

        usage = self.node_usage
        usage.sync(tx, settings.config)
        answers = Answers()
        for namespace, name in sorted(usage.pending):
            vmi = tx.find("VirtualMachineInstance", name, namespace)
            if vmi is not None and not usage.refused_again(tx, vmi, settings.config, answers):
                self._reconcile_owner(tx, vmi, settings)

    def _reconcile_after(self, tx: Store, stored: dict, settings: Settings) -> dict:
        from . import vm as vmctl

        kind = stored.get("kind")
        if finalizers.releasable(stored):
            return stored           # the write removed its last finalizer: gone (see _after_deletions)
        if kind == "VirtualMachine":
            return vmctl.reconcile(tx, stored, settings)
        if kind == "KubeVirt":
            # New cluster settings: the operator redeploys the catalogue, and every VM is
            # reconciled under them (a new referencePolicy, network defaults, ...).
            from instancetype.lifecycle import catalog_sync

            catalog_sync.sync(tx)
            settings = self._settings(tx)
            for vm in list(tx.list("VirtualMachine")):
                vmctl.reconcile(tx, vm, settings)
        elif kind == "VirtualMachineInstance":
            self._reconcile_owner(tx, stored, settings)      # a VMI created or changed re-queues its VM
        elif kind in kinds.ALL_TYPE_KINDS or kind in LOOKUP_KINDS:
            self._retry_failed_vms(tx, (stored.get("metadata") or {}).get("namespace"), settings)
        return stored

    @staticmethod
    def _reconcile_owner(tx: Store, vmi: dict, settings: Settings) -> bool:
        """The VM controlling `vmi` reconciled in the transaction that changed the VMI (KubeVirt's
        VMI add/update/delete handlers queue it); False when no VM controls it."""
        from . import vm as vmctl

        meta = vmi.get("metadata") or {}
        owner = next((r for r in meta.get("ownerReferences") or ()
                      if isinstance(r, dict) and r.get("kind") == "VirtualMachine" and r.get("controller")), None)
        if owner is None:
            return False
        try:
            vm = tx.get("VirtualMachine", owner.get("name") or "", meta.get("namespace"))
        except NotFound:
            return False
        if (vm.get("metadata") or {}).get("uid") != owner.get("uid"):
            return False
        vmctl.reconcile(tx, vm, settings)
        return True

    @staticmethod
    def _retry_failed_vms(tx: Store, namespace: str | None, settings: Settings) -> None:
        """A VM that could not start for want of an object starts once it exists; a VMI waiting
        to attach a hot-plugged claim attaches it (`vm.waiting_for_objects`)."""
        from . import vm as vmctl

        for vm in vmctl.waiting_for_objects(tx, namespace):
            vmctl.reconcile(tx, vm, settings)
