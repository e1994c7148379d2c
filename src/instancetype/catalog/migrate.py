"""`migrate-vm`: rewrite a VM that spells out its CPU, memory and devices to use the catalogue.

    migrate(vm, *, instancetypes=None, preferences=None, config=None) -> Migration
    Migration(vm, instancetype, preference, changes)      changes: list[Change]
    MigrationError(Error)                                 the reason no pair reproduces the VM

The proof of a migration is the VMI KubeVirt would start: `build_vmi` of the migrated VM (its
instancetype and preference given) must equal `build_vmi` of the original, apart from the
annotations the instancetype and preference add (their names, the instancetype's and the
preference's own annotations). Nothing else is accepted, so a migration never changes the guest.

How a pair is found:
1. the original VMI (`target`) gives the VM's shape: vCPUs, guest memory, dedicated CPUs,
   hugepages, ...; only instancetypes of exactly that shape are tried (cheap prefilter);
2. the fields the instancetype sets are stripped from the template (they would conflict);
3. for every preference, the template fields it would set itself (found by applying it to the
   template without any of them) are stripped too; the VMI is built and compared with the
   target. A difference under a stripped preference field puts that field back (the preference
   then leaves the VM's own value alone) and the pair is tried again; any other difference
   rules the pair out. "No preference" is the last resort;
4. of the verified pairs the one leaving the fewest preference-type fields in the VM wins,
   then one with a preference, then a current instancetype over a deprecated one (only
   possible when the caller passes its own list), then the most generic preference (fewest settings: `linux`
   rather than `alpine` when both explain the same), then by name. Candidates are tried best-predicted first and the
   search stops once no untried candidate can beat the best verified one.
Pure: plain dicts in, plain dicts out; the argument is never mutated.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable

from instancetype.api import kinds as K
from instancetype.errors import Error, VMIError
from instancetype.jsonutil import clone

Path = tuple  # of str (keys) and int (list indices), relative to spec.template

_TEMPLATE = "spec.template"
# Never removed when emptied: KubeVirt requires domain and domain.devices.
_KEEP = {("spec",), ("metadata",), ("spec", "domain"), ("spec", "domain", "devices")}
_MAX_ROUNDS = 6


class MigrationError(Error):
    """The VM cannot be migrated; `str()` is the reason."""


@dataclass(frozen=True)
class Change:
    """One template field moved out of the VM: `path` (from the VM's root) and who provides it."""

    path: str
    provided_by: str   # "virtualmachineclusterinstancetype/u1.medium"

    def __str__(self) -> str:
        return f"{self.path}: provided by {self.provided_by}"


@dataclass
class Migration:
    vm: dict                  # the migrated VirtualMachine
    instancetype: dict        # the catalogue object it references
    preference: dict | None   # None: no catalogue preference reproduces the VM
    changes: list[Change]


# --- the catalogue, read once ------------------------------------------------------------------
@dataclass(frozen=True)
class _Type:
    obj: dict
    name: str
    ref: str        # kind/name as kubectl and `create vm --instancetype` spell it
    spec: dict      # normalised (engine/spec.py), never mutated
    shape: tuple
    deprecated: bool


@dataclass(frozen=True)
class _Pref:
    obj: dict
    name: str
    ref: str
    spec: dict
    weight: int     # how many settings it makes: between equals, the most generic one wins


def _leaves(v: Any) -> int:
    if isinstance(v, dict):
        return sum(_leaves(x) for x in v.values()) or 1
    if isinstance(v, list):
        return sum(_leaves(x) for x in v) or 1
    return 1


def _ref(obj: dict) -> str:
    return f"{obj['kind'].lower()}/{obj['metadata']['name']}"


def _types(objs: Iterable[dict]) -> list[_Type]:
    from instancetype.catalog.build import LABEL_DEPRECATED
    from instancetype.engine.spec import instancetype_spec

    out = []
    for o in objs:
        spec = instancetype_spec(o)
        labels = (o.get("metadata") or {}).get("labels") or {}
        deprecated = labels.get(LABEL_DEPRECATED) == "true"
        out.append(_Type(o, o["metadata"]["name"], _ref(o), spec, _it_shape(spec), deprecated))
    return sorted(out, key=lambda t: t.name)


def _prefs(objs: Iterable[dict]) -> list[_Pref]:
    from instancetype.engine.spec import preference_spec

    out = []
    for o in objs:
        spec = preference_spec(o) or {}
        weight = _leaves({k: v for k, v in spec.items() if k != "annotations"})
        out.append(_Pref(o, o["metadata"]["name"], _ref(o), spec, weight))
    return sorted(out, key=lambda p: p.name)


@lru_cache(maxsize=1)
def _catalogue() -> tuple[tuple[_Type, ...], tuple[_Pref, ...]]:
    from instancetype import catalog

    # Only current types: migrating onto a deprecated one (gn1, server, highperformance) helps no one.
    return (tuple(_types(catalog.instancetypes(namespaced=False, deprecated=False))),
            tuple(_prefs(catalog.preferences(namespaced=False, deprecated=False))))


# --- shapes: what an instancetype decides about a VMI ------------------------------------------
@lru_cache(maxsize=256)
def _bytes(text: str) -> int:
    from instancetype.api.quantity import Quantity

    return Quantity.parse(text).value()


def _it_shape(spec: dict) -> tuple:
    cpu = spec.get("cpu") or {}
    mem = spec.get("memory") or {}
    return (
        int(cpu.get("guest") or 0),
        _bytes(str(mem.get("guest") or "0")),
        bool(cpu.get("dedicatedCPUPlacement")),
        bool(cpu.get("isolateEmulatorThread")),
        cpu.get("numa") is not None,
        cpu.get("realtime") is not None,
        (mem.get("hugepages") or {}).get("pageSize"),
        spec.get("ioThreadsPolicy"),
        len(spec.get("gpus") or ()),
        bool(mem.get("overcommitPercent")),
    )


def _vmi_shape(vmi_spec: dict) -> tuple:
    dom = vmi_spec.get("domain") or {}
    cpu = dom.get("cpu") or {}
    mem = dom.get("memory") or {}
    vcpus = 1
    for k in ("sockets", "cores", "threads"):
        v = cpu.get(k)
        vcpus *= v if isinstance(v, int) and v > 0 else 1
    guest = mem.get("guest")
    hugepages = mem.get("hugepages")
    requests = (dom.get("resources") or {}).get("requests") or {}
    return (
        vcpus,
        _bytes(str(guest)) if guest is not None else 0,
        bool(cpu.get("dedicatedCpuPlacement")),
        bool(cpu.get("isolateEmulatorThread")),
        cpu.get("numa") is not None,
        cpu.get("realtime") is not None,
        hugepages.get("pageSize") if isinstance(hugepages, dict) else None,
        dom.get("ioThreadsPolicy"),
        len(dom.get("devices", {}).get("gpus") or ()),
        "memory" in requests,
    )


_SHAPE_WORDS = (None, None, "dedicated CPUs", "an isolated emulator thread", "guest NUMA passthrough",
                "realtime CPUs", "hugepages", "ioThreadsPolicy", "GPUs", "a memory request (overcommit)")


def _describe(shape: tuple, memory_text: str) -> str:
    n = shape[0]
    memory = f"{memory_text} of guest memory" if memory_text else "no guest memory"
    s = f"{n} vCPU{'s' if n != 1 else ''} and {memory}"
    extras = []
    for i, word in enumerate(_SHAPE_WORDS):
        if word is None or not shape[i]:
            continue
        if i == 6:
            extras.append(f"{shape[i]} hugepages")
        elif i == 7:
            extras.append(f"ioThreadsPolicy {shape[i]}")
        elif i == 8:
            extras.append(f"{shape[i]} GPU{'s' if shape[i] != 1 else ''}")
        else:
            extras.append(word)
    return s + (" with " + ", ".join(extras) if extras else "")


def _fits(it: tuple, vmi: tuple) -> bool:
    """The instancetype can give this VMI shape. A VMI memory request without an overcommitting
    type is left to the verification, whose difference (the request would go) is the clearer
    reason for the many VMs that set their memory as a request."""
    return it[:9] == vmi[:9] and (vmi[9] or not it[9])


def _differs(a: tuple, b: tuple) -> str:
    words = []
    for i, word in enumerate(_SHAPE_WORDS):
        if word is not None and a[i] != b[i]:
            words.append(word)
    return ", ".join(words)


# --- paths -------------------------------------------------------------------------------------
_MISSING = object()


def _get(root: Any, path: Path) -> Any:
    for p in path:
        if isinstance(p, int):
            if not isinstance(root, list) or p >= len(root):
                return _MISSING
            root = root[p]
        else:
            if not isinstance(root, dict) or p not in root:
                return _MISSING
            root = root[p]
    return root


def _show(path: Path, base: str = _TEMPLATE) -> str:
    out = base
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _related(a: Path, b: Path) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _remove(template: dict, path: Path) -> Path | None:
    """Delete `path`, then every dict ancestor it leaves empty; the topmost path removed."""
    parent = _get(template, path[:-1])
    if not isinstance(parent, dict) or path[-1] not in parent:
        return None
    del parent[path[-1]]
    top = path
    while len(top) > 1:
        up = top[:-1]
        if up in _KEEP or isinstance(up[-1], int):
            break
        node = _get(template, up)
        if not isinstance(node, dict) or node:
            break
        holder = _get(template, up[:-1])
        if not isinstance(holder, dict):
            break
        del holder[up[-1]]
        top = up
    return top


# --- the fields each side owns -----------------------------------------------------------------
_D = ("spec", "domain")


def _instancetype_paths(it: dict, template: dict) -> list[Path]:
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
    present = [p for p in paths if _get(template, p) is not _MISSING]
    for k, v in (it.get("annotations") or {}).items():
        if _get(template, ("metadata", "annotations", k)) == v:
            present.append(("metadata", "annotations", k))
    return present


_DEVICE_KEYS = ("rng", "tpm", "useVirtioTransitional", "blockMultiQueue", "networkInterfaceMultiqueue",
                "autoattachGraphicsDevice", "autoattachMemBalloon", "autoattachPodInterface",
                "autoattachSerialConsole", "autoattachInputDevice")
_FEATURE_KEYS = ("acpi", "apic", "kvm", "pvspinlock", "smm")


def _preference_paths(template: dict, taken: set[Path]) -> list[Path]:
    """Template fields some preference can set (`preferred*`), present in `template`, in document order."""
    out: list[Path] = []
    spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    dom = spec.get("domain") if isinstance(spec.get("domain"), dict) else {}
    devs = dom.get("devices") if isinstance(dom.get("devices"), dict) else {}
    dv = _D + ("devices",)
    disks = devs.get("disks") if isinstance(devs.get("disks"), list) else []
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
        items = devs.get(listed) if isinstance(devs.get(listed), list) else []
        for i, x in enumerate(items):
            if isinstance(x, dict):
                out += [dv + (listed, i, k) for k in keys if k in x]
    out += [dv + (k,) for k in _DEVICE_KEYS if k in devs]
    for holder, key in (("video", "type"), ("sound", "model")):
        if isinstance(devs.get(holder), dict) and key in devs[holder]:
            out.append(dv + (holder, key))
    feats = dom.get("features") if isinstance(dom.get("features"), dict) else {}
    out += [_D + ("features", k) for k in _FEATURE_KEYS if k in feats]
    if isinstance(feats.get("hyperv"), dict):
        out += [_D + ("features", "hyperv", k) for k in feats["hyperv"]]
    boot = _get(dom, ("firmware", "bootloader"))
    if isinstance(boot, dict):
        out += [_D + ("firmware", "bootloader", k) for k in ("efi", "bios") if k in boot]
    if isinstance(dom.get("machine"), dict) and "type" in dom["machine"]:
        out.append(_D + ("machine", "type"))
    clock = dom.get("clock") if isinstance(dom.get("clock"), dict) else {}
    out += [_D + ("clock", k) for k in ("utc", "timezone", "timer") if k in clock]
    if "launchSecurity" in dom:
        out.append(_D + ("launchSecurity",))
    out += [("spec", k) for k in ("subdomain", "terminationGracePeriodSeconds", "architecture") if k in spec]
    ann = _get(template, ("metadata", "annotations"))
    if isinstance(ann, dict):
        out += [("metadata", "annotations", k) for k in ann]
    return [p for p in out if p not in taken]


def _set_by(pref: _Pref, bare: dict, paths: list[Path]) -> list[Path]:
    """The fields among `paths` that `pref` fills on the template stripped of all of them."""
    from instancetype.engine.preference import apply_preference

    spec = clone(bare.get("spec") or {})
    meta: dict = {}
    apply_preference(pref.spec, spec, metadata=meta)
    filled = {"spec": spec, "metadata": meta}
    return [p for p in paths if _get(filled, p) is not _MISSING]


# --- comparing VMIs ----------------------------------------------------------------------------
def _diff(a: Any, b: Any, path: Path, out: list) -> None:
    if type(a) is not type(b):
        out.append((path, a, b))
    elif isinstance(a, dict):
        for k in a:
            if k not in b:
                out.append((path + (k,), a[k], _MISSING))
            else:
                _diff(a[k], b[k], path + (k,), out)
        for k in b:
            if k not in a:
                out.append((path + (k,), _MISSING, b[k]))
    elif isinstance(a, list):
        if len(a) != len(b):
            out.append((path, a, b))
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                _diff(x, y, path + (i,), out)
    elif a != b:
        out.append((path, a, b))


def vmi_differences(original: dict, migrated: dict, instancetype: dict | None = None,
                    preference: dict | None = None) -> list[tuple]:
    """(path, original value, migrated value) where two VMIs differ, ignoring the annotations the
    instancetype and preference add: their name annotations and their own spec annotations
    (specs or whole objects), where the original VMI has no such annotation."""
    from instancetype.engine.spec import unwrap

    excused = {K.ANNOTATION_INSTANCETYPE_NAME, K.ANNOTATION_CLUSTER_INSTANCETYPE_NAME,
               K.ANNOTATION_PREFERENCE_NAME, K.ANNOTATION_CLUSTER_PREFERENCE_NAME}
    for side in (instancetype, preference):
        excused.update((unwrap(side) or {}).get("annotations") or {})
    orig_ann = (original.get("metadata") or {}).get("annotations") or {}
    mig_meta = migrated.get("metadata") or {}
    mig_ann = mig_meta.get("annotations") or {}
    kept = {k: v for k, v in mig_ann.items() if k in orig_ann or k not in excused}
    if kept != mig_ann:
        migrated = dict(migrated, metadata=dict(mig_meta, annotations=kept))
        if not kept and "annotations" not in (original.get("metadata") or {}):
            del migrated["metadata"]["annotations"]
    out: list = []
    _diff(original, migrated, (), out)
    return out


def _value(v: Any) -> str:
    return "unset" if v is _MISSING else json.dumps(v, separators=(",", ":"), sort_keys=True)


def _explain(diffs: list, limit: int = 3) -> str:
    """`spec.domain.cpu.cores would be 1, not 2; ...`: VMI paths, migrated value first."""
    parts = [f"{_show(p, '')[1:]} would be {_value(b)}, not {_value(a)}" for p, a, b in diffs[:limit]]
    text = "; ".join(parts)
    if len(diffs) > limit:
        text += f" (and {len(diffs) - limit} more)"
    return text


# --- one attempt -------------------------------------------------------------------------------
@dataclass
class _Attempt:
    it: _Type
    pref: _Pref | None
    stripped: list[Path]        # preference fields moved out of the VM
    leftover: int               # preference-type fields left in the VM
    vm: dict | None = None
    failure: str = ""

    def key(self) -> tuple:
        p = self.pref
        return (self.leftover, p is None, self.it.deprecated, p.weight if p else 0, self.it.name,
                p.name if p else "")


def _matcher(obj: dict) -> dict:
    return {"kind": obj["kind"], "name": obj["metadata"]["name"]}


def _migrated_vm(vm: dict, template: dict, it: _Type, pref: _Pref | None) -> dict:
    spec: dict = {}
    for k, v in vm["spec"].items():
        if k == "template":
            spec["instancetype"] = _matcher(it.obj)
            if pref is not None:
                spec["preference"] = _matcher(pref.obj)
            spec[k] = template
        else:
            spec[k] = v
    return {**vm, "spec": spec}


def _try(vm: dict, target: dict, stripped_it: dict, it: _Type, pref: _Pref | None, strip: list[Path],
         owned: int, config: Any) -> _Attempt:
    """Verify (it, pref), putting back stripped preference fields that make a difference."""
    from instancetype.engine.vmi import build_vmi

    kept: set[Path] = set()
    for _ in range(_MAX_ROUNDS):
        current = [p for p in strip if p not in kept]
        template = clone(stripped_it)
        for p in current:
            _remove(template, p)
        migrated = _migrated_vm(vm, template, it, pref)
        attempt = _Attempt(it, pref, current, owned - len(current), migrated)
        try:
            vmi = build_vmi(migrated, instancetype=it.spec, preference=pref.spec if pref else None,
                            config=config)
        except VMIError as e:
            attempt.vm, attempt.failure = None, f"the VM would not start: {e}"
            return attempt
        diffs = vmi_differences(target, vmi, it.spec, pref.spec if pref else None)
        if not diffs:
            return attempt
        # VMI paths and template paths line up (the VMI is the template plus defaults).
        back = {p for p in current if any(_related(p, d[0]) for d in diffs)}
        if not back:
            attempt.vm, attempt.failure = None, f"the VMI's {_explain(diffs)}"
            return attempt
        kept |= back
    attempt.vm, attempt.failure = None, "the VMI would still differ after putting fields back"
    return attempt


# --- the public function -----------------------------------------------------------------------
def _check_vm(vm: Any) -> None:
    if not isinstance(vm, dict):
        raise MigrationError(f"expected a VirtualMachine object, got {type(vm).__name__}")
    if vm.get("kind") != "VirtualMachine":
        raise MigrationError(f"expected a VirtualMachine, got {vm.get('kind') or 'an object without kind'}")
    spec = vm.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("template"), dict) \
            or not isinstance(spec["template"].get("spec"), dict):
        raise MigrationError("spec.template.spec: Required value: the VM has no template to migrate")
    for key in ("instancetype", "preference"):
        m = spec.get(key)
        if m is not None:
            name = m.get("name") if isinstance(m, dict) else m
            raise MigrationError(f"spec.{key}: the VM already references {key} {name!r}; nothing to migrate")


def migrate(vm: dict, *, instancetypes: Iterable[dict] | None = None,
            preferences: Iterable[dict] | None = None, config: Any = None) -> Migration:
    """The VM rewritten to reference a catalogue instancetype and preference (see the module doc).

    `instancetypes` / `preferences` default to the catalogue's current cluster objects.
    Raises MigrationError with the reason when no pair reproduces the VM's VMI, and the engine's
    errors (DecodeError, QuantityError, ...) for a VM KubeVirt could not read.
    """
    from instancetype.engine.vmi import build_vmi

    _check_vm(vm)
    cat_types, cat_prefs = _catalogue()
    types = _types(instancetypes) if instancetypes is not None else list(cat_types)
    prefs = _prefs(preferences) if preferences is not None else list(cat_prefs)
    vm = clone(vm)
    try:
        target = build_vmi(vm, config=config)
    except VMIError as e:
        raise MigrationError(f"the VM does not start as it is: {e}") from None

    shape = _vmi_shape(target["spec"])
    candidates = [t for t in types if _fits(t.shape, shape)]
    if not candidates:
        guest = ((target["spec"].get("domain") or {}).get("memory") or {}).get("guest")
        memory = str(guest) if guest is not None else ""
        msg = f"no catalogue instancetype has {_describe(shape, memory)}"
        same_size = [t for t in types if t.shape[:2] == shape[:2]]
        if same_size:
            msg += " (" + "; ".join(f"{t.name} differs in {_differs(t.shape, shape)}" for t in same_size) + ")"
        raise MigrationError(msg)

    template = vm["spec"]["template"]
    plans = []   # (predicted key, it, pref, strip, owned, it-stripped template)
    it_removed: dict[str, list[Path]] = {}
    for it in candidates:
        it_paths = _instancetype_paths(it.spec, template)
        stripped_it = clone(template)
        for p in it_paths:
            _remove(stripped_it, p)
        it_removed[it.name] = it_paths
        owned_paths = _preference_paths(stripped_it, set(it_paths))
        bare = clone(stripped_it)
        for p in owned_paths:
            _remove(bare, p)
        owned = len(owned_paths)
        for pref in prefs + [None]:
            strip = _set_by(pref, bare, owned_paths) if pref is not None else []
            a = _Attempt(it, pref, strip, owned - len(strip))
            plans.append((a.key(), it, pref, strip, owned, stripped_it))
    plans.sort(key=lambda x: x[0])

    best: _Attempt | None = None
    failures: dict[str, str] = {}
    for predicted, it, pref, strip, owned, stripped_it in plans:
        if best is not None and best.key() <= predicted:
            break
        attempt = _try(vm, target, stripped_it, it, pref, strip, owned, config)
        if attempt.vm is None:
            if pref is None:
                failures[it.name] = attempt.failure
            continue
        if best is None or attempt.key() < best.key():
            best = attempt
    if best is None:
        reasons = " | ".join(f"with {t.ref} {failures.get(t.name, 'no preference reproduces the VM')}"
                             for t in candidates)
        raise MigrationError(f"no catalogue instancetype and preference reproduce the VM: {reasons}")
    return Migration(best.vm, clone(best.it.obj), clone(best.pref.obj) if best.pref else None,
                     _changes(template, it_removed[best.it.name], best))


def _changes(template: dict, it_paths: list[Path], best: _Attempt) -> list[Change]:
    """One line per moved field: the topmost object removed whole, if all of it moved to one side."""
    owner = {p: best.it.ref for p in it_paths}
    owner.update({p: best.pref.ref for p in best.stripped} if best.pref else {})
    result = best.vm["spec"]["template"]
    out: list[Change] = []
    seen: set[Path] = set()
    for p, who in owner.items():
        top = p
        while len(top) > 1:
            up = top[:-1]
            if up in _KEEP or isinstance(up[-1], int) or _get(result, up) is not _MISSING:
                break
            if any(_related(q, up) and len(q) > len(up) and owner[q] != who for q in owner):
                break
            top = up
        if top not in seen:
            seen.add(top)
            out.append(Change(_show(top), who))
    return out
