"""The shape of a VMI for `migrate-vm`: what an instancetype decides about it.

    instancetype_shape(spec) -> shape    the shape an instancetype spec gives a VMI
    vmi_shape(vmi_spec) -> shape         the shape a VMI has
    fits(it_shape, vmi_shape) -> bool    the instancetype can give that VMI shape
    describe(shape, memory_text) -> "2 vCPUs and 4Gi of guest memory with dedicated CPUs"
    differs(a, b) -> "dedicated CPUs, hugepages"

A shape is a tuple: vCPUs, guest memory bytes, dedicated CPUs, isolated emulator thread, NUMA
passthrough, realtime, hugepages page size, ioThreadsPolicy, GPU count, memory overcommit (a
memory request on the VMI side). Comparing shapes is the cheap prefilter of the search: only
instancetypes of exactly the VM's shape are verified.
"""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=256)
def _bytes(text: str) -> int:
    from instancetype.api.quantity import Quantity

    return Quantity.parse(text).value()


def instancetype_shape(spec: dict) -> tuple:
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


def vmi_shape(vmi_spec: dict) -> tuple:
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


def describe(shape: tuple, memory_text: str) -> str:
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


def fits(it: tuple, vmi: tuple) -> bool:
    """The instancetype can give this VMI shape. A VMI memory request without an overcommitting
    type is left to the verification, whose difference (the request would go) is the clearer
    reason for the many VMs that set their memory as a request."""
    return it[:9] == vmi[:9] and (vmi[9] or not it[9])


def differs(a: tuple, b: tuple) -> str:
    words = []
    for i, word in enumerate(_SHAPE_WORDS):
        if word is not None and a[i] != b[i]:
            words.append(word)
    return ", ".join(words)
