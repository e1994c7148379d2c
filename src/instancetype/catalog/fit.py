"""`catalog fit`: the smallest instancetype of each class that gives a VM the vCPUs and memory asked for.

Rules:
- per class (series), the smallest type with at least the vCPUs and memory asked for;
- ranked by extra vCPUs over the request, then extra memory, then name;
- a type with dedicated CPUs, hugepages, GPUs or overcommitted memory is offered only when the
  request asks for that feature or `--class` names its class; asking for dedicated CPUs offers
  every class with dedicated CPUs, with or without hugepages;
- a feature the request asks for must be present in the type;
- deprecated types (gn1, server, highperformance) only when `--class` names them.
Pure: works on the catalogue's instancetype objects, no store, no engine.
"""
from __future__ import annotations

from dataclasses import dataclass, field

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
    """What fit needs to know of one catalogue instancetype."""

    name: str
    series: str               # "u1", "cx1", "server"
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


def describe(obj: dict) -> TypeInfo:
    from instancetype.catalog.labels import LABEL_CLASS, LABEL_DEPRECATED

    spec, labels = obj["spec"], obj["metadata"]["labels"]
    name = obj["metadata"]["name"]
    series = name.split(".", 1)[0]
    return TypeInfo(
        name=name, series=series, prefix=series.rstrip("0123456789"),
        class_label=labels.get(LABEL_CLASS, ""),
        cpu=int(spec["cpu"]["guest"]), memory=str(spec["memory"]["guest"]),
        memory_bytes=memory_bytes(str(spec["memory"]["guest"])),
        dedicated_cpu=bool(spec["cpu"].get("dedicatedCPUPlacement")),
        hugepages=(spec["memory"].get("hugepages") or {}).get("pageSize"),
        gpus=len(spec.get("gpus") or ()),
        overcommit=spec["memory"].get("overcommitPercent"),
        deprecated=labels.get(LABEL_DEPRECATED) == "true",
    )


@dataclass(frozen=True)
class Request:
    cpu: int = 1
    memory: str | None = None           # as given, for messages
    memory_bytes: int = 0
    classes: tuple[str, ...] = ()       # as given on the command line
    dedicated_cpu: bool = False
    hugepages: bool = False
    overcommit: bool = False
    gpus: int = 0


@dataclass
class Fit:
    type: TypeInfo
    extra_cpu: int
    extra_memory: int
    reasons: list[str] = field(default_factory=list)

    def to_dict(self, kind: str) -> dict:
        t = self.type
        return {"name": t.name, "kind": kind, "class": t.class_label, "cpu": t.cpu, "memory": t.memory,
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


def _offered(t: TypeInfo, req: Request, named: set[str]) -> bool:
    is_named = t.series in named
    if named and not is_named:
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


def _reasons(t: TypeInfo, req: Request, named: set[str]) -> list[str]:
    why_named = "--class names it"
    out = [f"{t.cpu} vCPUs >= {req.cpu}"]
    if req.memory is not None:
        out.append(f"{t.memory} memory >= {req.memory}")
    else:
        out.append(f"{t.memory} memory")
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
    out.append(f"smallest {t.class_label} type that fits")
    return out


def fit(req: Request, objects: list[dict]) -> list[Fit]:
    """The best type per class for `req`, ranked. Raises CLIError when nothing fits."""
    types = [describe(o) for o in objects]
    named = resolve_classes(req.classes, types)
    best: dict[str, Fit] = {}
    for t in types:
        if not _offered(t, req, named) or t.cpu < req.cpu or t.memory_bytes < req.memory_bytes:
            continue
        f = Fit(t, t.cpu - req.cpu, t.memory_bytes - req.memory_bytes)
        cur = best.get(t.series)
        if cur is None or _rank(f) < _rank(cur):
            best[t.series] = f
    fits = sorted(best.values(), key=_rank)
    if not fits:
        raise CLIError(_nothing_fits(req, types, named))
    for f in fits:
        f.reasons = _reasons(f.type, req, named)
    return fits


def _nothing_fits(req: Request, types: list[TypeInfo], named: set[str]) -> str:
    asked = f"--cpu {req.cpu}" + (f" --memory {req.memory}" if req.memory is not None else "")
    offered = [t for t in types if _offered(t, req, named)]
    if not offered:
        flags = [f for f, on in (("--dedicated-cpu", req.dedicated_cpu), ("--hugepages", req.hugepages),
                                 ("--overcommit", req.overcommit), (f"--gpus {req.gpus}", req.gpus)) if on]
        hint = ""
        if req.gpus and not named:
            hint = " (GPU types, gn1, are deprecated: name them with --class gn)"
        what = " ".join(flags) or "this request"
        where = f" in --class {', '.join(req.classes)}" if req.classes else ""
        return f"no instancetype offers {what}{where}{hint}"
    max_cpu = max(t.cpu for t in offered)
    max_mem = max(t.memory_bytes for t in offered)
    if req.cpu > max_cpu:
        return f"invalid value for --cpu: no offered instancetype has {req.cpu} vCPUs (at most {max_cpu})"
    if req.memory_bytes > max_mem:
        return (f"invalid value for --memory: no offered instancetype has {req.memory} memory "
                f"(at most {format_bytes(max_mem)})")
    return f"no offered instancetype has both {asked}"
