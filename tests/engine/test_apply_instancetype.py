"""The core applier with an instancetype (pkg/instancetype/apply/vmi.go ApplyToVMI; cpu_test.go,
memory_test.go vectors; root spec.template.spec)."""
from __future__ import annotations

import pytest

from instancetype.engine.apply import apply_to_spec, conflict_message

R = "spec.template.spec"


def run(it, vm=None, pref=None, meta=None, root=R):
    spec = vm if vm is not None else {"domain": {}}
    metadata = meta if meta is not None else {}
    conflicts = apply_to_spec(spec, metadata, it, pref, root=root)
    return spec, metadata, conflicts


def test_cpu_default_sockets_full():
    it = {"cpu": {"guest": 2, "model": "host-passthrough", "dedicatedCPUPlacement": True,
                  "isolateEmulatorThread": True, "numa": {"guestMappingPassthrough": {}},
                  "realtime": {"mask": "0-3,^1"}, "maxSockets": 6}, "memory": {"guest": "128Mi"}}
    spec, _, c = run(it, pref={"cpu": {}})
    assert c == []
    assert spec["domain"]["cpu"] == {
        "sockets": 2, "cores": 1, "threads": 1, "model": "host-passthrough", "dedicatedCpuPlacement": True,
        "isolateEmulatorThread": True, "numa": {"guestMappingPassthrough": {}}, "realtime": {"mask": "0-3,^1"},
        "maxSockets": 6}
    assert spec["domain"]["memory"] == {"guest": "128Mi"}


def test_cpu_conflicts_all_collected_in_order():
    it = {"cpu": {"guest": 2}, "memory": {"guest": "1Gi"}}
    _, _, c = run(it, {"domain": {"cpu": {"cores": 4, "sockets": 1, "threads": 1}}})
    assert c == [f"{R}.domain.cpu.sockets", f"{R}.domain.cpu.cores", f"{R}.domain.cpu.threads"]
    _, _, c = run(it, {"domain": {"resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}})
    assert c == [f"{R}.domain.resources.requests.cpu", f"{R}.domain.resources.limits.cpu"]


def test_cpu_field_conflicts_need_instancetype_field():
    def vm():
        return {"domain": {"cpu": {"model": "x", "dedicatedCpuPlacement": True, "isolateEmulatorThread": True,
                                   "numa": {}, "realtime": {}}}}
    it = {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}
    spec, _, c = run(it, vm())
    assert c == [] and spec["domain"]["cpu"]["model"] == "x"
    it = {"cpu": {"guest": 1, "model": "", "dedicatedCPUPlacement": False, "isolateEmulatorThread": False,
                  "numa": {}, "realtime": {}}, "memory": {"guest": "1Gi"}}
    _, _, c = run(it, vm())
    assert c == [f"{R}.domain.cpu.{k}" for k in
                 ("model", "dedicatedCPUPlacement", "isolateEmulatorThread", "numa", "realtime")]


def test_max_sockets_overwrites_silently():
    spec, _, c = run({"cpu": {"guest": 2, "maxSockets": 8}, "memory": {"guest": "1Gi"}},
                     {"domain": {"cpu": {"maxSockets": 3}}})
    assert c == [] and spec["domain"]["cpu"]["maxSockets"] == 8


def test_memory_apply_and_first_conflict_only():
    it = {"cpu": {"guest": 1}, "memory": {"guest": "512M", "hugepages": {"pageSize": "1Gi"}, "maxGuest": "2G"}}
    spec, _, c = run(it)
    assert c == [] and spec["domain"]["memory"] == {"guest": "512M", "hugepages": {"pageSize": "1Gi"},
                                                   "maxGuest": "2G"}
    vm = {"domain": {"memory": {"guest": "512M", "hugepages": {"pageSize": "1Gi"}},
                     "resources": {"requests": {"memory": "1Gi"}}}}
    _, _, c = run(it, vm)
    assert c == [f"{R}.domain.memory.guest"]


@pytest.mark.parametrize("vm,path", [
    ({"domain": {"memory": {"hugepages": {"pageSize": "1Gi"}}}}, "domain.memory.hugepages"),
    ({"domain": {"memory": {"maxGuest": "2G"}}}, "domain.memory.maxGuest"),
    ({"domain": {"resources": {"requests": {"memory": "128Mi"}}}}, "domain.resources.requests.memory"),
    ({"domain": {"resources": {"limits": {"memory": "128Mi"}}}}, "domain.resources.limits.memory"),
])
def test_memory_conflicts(vm, path):
    it = {"cpu": {"guest": 1}, "memory": {"guest": "512M", "hugepages": {"pageSize": "1Gi"}, "maxGuest": "2G"}}
    assert run(it, vm)[2] == [f"{R}.{path}"]


def test_hugepages_from_vm_kept():
    it = {"cpu": {"guest": 1}, "memory": {"guest": "512M", "maxGuest": "2G"}}
    spec, _, c = run(it, {"domain": {"memory": {"hugepages": {"pageSize": "1Gi"}}}})
    assert c == [] and spec["domain"]["memory"]["hugepages"] == {"pageSize": "1Gi"}


def test_overcommit_and_missing_memory():
    spec, _, _ = run({"cpu": {"guest": 1}, "memory": {"guest": "128Mi", "overcommitPercent": 15}})
    assert spec["domain"]["resources"]["requests"]["memory"] == "114085072"
    spec, _, _ = run({"cpu": {"guest": 1}})
    assert spec["domain"]["memory"]["guest"] == "0"


def test_quantities_read_canonical():
    spec, _, _ = run({"cpu": {"guest": 1}, "memory": {"guest": "1.5Gi"}})
    assert spec["domain"]["memory"]["guest"] == "1536Mi"


def test_simple_fields_and_conflicts():
    it = {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}, "nodeSelector": {"key": "value"},
          "schedulerName": "ultra", "ioThreadsPolicy": "shared", "ioThreads": {"supplementalPoolThreadCount": 4},
          "gpus": [{"name": "g", "deviceName": "vendor.com/gpu"}],
          "hostDevices": [{"name": "h", "deviceName": "vendor.com/dev"}], "launchSecurity": {"tdx": {}}}
    spec, _, c = run(it, {"domain": {"ioThreads": {"other": 1}}})
    assert c == []
    assert spec["nodeSelector"] == {"key": "value"} and spec["schedulerName"] == "ultra"
    d = spec["domain"]
    assert d["ioThreadsPolicy"] == "shared" and d["ioThreads"] == {"other": 1, "supplementalPoolThreadCount": 4}
    assert d["devices"]["gpus"] == it["gpus"] and d["devices"]["gpus"] is not it["gpus"]
    assert d["devices"]["hostDevices"] == it["hostDevices"] and d["launchSecurity"] == {"tdx": {}}
    vm = {"nodeSelector": {}, "schedulerName": "slow",
          "domain": {"ioThreadsPolicy": "auto", "ioThreads": {"supplementalPoolThreadCount": 6},
                     "launchSecurity": {"sev": {}}, "devices": {"gpus": [{"name": "x"}], "hostDevices": [{"name": "y"}]}}}
    spec, _, c = run(it, vm)
    assert c == [f"{R}.nodeSelector", f"{R}.schedulerName", f"{R}.domain.ioThreads.supplementalPoolThreadCount",
                 f"{R}.domain.ioThreadsPolicy", f"{R}.domain.launchSecurity", f"{R}.domain.devices.gpus",
                 f"{R}.domain.devices.hostDevices"]
    assert spec["domain"]["ioThreads"]["supplementalPoolThreadCount"] == 6


def test_empty_lists_do_not_count():
    it = {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}, "gpus": [], "hostDevices": [{"name": "h"}]}
    spec, _, c = run(it, {"domain": {"devices": {"gpus": [{"name": "x"}], "hostDevices": []}}})
    assert c == [] and spec["domain"]["devices"]["gpus"] == [{"name": "x"}]


def test_launch_security_precedence():
    it_ls, vm_ls, pref_ls = {"tdx": {}}, {"sev": {}}, {"sev": {"policy": {}}}
    base = {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}
    spec, _, c = run(base, pref={"preferredLaunchSecurity": pref_ls})
    assert c == [] and spec["domain"].get("launchSecurity") == pref_ls
    spec, _, c = run({**base, "launchSecurity": it_ls}, pref={"preferredLaunchSecurity": pref_ls})
    assert spec["domain"]["launchSecurity"] == it_ls
    _, _, c = run({**base, "launchSecurity": it_ls}, {"domain": {"launchSecurity": vm_ls}})
    assert c == [f"{R}.domain.launchSecurity"]


def test_annotations():
    it = {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}, "annotations": {"annotation-1": "1", "annotation-2": "2"}}
    _, meta, c = run(it)
    assert c == [] and meta["annotations"] == {"annotation-1": "1", "annotation-2": "2"}
    _, meta, c = run(it, meta={"annotations": {"annotation-1": "1", "annotation-2": "2"}})
    assert c == []
    _, meta, c = run(it, meta={"annotations": {"annotation-1": "conflict"}})
    assert c == ["annotations.annotation-1"] and meta["annotations"]["annotation-1"] == "conflict"


def test_conflict_stops_preference_and_message():
    it = {"cpu": {"guest": 2}, "memory": {"guest": "128Mi"}}
    spec, _, c = run(it, {"domain": {"cpu": {"sockets": 1}, "memory": {"guest": "1Gi"}}},
                     pref={"machine": {"preferredMachineType": "pc"}})
    assert c == [f"{R}.domain.cpu.sockets", f"{R}.domain.memory.guest"]
    assert "machine" not in spec["domain"]
    assert conflict_message(c) == ("VM field(s) spec.template.spec.domain.cpu.sockets, "
                                   "spec.template.spec.domain.memory.guest conflicts with selected instance type")


def test_root_spec_for_vmi():
    _, _, c = run({"cpu": {"guest": 2}, "memory": {"guest": "1Gi"}}, {"domain": {"cpu": {"sockets": 4}}}, root="spec")
    assert c == ["spec.domain.cpu.sockets"]


def test_nothing_to_apply():
    spec = {"domain": {}}
    assert apply_to_spec(spec, {}, None, None, root=R) == [] and spec == {"domain": {}}


def test_instancetype_input_not_mutated_or_aliased():
    it = {"cpu": {"guest": 2, "numa": {"guestMappingPassthrough": {}}}, "memory": {"guest": "1Gi"},
          "nodeSelector": {"a": "b"}}
    snapshot = repr(it)
    spec, _, _ = run(it)
    spec["nodeSelector"]["c"] = "d"
    spec["domain"]["cpu"]["numa"]["x"] = 1
    assert repr(it) == snapshot
    spec2, _, _ = run(it)
    assert spec2["nodeSelector"] == {"a": "b"} and spec2["domain"]["cpu"]["numa"] == {"guestMappingPassthrough": {}}


def test_each_optional_handler_is_resolved_once():
    """`handlers_for` imports an optional field's module and finds its handler the first time an
    instancetype has that field; later calls reuse the same function (the table it fills)."""
    from instancetype.engine import instancetype as handlers

    every = {key: {"x": "y"} for _, key in handlers._TABLE if key is not None}
    first = handlers.handlers_for(every)
    assert len(first) == len(handlers._TABLE)
    assert list(first) == handlers._RESOLVED            # every row resolved, in KubeVirt's order
    again = handlers.handlers_for(every)
    assert all(a is b for a, b in zip(first, again, strict=True))
    assert handlers.handlers_for({}) == (first[2], first[3])     # cpu and memory always run
