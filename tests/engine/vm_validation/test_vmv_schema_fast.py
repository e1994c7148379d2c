"""The schema check's C path (msgspec Structs) agrees with the Python checkers it stands in for.

`check_vm_schema_shaped` takes msgspec's word only when it finds a VM conforming and Go-shaped;
everything else goes through the checkers, which say why. So the one thing that must hold is:
whatever msgspec accepts, the checkers accept (no cause, Go-shaped). Checked on every VM of the
conformance vectors, and on each of them edited one value at a time (every field replaced by
values of every JSON type, nulls, integers written as floats, null list items, unknown keys).
"""
from __future__ import annotations

import pytest
from tests.vectors import conformance_vms

from instancetype.engine.vm_validation.schema import _conforms, check_vm_schema_shaped, checked_in_python
from instancetype.jsonutil import clone


def _accepted(vm) -> bool:
    return checked_in_python(vm) == ([], True)


def test_every_vector_vm_agrees():
    vms = conformance_vms()
    assert len(vms) > 3000
    fast = 0
    for vm in vms:
        if _conforms(vm):
            fast += 1
            assert _accepted(vm), vm
        else:
            assert not _accepted(vm), vm      # (not needed for the answer: msgspec is only slower)
    assert fast > 3000


# Replacements for any value: each JSON type, and what only the schema's rules tell apart.
_VALUES = (None, "", "x", 0, -1, 3.0, 2.5, True, [], [None], [{}], {}, {"unknown": 1}, "Always", "Exists")


def _edits(v, at=()):
    """(path, container) of every value below `v`."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield at + (k,), x
            yield from _edits(x, at + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield at + (i,), x
            yield from _edits(x, at + (i,))


def _set(vm, path, value):
    node = vm
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


@pytest.mark.parametrize("index", range(0, 3000, 375))
def test_edited_vms_agree(index):
    base = conformance_vms()[index]
    checked = 0
    for path, old in list(_edits(base)):
        for value in _VALUES:
            vm = clone(base)
            _set(vm, path, value)
            if _conforms(vm):
                assert _accepted(vm), (path, value)
            checked += 1
        if isinstance(old, dict):
            vm = clone(base)
            _set(vm, path, {**old, "notAField": "x"})
            assert _conforms(vm) == _accepted(vm), path
    assert checked > 0


def test_the_answer_is_the_checkers_answer():
    vm = clone(conformance_vms()[0])
    assert check_vm_schema_shaped(vm) == ([], True)
    vm["spec"]["template"]["spec"]["domain"]["devices"]["disks"] = [None]
    assert check_vm_schema_shaped(vm) == checked_in_python(vm) == ([], False)
    vm["spec"]["runstrategy"] = "Always"
    causes, shaped = check_vm_schema_shaped(vm)
    assert [c.message for c in causes] == ["spec.runstrategy in body is a forbidden property"]
