"""`catalog fit`: the smallest instancetype of each class that gives a VM the vCPUs and memory asked for.

Rules:
- the types are every instancetype given: the store's or cluster's (both kinds, the catalogue among
  them) or the built-in catalogue's;
- per class (series), the smallest type with the vCPUs and memory asked for: a minimum, or a range
  `MIN-MAX` (`--cpu 2-4`, `--memory 4Gi-8Gi`), and memory per vCPU in a range (`--memory-per-cpu`);
  with `every`, each type that fits, not only the smallest of its class;
- a type whose name matches an `--exclude` pattern (shell-style) is never offered;
- a type that a `check` refuses (the engine's answer: a preference's requirements, an architecture,
  a VM that conflicts with it) is not offered; the reason is kept for the nothing-fits message;
- ranked by extra vCPUs over the request, then extra memory, then name;
- a type with dedicated CPUs, hugepages, GPUs or overcommitted memory is offered only when the
  request asks for that feature or `--class` names its class; asking for dedicated CPUs offers
  every class with dedicated CPUs, with or without hugepages;
- a feature the request asks for must be present in the type;
- deprecated types (gn1, server, highperformance) only when `--class` names them;
- sizes in natural order: by class, then vCPUs, memory and name (u1.small before u1.2xlarge).
Pure: works on instancetype objects, no store; a `check` may run the engine.
"""
from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from instancetype.errors import CLIError

_BINARY = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}


def memory_bytes(text: str) -> int:
    """Bytes of a memory quantity, rounded up (resource.Quantity.Value()); QuantityError if malformed."""
    from instancetype.api.quantity import Quantity

    return Quantity.parse(text).value()


def format_bytes(n: int) -> str:
    """A byte count in the largest binary unit that divides it exactly (`10Gi`, `1536Mi`, `0`)."""
    if n == 0:
        return "0"
    for unit in ("Ei", "Pi", "Ti", "Gi", "Mi"):
        if n % _BINARY[unit] == 0:
            return f"{n // _BINARY[unit]}{unit}"
    # not a whole number of MiB (a decimal request such as 6G): an approximation is more readable
    for unit in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        if n >= _BINARY[unit]:
            return f"~{n / _BINARY[unit]:.1f}{unit}"
    return str(n)


@dataclass(frozen=True)
class TypeInfo:
    """What fit needs to know of one instancetype (the catalogue's or a user's)."""

    name: str
    series: str               # "u1", "cx1", "server"; a user's type without a dot: its name
    prefix: str               # "u", "cx", "server"
    class_label: str
    cpu: int
    memory: str
    memory_bytes: int
    dedicated_cpu: bool
    hugepages: str | None
    gpus: int
    overcommit: int | None
    deprecated: bool
    kind: str = "VirtualMachineClusterInstancetype"
    namespace: str | None = None
    arch: str | None = None   # the `instancetype.kubevirt.io/arch` label, where a type has one

    @property
    def resource(self) -> str:
        """`virtualmachineclusterinstancetype/u1.medium`: what `create vm --instancetype` accepts."""
        return f"{self.kind.lower()}/{self.name}"


def describe(obj: dict) -> TypeInfo:
    """The facts of one instancetype object as admission left it (guest CPU and memory present)."""
    from instancetype.catalog.labels import LABEL_CLASS, LABEL_DEPRECATED

    spec = obj.get("spec") or {}
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    cpu, memory = spec.get("cpu") or {}, spec.get("memory") or {}
    name = meta.get("name", "")
    series = name.split(".", 1)[0]
    return TypeInfo(
        name=name, series=series, prefix=series.rstrip("0123456789") or series,
        class_label=labels.get(LABEL_CLASS, ""),
        cpu=int(cpu.get("guest") or 0), memory=str(memory.get("guest") or "0"),
        memory_bytes=memory_bytes(str(memory.get("guest") or "0")),
        dedicated_cpu=bool(cpu.get("dedicatedCPUPlacement")),
        hugepages=(memory.get("hugepages") or {}).get("pageSize"),
        gpus=len(spec.get("gpus") or ()),
        overcommit=memory.get("overcommitPercent"),
        deprecated=labels.get(LABEL_DEPRECATED) == "true",
        kind=obj.get("kind") or "VirtualMachineClusterInstancetype",
        namespace=meta.get("namespace"),
        arch=labels.get("instancetype.kubevirt.io/arch"),
    )


def natural_key(t: TypeInfo) -> tuple:
    """Sizes in natural order within a class: by vCPUs, then memory, then name."""
    return (t.series, t.cpu, t.memory_bytes, t.name)


@dataclass(frozen=True)
class Request:
    cpu: int = 1                        # at least
    memory: str | None = None           # as given, for messages
    memory_bytes: int = 0               # at least
    classes: tuple[str, ...] = ()       # as given on the command line
    dedicated_cpu: bool = False
    hugepages: bool = False
    overcommit: bool = False
    gpus: int = 0
    cpu_max: int | None = None          # at most (`--cpu 2-4`)
    memory_max_bytes: int | None = None
    memory_per_cpu: tuple[int, int | None] | None = None   # bytes per vCPU: at least, at most
    exclude: tuple[str, ...] = ()       # name patterns never offered
    every: bool = False                 # each type that fits, not the smallest of each class
    # The engine's verdict on one type: None if it may be offered, else why not.
    check: Callable[[dict], str | None] | None = field(default=None, compare=False)


@dataclass
class Fit:
    type: TypeInfo
    extra_cpu: int
    extra_memory: int
    reasons: list[str] = field(default_factory=list)

    def to_dict(self, kind: str) -> dict:
        t = self.type
        return {"name": t.name, "kind": t.kind or kind, "class": t.class_label, "cpu": t.cpu, "memory": t.memory,
                "extraCPU": self.extra_cpu, "extraMemory": format_bytes(self.extra_memory),
                "extraMemoryBytes": self.extra_memory,
                "reasons": list(self.reasons)}


def resolve_classes(values: tuple[str, ...], types: list[TypeInfo]) -> set[str]:
    """Series named by `--class`: a class label (`general.purpose`), a prefix (`u`) or a series (`u1`)."""
    named: set[str] = set()
    for raw in values:
        v = raw.strip().lower()
        hit = {t.series for t in types if v in (t.class_label.lower(), t.prefix, t.series)}
        if not hit:
            known = sorted({t.class_label for t in types})
            raise CLIError(f'invalid value for --class: unknown class "{raw}" '
                           f"(known: {', '.join(known)}, or a series prefix such as u or cx1)")
        named |= hit
    return named


def _excluded(t: TypeInfo, req: Request) -> bool:
    return any(fnmatch.fnmatchcase(t.name, p) for p in req.exclude)


def _offered(t: TypeInfo, req: Request, named: set[str]) -> bool:
    is_named = t.series in named
    if named and not is_named:
        return False
    if _excluded(t, req):
        return False
    if t.deprecated and not is_named:
        return False
    # what the request asks for must be there
    if (req.dedicated_cpu and not t.dedicated_cpu) or (req.hugepages and not t.hugepages) \
            or (req.overcommit and t.overcommit is None) or t.gpus < req.gpus:
        return False
    if is_named:
        return True
    # special features only when asked for (dedicated CPUs bring their hugepages along)
    if t.dedicated_cpu and not req.dedicated_cpu:
        return False
    if t.hugepages and not (req.hugepages or (req.dedicated_cpu and t.dedicated_cpu)):
        return False
    if t.gpus and not req.gpus:
        return False
    if t.overcommit is not None and not req.overcommit:
        return False
    return True


def _rank(f: Fit) -> tuple:
    return (f.extra_cpu, f.extra_memory, f.type.name)


def _sized(t: TypeInfo, req: Request) -> bool:
    """The vCPUs, memory and memory per vCPU asked for, each within its range."""
    if t.cpu < req.cpu or (req.cpu_max is not None and t.cpu > req.cpu_max):
        return False
    if t.memory_bytes < req.memory_bytes or (req.memory_max_bytes is not None and t.memory_bytes > req.memory_max_bytes):
        return False
    if req.memory_per_cpu is not None:
        low, high = req.memory_per_cpu
        if t.cpu <= 0 or t.memory_bytes < low * t.cpu or (high is not None and t.memory_bytes > high * t.cpu):
            return False
    return True


def _reasons(t: TypeInfo, req: Request, named: set[str]) -> list[str]:
    why_named = "--class names it"
    if req.cpu_max is not None:
        out = [f"{t.cpu} vCPUs in {req.cpu}-{req.cpu_max}"]
    else:
        out = [f"{t.cpu} vCPUs >= {req.cpu}"]
    if req.memory is not None:
        out.append(f"{t.memory} memory " + ("in " if req.memory_max_bytes is not None else ">= ") + req.memory)
    else:
        out.append(f"{t.memory} memory")
    if req.memory_per_cpu is not None and t.cpu:
        out.append(f"{format_bytes(t.memory_bytes // t.cpu)} per vCPU")
    if t.dedicated_cpu:
        out.append("dedicated CPUs (" + ("asked for" if req.dedicated_cpu else why_named) + ")")
    if t.hugepages:
        if req.hugepages:
            how = "asked for"
        elif req.dedicated_cpu and t.dedicated_cpu:
            how = "come with the dedicated CPUs"
        else:
            how = why_named
        out.append(f"{t.hugepages} hugepages ({how})")
    if t.overcommit is not None:
        out.append(f"memory overcommitted {t.overcommit}% (" + ("asked for" if req.overcommit else why_named) + ")")
    if t.gpus:
        out.append(f"{t.gpus} GPU" + ("s" if t.gpus > 1 else "") + " (" + ("asked for" if req.gpus else why_named) + ")")
    if t.deprecated:
        out.append("deprecated (--class names it)")
    if not req.every:
        out.append(f"smallest {t.class_label or t.series} type that fits")
    return out


def fit(req: Request, objects: list[dict]) -> list[Fit]:
    """The best type per class for `req` (or each type that fits, with `every`), ranked; sizes
    in natural order within a class when `every`. Raises CLIError when nothing fits."""
    described = [(describe(o), o) for o in objects]
    types = [t for t, _ in described]
    named = resolve_classes(req.classes, types)
    best: dict[str, Fit] = {}
    every: list[Fit] = []
    refused: dict[str, str] = {}
    for t, obj in described:
        if not _offered(t, req, named) or not _sized(t, req):
            continue
        if req.check is not None:
            why = req.check(obj)
            if why is not None:
                refused[t.name] = why
                continue
        f = Fit(t, t.cpu - req.cpu, t.memory_bytes - req.memory_bytes)
        every.append(f)
        key = f"{t.kind}/{t.namespace}/{t.series}"
        cur = best.get(key)
        if cur is None or _rank(f) < _rank(cur):
            best[key] = f
    if req.every:
        fits = sorted(every, key=lambda f: natural_key(f.type))
    else:
        fits = sorted(best.values(), key=_rank)
    if not fits:
        raise CLIError(_nothing_fits(req, types, named, refused))
    for f in fits:
        f.reasons = _reasons(f.type, req, named)
    return fits


def _nothing_fits(req: Request, types: list[TypeInfo], named: set[str], refused: dict[str, str]) -> str:
    asked = f"--cpu {req.cpu}" + (f" --memory {req.memory}" if req.memory is not None else "")
    if refused:
        # sized right but refused by the engine: say why for the nearest one
        order = {t.name: natural_key(t)[1:] for t in types}
        name = min(refused, key=order.__getitem__)
        why = refused[name]
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        return f"no instancetype fits: {name}: {why}{more}"
    offered = [t for t in types if _offered(t, req, named)]
    if not offered:
        flags = [f for f, on in (("--dedicated-cpu", req.dedicated_cpu), ("--hugepages", req.hugepages),
                                 ("--overcommit", req.overcommit), (f"--gpus {req.gpus}", req.gpus)) if on]
        hint = ""
        if req.gpus and not named:
            hint = " (GPU types, gn1, are deprecated: name them with --class gn)"
        what = " ".join(flags) or "this request"
        where = f" in --class {', '.join(req.classes)}" if req.classes else ""
        if req.exclude and any(_offered(t, replace(req, exclude=()), named) for t in types):
            where += f" outside --exclude {','.join(req.exclude)}"
        return f"no instancetype offers {what}{where}{hint}"
    if req.cpu_max is not None or req.memory_max_bytes is not None or req.memory_per_cpu is not None:
        return "no offered instancetype is within the ranges asked for"
    max_cpu = max(t.cpu for t in offered)
    max_mem = max(t.memory_bytes for t in offered)
    if req.cpu > max_cpu:
        return f"invalid value for --cpu: no offered instancetype has {req.cpu} vCPUs (at most {max_cpu})"
    if req.memory_bytes > max_mem:
        return (f"invalid value for --memory: no offered instancetype has {req.memory} memory "
                f"(at most {format_bytes(max_mem)})")
    return f"no offered instancetype has both {asked}"


def engine_check(*, preference: dict | None = None, arch: str | None = None, vm: dict | None = None,
                 config: dict | None = None) -> Callable[[dict], str | None]:
    """The engine's verdict on giving `vm` (or a bare VM of `arch`) an instancetype with
    `preference`: the VM validating webhook's sequence as KubeVirt runs it (spread check, apply,
    VMI defaults, the preference's requirements). None when admitted, else the refusal's text."""
    import instancetype
    from instancetype.jsonutil import clone

    base = clone(vm) if vm is not None else {"spec": {"template": {"spec": {"domain": {"devices": {}}}}}}
    if arch is not None:
        base.setdefault("spec", {}).setdefault("template", {}).setdefault("spec", {})["architecture"] = arch

    def check(obj: dict) -> str | None:
        label = ((obj.get("metadata") or {}).get("labels") or {}).get("instancetype.kubevirt.io/arch")
        if arch is not None and label is not None and label != arch:
            return f"made for architecture {label}, not {arch}"
        try:
            instancetype.check_requirements(base, instancetype=obj, preference=preference, config=config,
                                            admission=True)
        except instancetype.Error as e:
            return str(e)
        return None

    return check
