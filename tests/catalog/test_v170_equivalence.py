"""Every v1.7.0 instancetype rebuilt from a compact oracle and compared whole; bundle-level facts.

The oracle was checked object by object against the bundles KubeVirt vendors
(kubevirt/kubevirt pkg/virt-operator/resource/generate/components/data/common-instancetypes/,
every object labelled common-instancetypes-version v1.7.0): 65/65 instancetypes and 54/54
preferences equal as parsed data, cluster and namespaced. It is written independently of
`catalog/series.py`: per series its metadata and spec shape, per size its vCPUs and memory.
Descriptions are pinned by length and SHA-256 (of the exact annotation string) rather than copied.
"""
from __future__ import annotations

import hashlib

import pytest

from instancetype import catalog
from instancetype.api.kinds import API_VERSION, CLUSTER_INSTANCETYPE, INSTANCETYPE
from instancetype.cli.catalog import bundle_text

P = "instancetype.kubevirt.io/"
CRIO = {"cpu-load-balancing.crio.io": "disable", "cpu-quota.crio.io": "disable",
        "irq-load-balancing.crio.io": "disable"}

# series: (class, displayName, icon-pf, (description length, sha256 prefix), sizes "size:vcpus:memory ...")
# `twins` series (cx1, m1) also ship `<size>1gi` with 1Gi hugepages beside each 2Mi size.
SERIES = {
    "cx1": ("compute.exclusive", "Compute Exclusive", "pficon-registry", (825, "9a2b55a2f696b2bc"),
            "medium:1:2Gi large:2:4Gi xlarge:4:8Gi 2xlarge:8:16Gi 4xlarge:16:32Gi 8xlarge:32:64Gi"),
    "d1": ("dedicated.vcpu", "Dedicated vCPU", "pficon-server-group", (358, "8d3e3672c9b763e8"),
           "nano:1:512Mi micro:1:1Gi small:1:2Gi medium:1:4Gi 2xmedium:2:4Gi large:2:8Gi xlarge:4:16Gi "
           "2xlarge:8:32Gi 4xlarge:16:64Gi 8xlarge:32:128Gi"),
    "m1": ("memory.intensive", "Memory Intensive", "fa-memory", (104, "f15abb2b510a13ac"),
           "large:2:16Gi xlarge:4:32Gi 2xlarge:8:64Gi 4xlarge:16:128Gi 8xlarge:32:256Gi"),
    "n1": ("network", "Network", "pficon-network", (288, "dcca70175ed460c9"),
           "medium:4:4Gi large:4:8Gi xlarge:8:16Gi 2xlarge:16:32Gi 4xlarge:32:64Gi 8xlarge:64:128Gi"),
    "o1": ("overcommitted", "Overcommitted", "pficon-virtual-machine", (145, "cae3638b7b4ad8aa"),
           "nano:1:512Mi micro:1:1Gi small:1:2Gi medium:1:4Gi large:2:8Gi xlarge:4:16Gi "
           "2xlarge:8:32Gi 4xlarge:16:64Gi 8xlarge:32:128Gi"),
    "rt1": ("realtime", "Realtime", "pficon-server-group", (201, "4ca0cd216b388956"),
            "micro:1:1Gi small:1:2Gi medium:1:4Gi large:2:8Gi xlarge:4:16Gi "
            "2xlarge:8:32Gi 4xlarge:16:64Gi 8xlarge:32:128Gi"),
    "u1": ("general.purpose", "General Purpose", "pficon-server-group", (272, "842cc4e6fc04fda5"),
           "nano:1:512Mi micro:1:1Gi small:1:2Gi medium:1:4Gi 2xmedium:2:4Gi large:2:8Gi xlarge:4:16Gi "
           "2xlarge:8:32Gi 4xlarge:16:64Gi 8xlarge:32:128Gi"),
}
TWINS = {"cx1", "m1"}


def _spec(series: str, cpu: int, memory: str, page: str | None) -> dict:
    """The spec upstream ships for one size of a series."""
    dedicated = {"dedicatedCPUPlacement": True, "guest": cpu, "isolateEmulatorThread": True}
    numa = {"numa": {"guestMappingPassthrough": {}}}
    if series == "cx1":
        return {"cpu": {**dedicated, "maxSockets": cpu, **numa}, "ioThreadsPolicy": "auto",
                "memory": {"guest": memory, "hugepages": {"pageSize": page}}}
    if series == "d1":
        return {"cpu": dedicated, "ioThreadsPolicy": "auto", "memory": {"guest": memory}}
    if series == "m1":
        return {"cpu": {"guest": cpu}, "memory": {"guest": memory, "hugepages": {"pageSize": page}}}
    if series == "n1":
        return {"annotations": CRIO, "cpu": dedicated, "memory": {"guest": memory, "hugepages": {"pageSize": "1Gi"}}}
    if series == "o1":
        return {"cpu": {"guest": cpu}, "memory": {"guest": memory, "overcommitPercent": 50}}
    if series == "rt1":
        return {"annotations": CRIO, "cpu": {**dedicated, **numa, "realtime": {}},
                "memory": {"guest": memory, "hugepages": {"pageSize": "1Gi"}}}
    return {"cpu": {"guest": cpu}, "memory": {"guest": memory}}


def _labels(series: str, size: str, cpu: int, memory: str, spec: dict) -> dict:
    cls, _, icon, _, _ = SERIES[series]
    labels = {P + "class": cls, P + "cpu": str(cpu), P + "icon-pf": icon, P + "memory": memory,
              P + "size": size, P + "vendor": "kubevirt.io", P + "version": "1",
              P + "common-instancetypes-version": "v1.7.0"}
    if spec["cpu"].get("dedicatedCPUPlacement"):
        labels[P + "dedicatedCPUPlacement"] = "true"
        labels[P + "isolateEmulatorThread"] = "true"
    if "numa" in spec["cpu"]:
        labels[P + "numa"] = "true"
    if "realtime" in spec["cpu"]:
        labels[P + "realtime"] = "true"
    if "hugepages" in spec["memory"]:
        labels[P + "hugepages"] = spec["memory"]["hugepages"]["pageSize"]
    return labels


def expected_instancetypes() -> dict[str, dict]:
    """name -> (annotations without the description, labels, spec) for all 65 v1.7.0 instancetypes."""
    out = {}
    for series, (_, display, _, _, sizes) in SERIES.items():
        for row in sizes.split():
            size, cpu_text, memory = row.split(":")
            cpu = int(cpu_text)
            variants = [(size, "2Mi"), (size + "1gi", "1Gi")] if series in TWINS else [(size, None)]
            for name_size, page in variants:
                spec = _spec(series, cpu, memory, page)
                out[f"{series}.{name_size}"] = (display, _labels(series, name_size, cpu, memory, spec), spec)
    return out


EXPECTED = expected_instancetypes()
OURS = {o["metadata"]["name"]: o for o in catalog.instancetypes(deprecated=False)}


def test_same_names_as_v170():
    assert len(EXPECTED) == 65
    assert set(OURS) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_instancetype_equals_v170(name):
    display, labels, spec = EXPECTED[name]
    obj = OURS[name]
    assert (obj["apiVersion"], obj["kind"]) == (API_VERSION, CLUSTER_INSTANCETYPE)
    assert set(obj) == {"apiVersion", "kind", "metadata", "spec"}
    assert set(obj["metadata"]) == {"annotations", "labels", "name"}
    assert obj["spec"] == spec
    assert obj["metadata"]["labels"] == labels
    ann = obj["metadata"]["annotations"]
    assert set(ann) == {P + "description", P + "displayName"}
    assert ann[P + "displayName"] == display
    length, digest = SERIES[name.split(".")[0]][3]
    text = ann[P + "description"]
    assert (len(text), hashlib.sha256(text.encode()).hexdigest()[:16]) == (length, digest)


def test_deprecated_types_leave_v170_objects_untouched():
    everything = {o["metadata"]["name"]: o for o in catalog.instancetypes()}
    extra = set(everything) - set(OURS)
    assert {n.split(".")[0] for n in extra} == {"gn1", "server", "highperformance"}
    assert all(everything[n]["metadata"]["labels"][P + "deprecated"] == "true" for n in extra)
    assert all(everything[n] == OURS[n] for n in OURS)


def test_namespaced_bundles_differ_only_by_kind():
    for cluster, namespaced in ((catalog.instancetypes(deprecated=False),
                                 catalog.instancetypes(namespaced=True, deprecated=False)),
                                (catalog.preferences(), catalog.preferences(namespaced=True))):
        assert [{**o, "kind": None} for o in cluster] == [{**o, "kind": None} for o in namespaced]
    assert {o["kind"] for o in catalog.instancetypes(namespaced=True)} == {INSTANCETYPE}


def test_bundle_sizes_equal_the_vendored_files():
    """The vendored files are 83,289 and 72,357 characters: same objects, same order, same YAML style."""
    its = catalog.instancetypes(deprecated=False)
    prefs = catalog.preferences(deprecated=False)
    assert [o["metadata"]["name"] for o in its] == sorted(EXPECTED)
    assert len(bundle_text(its)) == 83289
    assert len(bundle_text(prefs)) == 72357
