"""`describe vm`: what the VM resolves to, after kubectl's generic description.

The section is the engine's answer, never a second copy of a rule: the VM expanded
(`instancetype.expand`, its finders asking the store: the ControllerRevisions the matchers pin,
or before the first start the instancetype and preference objects they name), then read back: the vCPUs and their
topology, the guest memory and its hot-plug ceiling, the disk buses, interface models, firmware,
machine type and clock the preference chose, and whether a restart is pending (the controller's
`RestartRequired` condition) and why.
"""
from __future__ import annotations

from typing import Any


def _matcher_line(side: dict | None, ref: dict | None, default_kind: str) -> str:
    if not isinstance(side, dict) or not side.get("name"):
        return "<none>"
    kind = (side.get("kind") or default_kind).lower()
    rev = side.get("revisionName") or ((ref or {}).get("controllerRevisionRef") or {}).get("name")
    return f"{kind}/{side['name']}" + (f" (revision {rev})" if rev else " (not pinned yet: pinned at the first start)")


def _cpu(dom: dict) -> str:
    cpu = dom.get("cpu") or {}
    s, c, t = (int(cpu.get(k) or 1) for k in ("sockets", "cores", "threads"))
    n = s * c * t
    text = f"{n} vCPU{'s' if n != 1 else ''} ({s} socket{'s' if s != 1 else ''} x {c} core{'s' if c != 1 else ''}" \
           f" x {t} thread{'s' if t != 1 else ''})"
    extras = [f"model {cpu['model']}"] if cpu.get("model") else []
    if cpu.get("maxSockets"):
        extras.append(f"up to {cpu['maxSockets']} sockets live")
    if cpu.get("dedicatedCpuPlacement"):
        extras.append("dedicated")
    return text + (", " + ", ".join(extras) if extras else "")


def _memory(dom: dict) -> str:
    mem = dom.get("memory") or {}
    guest = mem.get("guest") or ((dom.get("resources") or {}).get("requests") or {}).get("memory") or "<unset>"
    extras = [f"up to {mem['maxGuest']} live"] if mem.get("maxGuest") else []
    if (mem.get("hugepages") or {}).get("pageSize"):
        extras.append(f"hugepages {mem['hugepages']['pageSize']}")
    return f"{guest} guest" + (", " + ", ".join(extras) if extras else "")


def _devices(dom: dict) -> list[tuple[str, str]]:
    devices = dom.get("devices") or {}
    rows = []
    buses = [f"{d.get('name')}: {kind} {(d.get(kind) or {}).get('bus', '')}".rstrip()
             for d in devices.get("disks") or () for kind in ("disk", "cdrom", "lun") if kind in d]
    rows.append(("Disks", ", ".join(buses) or "<none>"))
    models = [f"{i.get('name')}: {i.get('model', '<default>')}" for i in devices.get("interfaces") or ()]
    rows.append(("Interfaces", ", ".join(models) or "<none>"))
    other = [k for k in ("rng", "tpm", "sound", "watchdog", "inputs", "autoattachGraphicsDevice") if k in devices]
    if other:
        rows.append(("Other Devices", ", ".join(other)))
    return rows


def _firmware(dom: dict) -> str:
    boot = ((dom.get("firmware") or {}).get("bootloader")) or {}
    if "efi" in boot:
        efi = boot["efi"] or {}
        return "efi" + (", secure boot" if efi.get("secureBoot", True) else "") + \
            (", persistent" if efi.get("persistent") else "")
    return "bios" if "bios" in boot else "<default>"


def resolved_lines(cluster: Any, vm: dict) -> list[str]:
    """The `Resolved:` section (tab-separated, as describe_text's lines)."""
    import instancetype
    from instancetype.errors import Error
    from instancetype.store.source import StoreObjects

    spec = vm.get("spec") or {}
    status = vm.get("status") or {}
    lines = ["Resolved:",
             f"  Instancetype:\t{_matcher_line(spec.get('instancetype'), status.get('instancetypeRef'), 'VirtualMachineClusterInstancetype')}",
             f"  Preference:\t{_matcher_line(spec.get('preference'), status.get('preferenceRef'), 'VirtualMachineClusterPreference')}"]
    try:
        # the engine's finders over the store: the pinned revisions, else the objects named
        expanded = instancetype.expand(vm, objects=StoreObjects(cluster.store))
    except Error as e:
        lines.append(f"  Error:\t{e}")
    else:
        tmpl = ((expanded.get("spec") or {}).get("template") or {}).get("spec") or {}
        dom = tmpl.get("domain") or {}
        lines.append(f"  CPU:\t{_cpu(dom)}")
        lines.append(f"  Memory:\t{_memory(dom)}")
        lines.extend(f"  {k}:\t{v}" for k, v in _devices(dom))
        lines.append(f"  Firmware:\t{_firmware(dom)}")
        lines.append(f"  Machine:\t{(dom.get('machine') or {}).get('type', '<default>')}")
        clock = dom.get("clock") or {}
        if clock:
            lines.append(f"  Clock:\t{'utc' if 'utc' in clock else clock.get('timezone', '')}")
        if tmpl.get("architecture"):
            lines.append(f"  Architecture:\t{tmpl['architecture']}")
    restart = next((c for c in status.get("conditions") or () if isinstance(c, dict)
                    and c.get("type") == "RestartRequired" and c.get("status") == "True"), None)
    lines.append("  Restart Required:\t" + ("no" if restart is None else f"yes: {restart.get('message', '')}"))
    return lines
