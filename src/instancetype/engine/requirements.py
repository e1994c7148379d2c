"""Preference requirements (CPU, then memory, then architecture; the first failure wins).

    check(preference, instancetype, vmi_spec) -> RequirementsError | None
    check_requirements(vm, *, instancetype=None, preference=None, config=None, admission=False)

`check` is KubeVirt's checker itself (pkg/instancetype/preference/requirements:
checker.go, cpu.go, memory.go, arch.go) and returns the error instead of raising,
for VM admission to wrap. `check_requirements` is the public operation: against
the template as written, or (admission=True) as the VM validating webhook sees
it: spread check, instancetype + preference applied, VMI spec defaults, check.
The conflict paths always name the VM template (`spec.template.spec...`) or
`spec.instancetype`, whatever the spec checked.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from instancetype.engine.guard import public
from instancetype.engine.jsondata import copy_json
from instancetype.errors import ConflictError, RequirementsError

from .apply import apply_to_spec, conflict_message
from .preference.cpu import preferred_topology, spread_options
from .spec import instancetype_spec, preference_spec
from .spread import check_spread
from .vmi_defaults import set_vmi_spec_defaults

_CPU = "spec.template.spec.domain.cpu"
_SOCKETS, _CORES, _THREADS = _CPU + ".sockets", _CPU + ".cores", _CPU + ".threads"
_MEMORY = "spec.template.spec.domain.memory"
_ARCH = "spec.template.spec.architecture"
_INSTANCETYPE = "spec.instancetype"
_U32 = 0xFFFFFFFF  # Go multiplies the uint32 topology counts, wrapping on overflow


def _err(message: str, *fields: str) -> RequirementsError:
    return RequirementsError(message, fields=list(fields))


def _obj(v: Any) -> dict[str, Any]:
    return v if type(v) is dict else {}


def _u32(d: dict[str, Any], key: str) -> int:
    v = d.get(key)
    return v if type(v) is int else 0


def _check_cpu(required: int, instancetype: dict[str, Any] | None, preference: dict[str, Any], spec: dict[str, Any]) -> RequirementsError | None:
    if instancetype is not None:
        guest = _u32(_obj(instancetype.get("cpu")), "guest")
        if guest < required:
            return _err(f"insufficient CPU resources of {guest} vCPU provided by instance type, "
                        f"preference requires {required} vCPU", _INSTANCETYPE)
        return None
    cpu = _obj(spec.get("domain")).get("cpu")
    if type(cpu) is not dict:
        return _err(f"no CPU resources provided by VirtualMachine, preference requires {required} vCPU", _CPU)
    sockets, cores, threads = _u32(cpu, "sockets"), _u32(cpu, "cores"), _u32(cpu, "threads")
    topology = preferred_topology(preference)
    fields: tuple[str, ...]
    if topology in ("threads", "preferThreads"):
        provided, fields, shape = threads, (_THREADS,), "threads"
    elif topology in ("cores", "preferCores"):
        provided, fields, shape = cores, (_CORES,), "cores"
    elif topology in ("sockets", "preferSockets"):
        provided, fields, shape = sockets, (_SOCKETS,), "sockets"
    elif topology in ("spread", "preferSpread"):
        _, across = spread_options(preference)
        if across == "SocketsCores":
            provided, fields = (sockets * cores) & _U32, (_SOCKETS, _CORES)
        elif across == "CoresThreads":
            provided, fields = (cores * threads) & _U32, (_CORES, _THREADS)
        elif across == "SocketsCoresThreads":
            provided, fields = (sockets * cores * threads) & _U32, (_SOCKETS, _CORES, _THREADS)
        else:
            # Go's checkSpread: no case matches, zero vCPUs and no conflict paths.
            provided, fields = 0, ()
        shape = across
    elif topology in ("any", "preferAny"):
        provided, fields, shape = (cores * sockets * threads) & _U32, (_CORES, _SOCKETS, _THREADS), \
            "cores, sockets and threads"
    else:
        return None  # an unknown topology is not checked
    if provided < required:
        return _err(f"insufficient CPU resources of {provided} vCPU provided by VirtualMachine, "
                    f"preference requires {required} vCPU provided as {shape}", *fields)
    return None


@lru_cache(maxsize=1024)
def _memory_short(provided_raw: str, required_raw: str) -> bool:
    """Whether the quantity `provided_raw` is less than `required_raw` (a pure function of the
    two texts, compared once per pair)."""
    from instancetype.api.quantity import Quantity

    return bool(Quantity.parse(provided_raw) < Quantity.parse(required_raw))


def _check_memory(required_raw: Any, instancetype: dict[str, Any] | None, spec: dict[str, Any]) -> RequirementsError | None:
    if required_raw is None:
        required_raw = "0"
    provided_raw: Any = "0"
    who, field = "VirtualMachine", _MEMORY
    if instancetype is not None:
        who, field = "instance type", _INSTANCETYPE
        provided_raw = _obj(instancetype.get("memory")).get("guest")
        if provided_raw is None:
            provided_raw = "0"
    vm_guest = _obj(_obj(spec.get("domain")).get("memory")).get("guest")
    if vm_guest is not None:
        provided_raw = vm_guest  # wording and path stay those chosen above (Go's checkMemory)
    if type(provided_raw) is str and type(required_raw) is str:
        if not _memory_short(provided_raw, required_raw):
            return None
    from instancetype.api.quantity import Quantity  # (only past the memoised comparison)

    provided, required = Quantity.parse(provided_raw), Quantity.parse(required_raw)
    if provided < required:
        return _err(f"insufficient Memory resources of {provided} provided by {who}, "
                    f"preference requires {required}", field)
    return None


def check(preference: dict[str, Any] | None, instancetype: dict[str, Any] | None, vmi_spec: dict[str, Any]) -> RequirementsError | None:
    """KubeVirt's requirements checker; the first failure as a RequirementsError, or None."""
    if not preference:
        return None
    reqs = preference.get("requirements")
    if type(reqs) is not dict:
        return None
    spec = _obj(vmi_spec)
    cpu = reqs.get("cpu")
    if type(cpu) is dict:
        err = _check_cpu(_u32(cpu, "guest"), instancetype, preference, spec)
        if err:
            return err
    mem = reqs.get("memory")
    if type(mem) is dict:
        err = _check_memory(mem.get("guest"), instancetype, spec)
        if err:
            return err
    arch = reqs.get("architecture")
    if arch is not None:
        actual = spec.get("architecture") or ""
        if actual != arch:
            return _err(f"preference requires architecture {arch} but {actual} is being requested", _ARCH)
    return None


def _template(vm: dict[str, Any]) -> dict[str, Any]:
    spec = vm.get("spec") if isinstance(vm, dict) else None
    tmpl = spec.get("template") if isinstance(spec, dict) else None
    return tmpl if isinstance(tmpl, dict) else {}


@public("check preference requirements")
def check_requirements(vm: dict[str, Any], *, instancetype: dict[str, Any] | None = None, preference: dict[str, Any] | None = None,
                       config: dict[str, Any] | None = None, admission: bool = False) -> None:
    """Raise RequirementsError when the preference's requirements are not met.

    admission=True runs the VM validating webhook's sequence on a copy of the
    template (KubeVirt: vms-admitter Admit + instancetype webhooks/vm ApplyToVM):
    spread check and instancetype/preference application (only when one of them
    is given; failures raise SpreadError / ConflictError), the VMI spec defaults
    (their failure raises as is), then the check.
    """
    instancetype = instancetype_spec(instancetype)
    preference = preference_spec(preference)
    tmpl = _template(vm)
    if not admission:
        spec = tmpl.get("spec")
        err = check(preference, instancetype, spec if isinstance(spec, dict) else {})
        if err:
            raise err
        return

    spec = copy_json(got) if isinstance(got := tmpl.get("spec"), dict) else {}
    metadata = copy_json(got) if isinstance(got := tmpl.get("metadata"), dict) else {}
    if instancetype is not None or preference is not None:
        check_spread(instancetype, preference)
        conflicts = apply_to_spec(spec, metadata, instancetype, preference, root="spec.template.spec")
        if conflicts:
            raise ConflictError(conflict_message(conflicts), fields=list(conflicts))
    set_vmi_spec_defaults(spec, config)
    err = check(preference, instancetype, spec)
    if err:
        raise err
