"""The template fields an instancetype or a preference provides, which `migrate-vm` strips.

    instancetype_paths(it_spec, template) -> [Path]   fields the instancetype sets or conflicts on
    preference_paths(template, taken) -> [Path]       fields some preference can set (`preferred*`)
    set_by(pref_spec, bare, paths) -> [Path]          those among `paths` one preference fills

Every list holds only paths present in the template, so stripping them (template_paths.
remove_field) moves exactly those fields out of the VM.
"""
from __future__ import annotations

from instancetype.catalog.template_paths import MISSING, Path, value_at
from instancetype.jsonutil import clone

_D = ("spec", "domain")


def instancetype_paths(it: dict, template: dict) -> list[Path]:
    """Template fields the instancetype sets or conflicts on, present in `template`."""
    cpu, mem = it.get("cpu") or {}, it.get("memory") or {}
    paths: list[Path] = [_D + ("cpu", k) for k in ("sockets", "cores", "threads")]
    for key, vmi_key in (("model", "model"), ("dedicatedCPUPlacement", "dedicatedCpuPlacement"),
                         ("isolateEmulatorThread", "isolateEmulatorThread"), ("numa", "numa"),
                         ("realtime", "realtime"), ("maxSockets", "maxSockets")):
        if cpu.get(key) is not None:
            paths.append(_D + ("cpu", vmi_key))
    paths.append(_D + ("memory", "guest"))
    for key in ("hugepages", "maxGuest"):
        if mem.get(key) is not None:
            paths.append(_D + ("memory", key))
    paths += [_D + ("resources", group, res) for res in ("cpu", "memory") for group in ("requests", "limits")]
    if it.get("ioThreadsPolicy") is not None:
        paths.append(_D + ("ioThreadsPolicy",))
    if (it.get("ioThreads") or {}).get("supplementalPoolThreadCount") is not None:
        paths.append(_D + ("ioThreads", "supplementalPoolThreadCount"))
    if it.get("launchSecurity") is not None:
        paths.append(_D + ("launchSecurity",))
    for key in ("gpus", "hostDevices"):
        if it.get(key):
            paths.append(_D + ("devices", key))
    if it.get("nodeSelector") is not None:
        paths.append(("spec", "nodeSelector"))
    if it.get("schedulerName"):
        paths.append(("spec", "schedulerName"))
    present = [p for p in paths if value_at(template, p) is not MISSING]
    for k, v in (it.get("annotations") or {}).items():
        if value_at(template, ("metadata", "annotations", k)) == v:
            present.append(("metadata", "annotations", k))
    return present


_DEVICE_KEYS = ("rng", "tpm", "useVirtioTransitional", "blockMultiQueue", "networkInterfaceMultiqueue",
                "autoattachGraphicsDevice", "autoattachMemBalloon", "autoattachPodInterface",
                "autoattachSerialConsole", "autoattachInputDevice")
_FEATURE_KEYS = ("acpi", "apic", "kvm", "pvspinlock", "smm")


def preference_paths(template: dict, taken: set[Path]) -> list[Path]:
    """Template fields some preference can set (`preferred*`), present in `template`, in document order."""
    out: list[Path] = []
    spec = got if isinstance(got := template.get("spec"), dict) else {}
    dom = got if isinstance(got := spec.get("domain"), dict) else {}
    devs = got if isinstance(got := dom.get("devices"), dict) else {}
    dv = _D + ("devices",)
    disks = got if isinstance(got := devs.get("disks"), list) else []
    for i, d in enumerate(disks):
        if not isinstance(d, dict):
            continue
        for target in ("disk", "cdrom", "lun"):
            if isinstance(d.get(target), dict) and "bus" in d[target]:
                out.append(dv + ("disks", i, target, "bus"))
        for key in ("dedicatedIOThread", "cache", "io", "blockSize"):
            if key in d:
                out.append(dv + ("disks", i, key))
    for listed, keys in (("interfaces", ("model",)), ("inputs", ("bus", "type"))):
        items = got if isinstance(got := devs.get(listed), list) else []
        for i, x in enumerate(items):
            if isinstance(x, dict):
                out += [dv + (listed, i, k) for k in keys if k in x]
    out += [dv + (k,) for k in _DEVICE_KEYS if k in devs]
    for holder, key in (("video", "type"), ("sound", "model")):
        if isinstance(devs.get(holder), dict) and key in devs[holder]:
            out.append(dv + (holder, key))
    feats = got if isinstance(got := dom.get("features"), dict) else {}
    out += [_D + ("features", k) for k in _FEATURE_KEYS if k in feats]
    if isinstance(feats.get("hyperv"), dict):
        out += [_D + ("features", "hyperv", k) for k in feats["hyperv"]]
    boot = value_at(dom, ("firmware", "bootloader"))
    if isinstance(boot, dict):
        out += [_D + ("firmware", "bootloader", k) for k in ("efi", "bios") if k in boot]
    if isinstance(dom.get("machine"), dict) and "type" in dom["machine"]:
        out.append(_D + ("machine", "type"))
    clock = got if isinstance(got := dom.get("clock"), dict) else {}
    out += [_D + ("clock", k) for k in ("utc", "timezone", "timer") if k in clock]
    if "launchSecurity" in dom:
        out.append(_D + ("launchSecurity",))
    out += [("spec", k) for k in ("subdomain", "terminationGracePeriodSeconds", "architecture") if k in spec]
    ann = value_at(template, ("metadata", "annotations"))
    if isinstance(ann, dict):
        out += [("metadata", "annotations", k) for k in ann]
    return [p for p in out if p not in taken]


def set_by(pref_spec: dict, bare: dict, paths: list[Path]) -> list[Path]:
    """The fields among `paths` that the preference fills on the template stripped of all of them."""
    from instancetype.engine.preference import apply_preference

    spec = clone(bare.get("spec") or {})
    meta: dict = {}
    apply_preference(pref_spec, spec, metadata=meta)
    filled = {"spec": spec, "metadata": meta}
    return [p for p in paths if value_at(filled, p) is not MISSING]
