"""`migrate-vm --accept-nearest`: the nearest catalogue pair for a VM no pair reproduces exactly.

    nearest(vm, *, config=None) -> Nearest(migration, fit, before, after, diff)

The most common legacy VM spells out a CPU topology and a memory request (`cores: 2` with
`resources.requests.memory: 4Gi`) that no instancetype gives exactly: an instancetype sets the
guest's vCPUs (spread by the preference, sockets by default) and its guest memory. The nearest
pair is:
1. the instancetype `catalog fit` picks for the VM's vCPUs and guest memory (and the dedicated
   CPUs or hugepages the VM has), the smallest of its class that gives at least as much;
2. the preference that the exact search (`migrate`) finds for the rest of the template, run on
   the VM with its CPU count and memory restated as that instancetype gives them;
3. what the guest sees change: the VMI KubeVirt starts for the original VM and for the migrated
   one, compared by `vmi_differences`, and as a unified diff of their specs.
Nothing is written without the caller's consent: the CLI refuses unless `--accept-nearest`.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from instancetype.catalog.fit import Fit, Request, fit
from instancetype.catalog.migrate import Migration, MigrationError, migrate
from instancetype.catalog.vmi_diff import vmi_differences
from instancetype.catalog.vmi_shape import vmi_shape
from instancetype.errors import Error, VMIError
from instancetype.jsonutil import clone


@dataclass
class Nearest:
    migration: Migration
    fit: Fit                 # the instancetype catalog fit chose, with its reasons
    request: str             # the fit request, as `catalog fit` options
    differences: list        # (VMI path, original value, migrated value)
    diff: str                # the VMI specs, unified diff (original first)


def _guest_memory(vmi_spec: dict) -> int:
    from instancetype.catalog.fit import memory_bytes

    dom = vmi_spec.get("domain") or {}
    text = (dom.get("memory") or {}).get("guest") or ((dom.get("resources") or {}).get("requests") or {}).get("memory")
    return memory_bytes(str(text)) if text is not None else 0


def _restated(vm: dict, it: dict) -> dict:
    """The VM with its CPU count and memory as `it` gives them: the default spread (sockets), the
    instancetype's guest memory, no memory request or limit of its own; everything else kept."""
    out = clone(vm)
    dom = out["spec"]["template"]["spec"].setdefault("domain", {})
    cpu = dom.get("cpu") if isinstance(dom.get("cpu"), dict) else {}
    for key in ("sockets", "cores", "threads"):
        cpu.pop(key, None)
    cpu["sockets"] = int(it["spec"]["cpu"]["guest"])
    cpu["cores"] = cpu["threads"] = 1
    dom["cpu"] = cpu
    memory = dom.get("memory") if isinstance(dom.get("memory"), dict) else {}
    memory["guest"] = str(it["spec"]["memory"]["guest"])
    dom["memory"] = memory
    resources = dom.get("resources")
    if isinstance(resources, dict):
        for side in ("requests", "limits"):
            if isinstance(resources.get(side), dict):
                resources[side].pop("memory", None)
                if not resources[side]:
                    del resources[side]
        if not resources:
            del dom["resources"]
    return out


def _yaml(obj: Any) -> list[str]:
    import yaml

    return yaml.safe_dump(obj, sort_keys=True, default_flow_style=False).splitlines(keepends=True)


def nearest(vm: dict, *, config: Any = None) -> Nearest:
    """The nearest catalogue pair (see the module doc). Raises MigrationError with the reason when
    even that finds nothing."""
    from instancetype import catalog
    from instancetype.catalog.fit import format_bytes
    from instancetype.engine.vmi import build_vmi

    try:
        target = build_vmi(vm, config=config)
    except VMIError as e:
        raise MigrationError(f"the VM does not start as it is: {e}") from None
    shape = vmi_shape(target["spec"])
    vcpus, memory = shape[0], _guest_memory(target["spec"])
    req = Request(cpu=vcpus, memory=format_bytes(memory) if memory else None, memory_bytes=memory,
                  dedicated_cpu=bool(shape[2]), hugepages=bool(shape[6]))
    asked = f"--cpu {vcpus}" + (f" --memory {req.memory}" if memory else "") + \
        (" --dedicated-cpu" if req.dedicated_cpu else "") + (" --hugepages" if req.hugepages else "")
    types = catalog.instancetypes(namespaced=False, deprecated=False)
    try:
        chosen = fit(req, types)[0]
    except Error as e:
        raise MigrationError(f"catalog fit {asked} finds nothing: {e}") from None
    it = next(o for o in types if o["metadata"]["name"] == chosen.type.name)
    try:
        migration = migrate(_restated(vm, it), instancetypes=[it], config=config)
    except MigrationError as e:
        raise MigrationError(f"with {chosen.type.resource} (catalog fit {asked}): {e}") from None
    after = build_vmi(migration.vm, instancetype=migration.instancetype, preference=migration.preference,
                      config=config)
    differences = vmi_differences(target, after, migration.instancetype, migration.preference)
    diff = "".join(difflib.unified_diff(_yaml(target.get("spec")), _yaml(after.get("spec")),
                                        "VMI spec, as the VM is", "VMI spec, migrated"))
    return Nearest(migration, chosen, asked, differences, diff)
