"""CPU, memory and hugepages (KubeVirt vmi-create-admitter.go CPU and memory rules, vms-admitter.go
validateLiveUpdateFeatures with pkg/liveupdate/memory)."""
from __future__ import annotations

import pytest
from vmv_helpers import causes, clean_vm, tspec

T = "spec.template.spec"
GMP = f"{T}.domain.cpu.numa.guestMappingPassthrough"


def _domain(vm):
    return tspec(vm)["domain"]


@pytest.mark.parametrize("edit, expected", [
    (lambda vm: _domain(vm).update(cpu={"numa": {"guestMappingPassthrough": {}}}), [
        ("FieldValueInvalid", f"{T}.domain.cpu.dedicatedCpuPlacement must be set to true when NUMA topology strategy "
         f"is set in {GMP}", GMP),
        ("FieldValueInvalid", f"{T}.domain.memory.hugepages must be requested when NUMA topology strategy is set in "
         f"{GMP}", GMP)]),
    (lambda vm: _domain(vm).update(cpu={"isolateEmulatorThread": True}), [
        ("FieldValueInvalid", "IsolateEmulatorThread should be only set in combination with DedicatedCPUPlacement",
         f"{T}.domain.cpu.isolateEmulatorThread")]),
    (lambda vm: _domain(vm).update(cpu={"threads": 4, "dedicatedCpuPlacement": True}), [
        ("FieldValueInvalid", f"Not more than two threads must be provided at {T}.domain.cpu.threads (got 4) when "
         "DedicatedCPUPlacement is true", f"{T}.domain.cpu.dedicatedCpuPlacement")]),
    (lambda vm: _domain(vm).update(cpu={"features": [{"name": "pcid", "policy": "bogus"}]}), [
        ("FieldValueNotSupported", "CPU feature pcid uses policy bogus that is not supported.",
         f"{T}.domain.cpu.features[0].policy")]),
    # validateCPUHotplug and, with the default LiveUpdate rollout, validateLiveUpdateCPU: twice
    (lambda vm: _domain(vm).update(cpu={"sockets": 4, "maxSockets": 2}), [
        ("FieldValueInvalid", "Number of sockets in CPU topology is greater than the maximum sockets allowed",
         f"{T}.domain.cpu.sockets")] * 2),
    (lambda vm: _domain(vm).update(cpu={"realtime": {}}), [
        ("FieldValueRequired", f"{T}.domain.cpu.dedicatedCpuPlacement must be set to true when {T}.domain.cpu.realtime "
         "is used", f"{T}.domain.cpu.dedicatedCpuPlacement"),
        ("FieldValueRequired", f"{GMP} must be defined when {T}.domain.cpu.realtime is used", GMP)]),
    (lambda vm: _domain(vm).update(resources={"requests": {"cpu": "-1"}}), [
        ("FieldValueInvalid", f"{T}.domain.resources.requests.cpu '-1': must be greater than or equal to 0.",
         f"{T}.domain.resources.requests.cpu")]),
])
def test_cpu_rules(edit, expected):
    vm = clean_vm()
    edit(vm)
    assert causes(vm) == expected


def test_memory_request_under_1M():
    vm = clean_vm()
    _domain(vm).update(memory={}, resources={"requests": {"memory": "512Ki"}})
    at = f"{T}.domain.resources.requests.memory"
    assert causes(vm) == [("FieldValueInvalid", f"{at} '512Ki': must be greater than or equal to 1M.", at)]


def test_hugepages_multiple_reads_the_guest_when_there_is_no_request():
    vm = clean_vm()
    _domain(vm)["memory"] = {"guest": "1500Mi", "hugepages": {"pageSize": "1Gi"}}
    at = f"{T}.domain.resources.requests.memory"
    assert causes(vm) == [("FieldValueInvalid", f"{at} '0' is not a multiple of the page size "
                           f"{T}.domain.memory.hugepages.pageSize '1Gi'", at)]


@pytest.mark.parametrize("memory, message", [
    ({"guest": "700Mi", "maxGuest": "16Gi"}, "Memory hotplug is only available for VMs with at least 1Gi of guest memory"),
    ({"guest": "2Gi", "maxGuest": "3001Mi"}, "MaxGuest must be 2Mi aligned"),
    ({"guest": "4Gi", "maxGuest": "2Gi"}, "Guest memory is greater than the configured maxGuest memory"),
    ({"maxGuest": "4Gi"}, "Guest memory must be configured when memory hotplug is enabled"),
])
def test_memory_hotplug_limits(memory, message):
    vm = clean_vm()
    _domain(vm)["memory"] = memory
    assert causes(vm) == [("FieldValueInvalid", message, f"{T}.domain.memory.guest")]


def test_memory_hotplug_is_not_checked_with_the_stage_rollout():
    vm = clean_vm()
    _domain(vm)["memory"] = {"guest": "700Mi", "maxGuest": "16Gi"}
    assert causes(vm, config={"vmRolloutStrategy": "Stage"}) == []
