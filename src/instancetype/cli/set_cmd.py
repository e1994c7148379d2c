"""`instancetype set instancetype|preference (vm/NAME... | vm -l SELECTOR) TYPE [--kind KIND]`.

kubectl's `set` habit for the one change every VM owner makes: another size. Each VM gets one
RFC 6902 JSON patch that tests the matcher's current name, replaces it (and its kind, with
`--kind`) and removes its `revisionName` (the seeds' rule: a name change is refused while a
revision is pinned). The patch goes through the same write path as `patch --type json`
(admission, then the controller), so a refusal is the webhook's. Once the controller has decided
(at once on the embedded store; on a cluster, when the VM's status names the new object), one
line says what happened:

    virtualmachine.kubevirt.io/vm1 instancetype set to u1.large: live (sockets 1 -> 2, memory 4Gi -> 8Gi)
    virtualmachine.kubevirt.io/vm1 instancetype set to u1.large: restart required (<the controller's message>)
    virtualmachine.kubevirt.io/vm1 instancetype set to u1.large: takes effect at the next start

`--dry-run=client|server` admits the change and says what the controller would decide (its own
steps run over an in-memory overlay of the store), keeping nothing.
"""
from __future__ import annotations

import sys
import time
from typing import Any

import click

from .completers import complete_args
from .kubectl import DRY_RUN_SUFFIX, CommandError, cluster_of, dry_run_mode, namespace_option, reports_errors

# How long a command waits for a cluster's controller to decide (it decides within a reconcile).
DECISION_TIMEOUT_S = 30.0
_SIDES = {"instancetype": ("VirtualMachineClusterInstancetype", "VirtualMachineInstancetype"),
          "preference": ("VirtualMachineClusterPreference", "VirtualMachinePreference")}


def set_patch(vm: dict, side: str, name: str, kind: str | None) -> list[dict]:
    """The JSON patch: test the current matcher, replace its name (and kind), drop its revision."""
    matcher = (vm.get("spec") or {}).get(side)
    base = f"/spec/{side}"
    if not isinstance(matcher, dict):
        value: dict[str, Any] = {"name": name}
        if kind:
            value["kind"] = kind
        return [{"op": "test", "path": base, "value": None}, {"op": "add", "path": base, "value": value}] \
            if side in (vm.get("spec") or {}) else [{"op": "add", "path": base, "value": value}]
    ops: list[dict] = [{"op": "test", "path": f"{base}/name", "value": matcher.get("name")},
                       {"op": "replace", "path": f"{base}/name", "value": name}]
    if kind is not None and kind != matcher.get("kind"):
        ops.append({"op": "add", "path": f"{base}/kind", "value": kind})
    if "revisionName" in matcher:
        ops.append({"op": "remove", "path": f"{base}/revisionName"})
    return ops


def _kind(side: str, value: str | None) -> str | None:
    if value is None:
        return None
    from instancetype.api.kinds import INSTANCETYPE_MATCHER_KINDS, PREFERENCE_MATCHER_KINDS

    table = INSTANCETYPE_MATCHER_KINDS if side == "instancetype" else PREFERENCE_MATCHER_KINDS
    found = table.get(value.lower())
    if found is None or not value:
        raise CommandError(f'error: invalid value for --kind: "{value}" (one of {", ".join(_SIDES[side])})')
    return found


def _running(vm: dict) -> bool:
    return bool((vm.get("status") or {}).get("created"))


def _decided(vm: dict, side: str, name: str) -> bool:
    """The controller has seen the change: a running VM's status names the new object and was
    written for the VM's latest generation (`desiredGeneration`: the pin patches the spec once
    more, and restart-required or live update is decided in the reconcile after it). A VM that
    is not running has nothing to decide."""
    status = vm.get("status") or {}
    if not status.get("created"):
        return True
    ref = status.get(f"{side}Ref")
    generation = (vm.get("metadata") or {}).get("generation")
    return isinstance(ref, dict) and ref.get("name") == name and status.get("desiredGeneration") == generation


def _restart_message(vm: dict) -> str | None:
    for c in (vm.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == "RestartRequired" and c.get("status") == "True":
            return c.get("message") or "RestartRequired"
    return None


def _size(store: Any, vm: dict, side: str) -> tuple[Any, Any]:
    """The vCPUs and guest memory of the instancetype `vm` has (its pin, else the object named),
    found by the engine's finder over the store, for the live line."""
    from instancetype.engine.find import find_instancetype_or_none, index_for
    from instancetype.store.source import StoreObjects

    if side != "instancetype":
        return None, None
    spec = find_instancetype_or_none(vm, index_for(vm, StoreObjects(store))) or {}
    return (spec.get("cpu") or {}).get("guest"), (spec.get("memory") or {}).get("guest")


def _outcome(store: Any, before: dict, after: dict, side: str, name: str) -> str:
    if not _running(after):
        return "takes effect at the next start"
    message = _restart_message(after)
    if message is not None:
        return f"restart required ({message})"
    old_cpu, old_mem = _size(store, before, side)
    new_cpu, new_mem = _size(store, after, side)
    changes = []
    if old_cpu != new_cpu and new_cpu is not None:
        changes.append(f"sockets {old_cpu} -> {new_cpu}")
    if old_mem != new_mem and new_mem is not None:
        changes.append(f"memory {old_mem} -> {new_mem}")
    return "live" + (f" ({', '.join(changes)})" if changes else "")


def _wait_for_decision(cluster: Any, vm: dict, side: str, name: str) -> dict:
    """The VM once its controller has decided; at once on the embedded store, where the
    controller runs in the write's transaction."""
    meta = vm.get("metadata") or {}
    deadline = time.monotonic() + DECISION_TIMEOUT_S
    current = vm
    while not _decided(current, side, name) and time.monotonic() < deadline:
        time.sleep(0.2)    # a cluster's controller reconciles from its watch: poll the VM, bounded
        current = cluster.get("VirtualMachine", meta.get("name"), meta.get("namespace"))
    return current


def _set(side: str):
    @click.command(side)
    @click.argument("args", nargs=-1, shell_complete=complete_args)
    @namespace_option
    @click.option("-l", "--selector", default=None, help="The VMs with these labels (vm -l SELECTOR TYPE).")
    @click.option("--all", "select_all", is_flag=True, help="Every VM of the namespace.")
    @click.option("--kind", default=None, metavar="KIND",
                  help=f"The matcher's kind: {' or '.join(_SIDES[side])} (default: as it is).")
    @click.option("--dry-run", "dry_run", default="none", flag_value="client", is_flag=False,
                  help="none, client or server: admit the change but keep nothing.")
    @click.pass_context
    @reports_errors
    def command(ctx, args, namespace, selector, select_all, kind, dry_run):
        from .changes import select, write_change
        from .patch_cmd import patched_object

        mode = dry_run_mode(dry_run)
        if len(args) < 2:
            raise CommandError(f"error: set {side} needs the VMs and the {side}: vm/NAME... {side.upper()}")
        *words, name = args
        matcher_kind = _kind(side, kind)
        errors: list[str] = []
        with cluster_of(ctx) as cluster:
            found, errors = select(cluster, list(words), namespace, selector=selector, select_all=select_all,
                                   verb=f"set {side}")
            for f in found:
                if f.resource.kind != "VirtualMachine":
                    errors.append(f"error: set {side} changes VirtualMachines, not {f.resource.kind}")
                    continue
                patch = set_patch(f.obj, side, name, matcher_kind)
                try:
                    new = patched_object(f.resource, f.obj, patch, "json")
                except CommandError as e:
                    errors.append(str(e))
                    continue
                if new == f.obj:
                    sys.stdout.write(f.printed(f"{side} unchanged ({name})", DRY_RUN_SUFFIX[mode]))
                    continue
                stored = write_change(cluster, f.obj, new, mode, errors)
                if stored is None:
                    continue
                if mode != "none":
                    # admitted; what the controller would decide, from its own steps on an overlay
                    outcome = predicted_outcome(cluster, f.obj, side, name, matcher_kind)
                    sys.stdout.write(f.printed(f"{side} set to {name}: {outcome}", DRY_RUN_SUFFIX[mode]))
                    continue
                after = _wait_for_decision(cluster, stored, side, name)
                outcome = (_outcome(cluster.store, f.obj, after, side, name) if _decided(after, side, name) else
                           f"not yet decided by the controller after {DECISION_TIMEOUT_S:g}s "
                           "(describe vm shows its decision)")
                sys.stdout.write(f.printed(f"{side} set to {name}: {outcome}"))
        for line in errors:
            sys.stderr.write(line.rstrip("\n") + "\n")
        return 1 if errors else 0

    command.__doc__ = (f"Give VMs another {side}: vm/NAME... {side.upper()}, or vm -l SELECTOR {side.upper()}; "
                       "says whether a running VM takes it live or needs a restart.")
    return command


@click.group("set")
def set_cmd() -> None:
    """Change a VM's instancetype or preference in one command (kubectl's `set` habit)."""


set_cmd.add_command(_set("instancetype"))
set_cmd.add_command(_set("preference"))


def predicted_outcome(cluster: Any, vm: dict, side: str, name: str, kind: str | None = None,
                      config: dict | None = None) -> str:
    """What `set` would print for `vm`, without changing anything: the controller's own reconcile
    run over an in-memory overlay of the store (`store.dryrun.DryRunStore`), repeated until it
    settles (the pin patches the spec, the next reconcile decides), then read as `set` reads it.
    The same steps that decide for real, never a second copy of their rules."""
    from instancetype.controller import vm as vm_controller
    from instancetype.errors import Error
    from instancetype.store.dryrun import DryRunStore
    from instancetype.store.kubevirt import Settings

    from .patch_cmd import patched_object

    if not _running(vm):
        return "takes effect at the next start"
    from instancetype.store.base import resource

    overlay = DryRunStore(cluster.store)
    try:
        new = patched_object(resource("VirtualMachine"), vm, set_patch(vm, side, name, kind), "json")
        stored = overlay.update(new)
        for _ in range(4):          # a pin, then the decision: bounded
            stored = vm_controller.reconcile(overlay, stored, Settings(config))
            if _decided(stored, side, name):
                break
    except (Error, CommandError) as e:
        return f"refused ({e})"
    return _outcome(overlay, vm, stored, side, name)
