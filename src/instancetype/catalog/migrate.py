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

The pieces: candidates.py (the instancetypes and preferences, read once), vmi_shape.py (step 1),
provided_fields.py (steps 2 and 3: the fields each side provides), template_paths.py (paths and
removing fields), vmi_diff.py (the VMI comparison); the search and the verification are here.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from instancetype.catalog.candidates import (
    PrefCandidate,
    TypeCandidate,
    catalogue_candidates,
    pref_candidates,
    type_candidates,
)
from instancetype.catalog.provided_fields import instancetype_paths, preference_paths, set_by
from instancetype.catalog.template_paths import KEEP, MISSING, Path, path_text, related, remove_field, value_at
from instancetype.catalog.vmi_diff import explain, vmi_differences
from instancetype.catalog.vmi_shape import describe, differs, fits, vmi_shape
from instancetype.errors import Error, VMIError
from instancetype.jsonutil import clone

__all__ = ["Change", "Migration", "MigrationError", "migrate", "vmi_differences"]

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


# --- one attempt -------------------------------------------------------------------------------
@dataclass
class _Attempt:
    it: TypeCandidate
    pref: PrefCandidate | None
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


def _migrated_vm(vm: dict, template: dict, it: TypeCandidate, pref: PrefCandidate | None) -> dict:
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


def _try(vm: dict, target: dict, stripped_it: dict, it: TypeCandidate, pref: PrefCandidate | None,
         strip: list[Path], owned: int, config: Any) -> _Attempt:
    """Verify (it, pref), putting back stripped preference fields that make a difference."""
    from instancetype.engine.vmi import build_vmi

    kept: set[Path] = set()
    for _ in range(_MAX_ROUNDS):
        current = [p for p in strip if p not in kept]
        template = clone(stripped_it)
        for p in current:
            remove_field(template, p)
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
        back = {p for p in current if any(related(p, d[0]) for d in diffs)}
        if not back:
            attempt.vm, attempt.failure = None, f"the VMI's {explain(diffs)}"
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
    cat_types, cat_prefs = catalogue_candidates()
    types = type_candidates(instancetypes) if instancetypes is not None else list(cat_types)
    prefs = pref_candidates(preferences) if preferences is not None else list(cat_prefs)
    vm = clone(vm)
    try:
        target = build_vmi(vm, config=config)
    except VMIError as e:
        raise MigrationError(f"the VM does not start as it is: {e}") from None

    shape = vmi_shape(target["spec"])
    candidates = [t for t in types if fits(t.shape, shape)]
    if not candidates:
        guest = ((target["spec"].get("domain") or {}).get("memory") or {}).get("guest")
        memory = str(guest) if guest is not None else ""
        msg = f"no catalogue instancetype has {describe(shape, memory)}"
        same_size = [t for t in types if t.shape[:2] == shape[:2]]
        if same_size:
            msg += " (" + "; ".join(f"{t.name} differs in {differs(t.shape, shape)}" for t in same_size) + ")"
        raise MigrationError(msg)

    template = vm["spec"]["template"]
    plans = []   # (predicted key, it, pref, strip, owned, it-stripped template)
    it_removed: dict[str, list[Path]] = {}
    for it in candidates:
        it_paths = instancetype_paths(it.spec, template)
        stripped_it = clone(template)
        for p in it_paths:
            remove_field(stripped_it, p)
        it_removed[it.name] = it_paths
        owned_paths = preference_paths(stripped_it, set(it_paths))
        bare = clone(stripped_it)
        for p in owned_paths:
            remove_field(bare, p)
        owned = len(owned_paths)
        for pref in prefs + [None]:
            strip = set_by(pref.spec, bare, owned_paths) if pref is not None else []
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
    assert best.vm is not None     # an attempt that reproduces the VM has its migrated VM
    return Migration(best.vm, clone(best.it.obj), clone(best.pref.obj) if best.pref else None,
                     _changes(template, it_removed[best.it.name], best))


def _changes(template: dict, it_paths: list[Path], best: _Attempt) -> list[Change]:
    """One line per moved field: the topmost object removed whole, if all of it moved to one side."""
    owner = {p: best.it.ref for p in it_paths}
    owner.update({p: best.pref.ref for p in best.stripped} if best.pref else {})
    assert best.vm is not None
    result = best.vm["spec"]["template"]
    out: list[Change] = []
    seen: set[Path] = set()
    for p, who in owner.items():
        top = p
        while len(top) > 1:
            up = top[:-1]
            if up in KEEP or isinstance(up[-1], int) or value_at(result, up) is not MISSING:
                break
            if any(related(q, up) and len(q) > len(up) and owner[q] != who for q in owner):
                break
            top = up
        if top not in seen:
            seen.add(top)
            out.append(Change(path_text(top), who))
    return out
