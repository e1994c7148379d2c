"""A compiled preference (engine/preference/plan.py) does exactly what the block appliers do.

Every preference given in the conformance vectors, applied to every VM template of the vectors
(and to a few shapes chosen to hit each step's side effects), once through the generic appliers
(a plain dict) and once through the compiled steps (a NormalisedSpec): same spec, same metadata.
"""
from __future__ import annotations

import json
import pathlib

import pytest

from instancetype.engine.preference import apply_preference
from instancetype.engine.spec import preference_spec
from instancetype.jsonutil import clone

VECTORS = pathlib.Path(__file__).resolve().parents[1] / "conformance"
FILES = ("expand.jsonl", "expand-harvested.jsonl", "vmi.jsonl", "admit-vm.jsonl")


def _requests():
    for name in FILES:
        with open(VECTORS / name) as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)["request"]


def _preferences() -> list[dict]:
    seen, out = set(), []
    for req in _requests():
        pref = req.get("preference")
        if not isinstance(pref, dict):
            continue
        pref = pref.get("spec", pref) if "spec" in pref or "kind" in pref else pref
        key = json.dumps(pref, sort_keys=True)
        if isinstance(pref, dict) and key not in seen:
            seen.add(key)
            out.append(pref)
    return out


def _templates() -> list[tuple[dict, dict]]:
    """Every 50th distinct VM template of the vectors (of about 2,100), and a few made here."""
    seen, out = set(), []
    for req in _requests():
        template = ((req.get("vm") or {}).get("spec") or {}).get("template")
        if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
            continue
        key = json.dumps(template, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append((template["spec"], template.get("metadata") or {}))
    out = out[::50]
    out += [
        ({}, {}),
        ({"domain": {"devices": {"disks": [{"name": "a"}, {"name": "b", "cdrom": {}}, {"name": "c", "lun": {}}],
                                 "interfaces": [{"name": "default"}], "inputs": [{"name": "i"}],
                                 "sound": {"name": "s"}, "panicDevices": [{}]},
                     "features": {"hyperv": {"relaxed": {}}}, "clock": {"utc": {}}}},
         {"annotations": {"a": "b"}}),
        ({"domain": {"firmware": {"bootloader": {"bios": {}}}, "machine": {}, "cpu": {"features": [{"name": "x"}]}},
          "networks": [{"name": "default", "pod": {}}], "subdomain": "", "architecture": ""}, {}),
    ]
    return out


PREFERENCES = _preferences()
TEMPLATES = _templates()


def test_vectors_hold_preferences():
    assert len(PREFERENCES) > 500 and len(TEMPLATES) > 40


@pytest.mark.parametrize("index", range(len(PREFERENCES)))
def test_compiled_steps_match_the_appliers(index):
    plain = clone(PREFERENCES[index])
    compiled = preference_spec(clone(plain))
    for spec, meta in TEMPLATES:
        want_spec, want_meta = clone(spec), clone(meta)
        got_spec, got_meta = clone(spec), clone(meta)
        try:
            apply_preference(dict(plain), want_spec, metadata=want_meta)
        except Exception as e:  # noqa: BLE001 - the compiled steps must fail alike
            with pytest.raises(type(e)):
                apply_preference(compiled, got_spec, metadata=got_meta)
            continue
        apply_preference(compiled, got_spec, metadata=got_meta)
        assert (got_spec, got_meta) == (want_spec, want_meta)
