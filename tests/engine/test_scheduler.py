"""The virt-launcher pod's requests as virt-controller renders them (renderresources.go,
GetMemoryOverhead) and kube-scheduler's filters and FitError text over nodes."""
from __future__ import annotations

import copy

from instancetype.engine import launcher_pod as lp
from instancetype.engine.scheduler import Pod, Usage, schedule

MI = 1 << 20
NODE_CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110", "hugepages-2Mi": "2Gi",
                 lp.KVM: "1k", lp.TUN: "1k", lp.VHOST_NET: "1k"}


def _vmi(domain: dict, **spec) -> dict:
    base = {"cpu": {"sockets": 1, "cores": 1, "threads": 1}, "machine": {"type": "q35"},
            "devices": {"interfaces": [{"name": "default", "bridge": {}}]}}
    return {"metadata": {"name": "v", "namespace": "ns"},
            "spec": {"architecture": "amd64", "domain": {**base, **domain}, **spec}}


def _node(name: str, capacity: dict | None = None, labels: dict | None = None, **spec) -> dict:
    return {"metadata": {"name": name, "labels": {"kubevirt.io/schedulable": "true", "kubernetes.io/arch": "amd64",
                                                  "machine-type.node.kubevirt.io/q35": "true", **(labels or {})}},
            "spec": spec, "status": {"allocatable": dict(capacity or NODE_CAPACITY)}}


def _pod(vmi: dict) -> Pod:
    return Pod(lp.pod_requests(vmi), lp.pod_node_selector(vmi), lp.required_node_affinity(vmi), lp.pod_tolerations(vmi))


def _message(n: int, filters: str, preemption: str) -> str:
    return (f"0/{n} nodes are available: {filters}. no new claims to deallocate, "
            f"preemption: 0/{n} nodes are available: {preemption}.")


def _merged(a: dict, b: dict) -> dict:
    """`a` with `b` merged into it, nested maps merged (a VMI with one field changed)."""
    out = dict(a)
    for k, v in b.items():
        out[k] = _merged(a[k], v) if isinstance(v, dict) and isinstance(a.get(k), dict) else v
    return out


def test_requests_as_virt_controller_renders_them():
    vmi = _vmi({"cpu": {"sockets": 2, "cores": 1, "threads": 1}, "memory": {"guest": "1Gi"}})
    # 2 vCPUs at cpuAllocationRatio 10; the guest plus 220Mi static, 8Mi per vCPU, 8Mi IOThread, 32Mi video
    assert lp.pod_requests(vmi) == {"cpu": 200, "memory": (1024 + 220 + 16 + 8 + 32) * MI,
                                    lp.KVM: 1, lp.TUN: 1, lp.VHOST_NET: 1}
    assert lp.pod_requests(vmi, {"developerConfiguration": {"cpuAllocationRatio": 4}})["cpu"] == 500
    dedicated = _vmi({"cpu": {"cores": 3, "dedicatedCPUPlacement": True}, "memory": {"guest": "1Gi"}})
    assert lp.pod_requests(dedicated)["cpu"] == 3000
    assert lp.pod_node_selector(dedicated)["cpumanager"] == "true"
    hugepages = _vmi({"memory": {"guest": "1Gi", "hugepages": {"pageSize": "2Mi"}}})
    req = lp.pod_requests(hugepages)
    assert req["hugepages-2Mi"] == 1024 * MI and req["memory"] == (220 + 8 + 8 + 32) * MI
    gpus = _vmi({"memory": {"guest": "1Gi"}, "devices": {"gpus": [{"name": "g1", "deviceName": "nvidia.com/GP102"}],
                                                       "hostDevices": [{"name": "h", "deviceName": "intel.com/qat"}]}})
    req = lp.pod_requests(gpus)
    assert (req["nvidia.com/GP102"], req["intel.com/qat"]) == (1, 1)
    assert req["memory"] == (1024 + 220 + 8 + 8 + 32 + 1024) * MI       # VFIO: 1Gi more


def test_filters_and_messages():
    vmi = _vmi({"memory": {"guest": "1Gi"}})
    assert schedule(_pod(vmi), [_node("a")], {}) == ("a", "")
    assert schedule(_pod(vmi), [], {}) == (None, "no nodes available to schedule pods")
    tainted = _node("t", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}])
    cordoned = _node("c", unschedulable=True)
    full = _node("f")
    usage = {"f": Usage({"memory": 7 * 1024 * MI}, 1)}
    not_helpful = "Preemption is not helpful for scheduling"
    assert schedule(_pod(vmi), [tainted, cordoned, full], usage) == (None, _message(
        3, "1 Insufficient memory, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable",
        f"1 No preemption victims found for incoming pod, 2 {not_helpful}"))
    tolerating = _vmi({"memory": {"guest": "1Gi"}}, tolerations=[{"key": "dedicated", "operator": "Exists"}])
    assert schedule(_pod(tolerating), [tainted, cordoned, full], usage)[0] == "t"
    gpu = _vmi({"memory": {"guest": "1Gi"}, "devices": {"gpus": [{"name": "g", "deviceName": "nvidia.com/A100"}]}})
    assert schedule(_pod(gpu), [_node("a")], {})[1] == _message(1, "1 Insufficient nvidia.com/A100", f"1 {not_helpful}")
    with_gpu = _node("g", {**NODE_CAPACITY, "nvidia.com/A100": "1"})
    assert schedule(_pod(gpu), [_node("a"), with_gpu], {})[0] == "g"
    assert schedule(_pod(gpu), [with_gpu], {"g": Usage({"nvidia.com/A100": 1}, 1)})[1] == _message(
        1, "1 Insufficient nvidia.com/A100", "1 No preemption victims found for incoming pod")


def test_node_affinity_and_least_allocated():
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1", "z2"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["named"]}]}]}}}
    vmi = _vmi({"memory": {"guest": "1Gi"}}, affinity=affinity)
    nodes = [_node("a", labels={"zone": "z3"}), _node("b", labels={"zone": "z1"}), _node("named")]
    busy = {"b": Usage({"memory": 4 * 1024 * MI, "cpu": 2000}, 2)}
    assert schedule(_pod(vmi), nodes, busy)[0] == "named"        # the least allocated of b and named
    assert schedule(_pod(vmi), nodes[:1], {})[1] == _message(
        1, "1 node(s) didn't match Pod's node affinity/selector", "1 Preemption is not helpful for scheduling")
    model = _vmi({"cpu": {"model": "Haswell"}, "memory": {"guest": "1Gi"}})
    assert lp.pod_node_selector(model)["cpu-model.node.kubevirt.io/Haswell"] == "true"
    assert schedule(_pod(model), [_node("a")], {})[0] is None


def test_requests_kept_by_content_answer_as_computed():
    """launcher_pod keeps requests by the content of the fields they are computed from: each
    field read changes the answer as it would uncached, a name or firmware uuid does not, and a
    caller changing its answer changes no later one."""
    base = {"metadata": {"name": "a"}, "spec": {"domain": {
        "firmware": {"uuid": "1"}, "cpu": {"sockets": 2}, "memory": {"guest": "1Gi"},
        "devices": {"interfaces": [{"name": "default", "masquerade": {}}]}}}}
    variants = [
        ({"spec": {"domain": {"resources": {"requests": {"cpu": "3", "memory": "2Gi"}}}}}, None),
        ({"spec": {"domain": {"cpu": {"sockets": 4, "dedicatedCPUPlacement": True}}}}, None),
        ({"spec": {"domain": {"memory": {"guest": "3Gi", "hugepages": {"pageSize": "2Mi"}}}}}, None),
        ({"spec": {"domain": {"devices": {"gpus": [{"name": "g", "deviceName": "nvidia/x"}]}}}}, None),
        ({"spec": {"domain": {"ioThreads": {"supplementalPoolThreadCount": 6}}}}, None),
        ({"spec": {"architecture": "arm64"}}, None),
        ({"spec": {"livenessProbe": {"exec": {"command": ["true"]}}}}, None),
        ({"spec": {"readinessProbe": {"exec": {"command": ["true"]}}}}, None),
        ({}, {"developerConfiguration": {"memoryOvercommit": 150, "useEmulation": True}}),
        ({"metadata": {"name": "b"}, "spec": {"domain": {"firmware": {"uuid": "2"}}}}, None),
    ]

    for _ in range(2):
        for change, config in variants:
            vmi = _merged(base, change)
            got = lp.pod_requests(vmi, config)
            assert got == lp._pod_requests(vmi, config)
            got["cpu"] = -1
    assert lp.pod_requests(_merged(base, variants[-1][0])) == lp.pod_requests(base)


def test_pods_kept_by_content_answer_as_rendered():
    """node_usage keeps each VMI's pod by the content of the fields it is rendered from, and
    renders it from those fields alone (`launcher_pod.pod_inputs`): every field the requests,
    the node selector, the node affinity and the tolerations read changes the pod as it would
    uncached; a VMI changed after the call changes no pod kept."""
    from instancetype.controller.node_usage import pod_of

    base = _vmi({"memory": {"guest": "1Gi"}, "firmware": {"uuid": "1"}})
    variants = [
        ({"spec": {"domain": {"resources": {"requests": {"cpu": "3", "memory": "2Gi"}}}}}, None),
        ({"spec": {"domain": {"cpu": {"model": "Haswell", "features": [{"name": "vmx"}]}}}}, None),
        ({"spec": {"domain": {"cpu": {"cores": 2, "dedicatedCPUPlacement": True}}}}, None),
        ({"spec": {"domain": {"memory": {"guest": "3Gi", "hugepages": {"pageSize": "2Mi"}}}}}, None),
        ({"spec": {"domain": {"devices": {"gpus": [{"name": "g", "deviceName": "nvidia/x"}]}}}}, None),
        ({"spec": {"domain": {"ioThreads": {"supplementalPoolThreadCount": 6}}}}, None),
        ({"spec": {"domain": {"machine": {"type": "pc-q35-rhel9"}}}}, None),
        ({"status": {"machine": {"type": "pc-q35-9.2"}}}, None),
        ({"spec": {"architecture": "arm64"}}, None),
        ({"spec": {"livenessProbe": {"exec": {"command": ["true"]}}}}, None),
        ({"spec": {"nodeSelector": {"disk": "ssd"}}}, None),
        ({"spec": {"tolerations": [{"key": "gpu", "operator": "Exists"}]}}, None),
        ({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}}},
         None),
        ({}, {"developerConfiguration": {"nodeSelectors": {"rack": "1"}, "useEmulation": True}}),
        ({"metadata": {"name": "other"}, "spec": {"domain": {"firmware": {"uuid": "2"}}}}, None),
    ]

    for _ in range(2):
        for change, config in variants:
            vmi = _merged(base, change)
            expected = Pod(lp.pod_requests(vmi, config), lp.pod_node_selector(vmi, config),
                           lp.required_node_affinity(vmi), lp.pod_tolerations(vmi))
            assert pod_of(vmi, config) == expected
    vmi = copy.deepcopy(_merged(base, variants[11][0]))
    pod = pod_of(vmi, None)
    vmi["spec"]["tolerations"][0]["key"] = "changed"
    assert pod_of(copy.deepcopy(_merged(base, variants[11][0])), None) == pod and pod.tolerations[0]["key"] == "gpu"
