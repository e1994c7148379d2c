"""load_vm's C path (msgspec Structs from the same shape table) agrees with the copier it stands
in for: whatever msgspec finds well formed, the copier copies without an error into exactly the
plain copy the C path returns. Checked on every VM of the conformance vectors and on each of them
edited one value at a time (every field replaced by values of every JSON type, nulls, integers
written as floats, null list items, out-of-range CPU counts)."""
from __future__ import annotations

import pytest
from tests.vectors import conformance_vms

from instancetype.engine.vm_decode import _copy_vm, _well_formed, load_vm
from instancetype.errors import DecodeError
from instancetype.jsonutil import clone


def _copier(vm):
    try:
        return _copy_vm(vm)
    except DecodeError:
        return "refused"


def test_every_vector_vm_agrees():
    fast = 0
    for vm in conformance_vms():
        if _well_formed(vm):
            fast += 1
            assert _copier(vm) == clone(vm) == load_vm(vm)
    assert fast > 3000


_VALUES = (None, "", "x", 0, -1, 2**32, 3.0, 2.5, True, [], [None], [{}], ["x"], {}, {"unknown": 1})


def _paths(v, at=()):
    if isinstance(v, dict):
        for k, x in v.items():
            yield at + (k,)
            yield from _paths(x, at + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield at + (i,)
            yield from _paths(x, at + (i,))


@pytest.mark.parametrize("index", range(0, 3000, 375))
def test_edited_vms_agree(index):
    base = conformance_vms()[index]
    for path in list(_paths(base)):
        for value in _VALUES:
            vm = clone(base)
            node = vm
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
            if _well_formed(vm):
                assert _copier(vm) == clone(vm), (path, value)


def test_refused_shapes_name_the_field():
    vm = clone(conformance_vms()[0])
    vm["spec"]["template"]["spec"]["domain"]["cpu"] = {"sockets": -1}
    with pytest.raises(DecodeError, match="VirtualMachine.spec.template.spec.domain.cpu.sockets of type uint32"):
        load_vm(vm)
    vm["spec"]["template"]["spec"]["domain"]["cpu"] = {"sockets": 2}
    vm["spec"]["template"]["spec"]["volumes"] = [None]
    assert load_vm(vm)["spec"]["template"]["spec"]["volumes"] == [{}]     # Go's zero Volume


def test_warm_up_then_threads_share_the_types():
    """msgspec fills a type's information on first use; two threads doing that at once crashed
    the controller and serve (SIGSEGV). The drivers call warm_up() before their threads start;
    after it, threads load VMs together and agree."""
    import threading

    from instancetype.engine.vm_decode import warm_up

    warm_up()
    warm_up()           # idempotent
    vm = clone(conformance_vms()[0])
    results: list = []

    def load() -> None:
        for _ in range(50):
            results.append(load_vm(vm) == load_vm(vm))

    threads = [threading.Thread(target=load) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == [True] * 400
