"""KubeVirt's `syncRestartRequired`: does the running VMI still reflect the VM's template?

The spec the VMI was started with (the start revision, controller/vmsync/generation.py) and the
VM's spec are both expanded with their pinned instancetype and preference (`ApplyToVM`); the
fields a live update carries to the running VMI are copied from the VM onto the old side
(under the `LiveUpdate` rollout strategy only: with `Stage` nothing is live), and so is a
firmware UUID the VMI already runs with; if the templates still differ the VM gets
`RestartRequired` (no reason, v1.9's message), else the condition goes. A start or a stop
removes it too (`cleanupRestartRequired`, controller/vmsync/vmis.py).
"""
from __future__ import annotations

from instancetype.errors import Error
from instancetype.jsonutil import clone
from instancetype.store.base import now
from instancetype.store.source import StoreObjects

from . import generation
from .state import VMSync

CONDITION = "RestartRequired"
NON_LIVE_UPDATABLE = "a non-live-updatable field was changed in the template spec"


def live_update_enabled(config: dict | None) -> bool:
    """IsVMRolloutStrategyLiveUpdate: `vmRolloutStrategy` is LiveUpdate unless set to Stage."""
    return ((config or {}).get("vmRolloutStrategy") or "LiveUpdate") == "LiveUpdate"


def has_condition(vm: dict) -> bool:
    return any(isinstance(c, dict) and c.get("type") == CONDITION for c in (vm.get("status") or {}).get("conditions") or ())


def set_condition(vm: dict, message: str) -> None:
    """setRestartRequired (UpdateCondition: a condition already there keeps its transition time)."""
    status = vm.setdefault("status", {})
    kept = [c for c in status.get("conditions") or () if not (isinstance(c, dict) and c.get("type") == CONDITION)]
    old = next((c for c in status.get("conditions") or ()
                if isinstance(c, dict) and c.get("type") == CONDITION), None)
    if old is not None and old.get("message") == message and old.get("status") == "True":
        return
    kept.append({"type": CONDITION, "status": "True", "lastProbeTime": None, "lastTransitionTime": now(),
                 "message": message})
    status["conditions"] = kept


def remove_condition(vm: dict) -> None:
    status = vm.get("status") or {}
    if has_condition(vm):
        status["conditions"] = [c for c in status["conditions"]
                                if not (isinstance(c, dict) and c.get("type") == CONDITION)]


def sync(s: VMSync) -> None:
    s.restart_required = _required(s)


def _required(s: VMSync) -> bool:
    if s.vmi is None:
        return False
    last = generation.start_spec(s.store, s.vmi, s.started)
    if last is None:
        return False
    now_spec = generation.revision_spec(s.vm)
    if all(last.get(k) == now_spec.get(k) for k in ("template", "instancetype", "preference")):
        remove_condition(s.vm)      # the quick answer: nothing changed since the start
        s.changed_since_start = False
        return False
    import instancetype

    objects = StoreObjects(s.store)
    meta = clone(s.vm.get("metadata") or {})
    try:
        current = instancetype.expand({**s.vm, "spec": generation.revision_spec(s.vm)}, objects=objects,
                                      config=s.config)
        started = instancetype.expand({"apiVersion": s.vm.get("apiVersion"), "kind": s.vm.get("kind"),
                                       "metadata": meta, "spec": clone(last)}, objects=objects, config=s.config)
    except Error:
        return False
    new = ((current.get("spec") or {}).get("template") or {}).get("spec") or {}
    old = ((started.get("spec") or {}).get("template") or {}).get("spec") or {}
    _neutralise(old, new, s)
    if old != new:
        set_condition(s.vm, NON_LIVE_UPDATABLE)
        return True
    remove_condition(s.vm)
    return False


def _neutralise(old: dict, new: dict, s: VMSync) -> None:
    """The live-updatable fields copied over from `new` onto `old` (which is destroyed)."""
    from .volumes import live_update_disks, live_update_volumes

    if live_update_volumes(old, new):
        _copy(old, new, "volumes")
    if live_update_disks(old, new):
        old.setdefault("domain", {}).setdefault("devices", {})
        _copy(old["domain"]["devices"], (new.get("domain") or {}).get("devices") or {}, "disks")
    old_domain, new_domain = old.setdefault("domain", {}), new.get("domain") or {}
    if live_update_enabled(s.config):
        if isinstance(old_domain.get("cpu"), dict) and isinstance(new_domain.get("cpu"), dict):
            _copy(old_domain["cpu"], new_domain["cpu"], "sockets")
        if (new_domain.get("memory") or {}).get("guest") is not None:
            old_domain.setdefault("memory", {})["guest"] = new_domain["memory"]["guest"]
        for key in ("nodeSelector", "affinity", "tolerations"):
            _copy(old, new, key)
    firmware = new_domain.get("firmware") or {}
    vmi_firmware = (((s.vmi or {}).get("spec") or {}).get("domain") or {}).get("firmware") or {}
    if firmware and vmi_firmware.get("uuid") == firmware.get("uuid"):
        old_domain.setdefault("firmware", {})
        _copy(old_domain["firmware"], firmware, "uuid")


def _copy(to: dict, src: dict, key: str) -> None:
    if key in src:
        to[key] = src[key]
    else:
        to.pop(key, None)
