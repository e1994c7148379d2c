"""The generated instancetypes: counts per series, every size, every label rule (v1.7.0 + deprecated)."""
from __future__ import annotations

from collections import Counter

import pytest

from instancetype import catalog
from instancetype.api.kinds import API_VERSION, CLUSTER_INSTANCETYPE, INSTANCETYPE

P = "instancetype.kubevirt.io/"
ITS = catalog.instancetypes()
BY_NAME = {o["metadata"]["name"]: o for o in ITS}

# v1.7.0's size ladders (common-instancetypes instancetypes/<c>/1/sizes.yaml), written out by hand
# as the oracle for the generator.
LADDER = {
    "nano": (1, "512Mi"), "micro": (1, "1Gi"), "small": (1, "2Gi"), "medium": (1, "4Gi"),
    "2xmedium": (2, "4Gi"), "large": (2, "8Gi"), "xlarge": (4, "16Gi"), "2xlarge": (8, "32Gi"),
    "4xlarge": (16, "64Gi"), "8xlarge": (32, "128Gi"),
}
U_SIZES = ["nano", "micro", "small", "medium", "2xmedium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge"]
EXPECTED = {
    **{f"u1.{s}": LADDER[s] for s in U_SIZES},
    **{f"d1.{s}": LADDER[s] for s in U_SIZES},
    **{f"o1.{s}": LADDER[s] for s in U_SIZES if s != "2xmedium"},
    **{f"rt1.{s}": LADDER[s] for s in U_SIZES if s not in ("nano", "2xmedium")},
    **{f"cx1.{s}{t}": v for s, v in {"medium": (1, "2Gi"), "large": (2, "4Gi"), "xlarge": (4, "8Gi"),
                                     "2xlarge": (8, "16Gi"), "4xlarge": (16, "32Gi"),
                                     "8xlarge": (32, "64Gi")}.items() for t in ("", "1gi")},
    **{f"m1.{s}{t}": v for s, v in {"large": (2, "16Gi"), "xlarge": (4, "32Gi"), "2xlarge": (8, "64Gi"),
                                    "4xlarge": (16, "128Gi"), "8xlarge": (32, "256Gi")}.items()
       for t in ("", "1gi")},
    "n1.medium": (4, "4Gi"), "n1.large": (4, "8Gi"), "n1.xlarge": (8, "16Gi"), "n1.2xlarge": (16, "32Gi"),
    "n1.4xlarge": (32, "64Gi"), "n1.8xlarge": (64, "128Gi"),
    # deprecated families the seeds show
    "gn1.xlarge": (4, "16Gi"), "gn1.2xlarge": (8, "32Gi"), "gn1.4xlarge": (16, "64Gi"), "gn1.8xlarge": (32, "128Gi"),
    "server.micro": (1, "256Mi"), "server.tiny": (1, "1.5Gi"), "server.small": (1, "2Gi"),
    "server.medium": (1, "4Gi"), "server.large": (2, "8Gi"),
    "highperformance.small": (1, "2Gi"), "highperformance.medium": (1, "4Gi"), "highperformance.large": (2, "8Gi"),
}
DEPRECATED_SERIES = {"gn1", "server", "highperformance"}
CLASS = {"u1": "general.purpose", "o1": "overcommitted", "cx1": "compute.exclusive", "m1": "memory.intensive",
         "n1": "network", "rt1": "realtime", "d1": "dedicated.vcpu", "gn1": "gpu.nvidia",
         "server": "server", "highperformance": "highperformance"}


def series(name: str) -> str:
    return name.split(".", 1)[0]


def test_counts_per_series():
    counts = Counter(series(n) for n in BY_NAME)
    assert counts == {"u1": 10, "o1": 9, "d1": 10, "rt1": 8, "cx1": 12, "m1": 10, "n1": 6,
                      "gn1": 4, "server": 5, "highperformance": 3}
    assert len(catalog.instancetypes(deprecated=False)) == 65      # exactly v1.7.0


def test_every_size_vcpus_and_memory():
    assert set(BY_NAME) == set(EXPECTED)
    for name, (cpu, mem) in EXPECTED.items():
        spec = BY_NAME[name]["spec"]
        assert (spec["cpu"]["guest"], spec["memory"]["guest"]) == (cpu, mem), name


def test_sorted_by_name_and_kinds():
    names = [o["metadata"]["name"] for o in ITS]
    assert names == sorted(names)
    assert {o["kind"] for o in ITS} == {CLUSTER_INSTANCETYPE}
    assert {o["apiVersion"] for o in ITS} == {API_VERSION}
    namespaced = catalog.instancetypes(namespaced=True)
    assert {o["kind"] for o in namespaced} == {INSTANCETYPE}
    for a, b in zip(ITS, namespaced):
        assert {**a, "kind": None} == {**b, "kind": None}
        assert "namespace" not in b["metadata"]


def _has(spec: dict, *path: str) -> bool:
    for p in path:
        if not isinstance(spec, dict) or p not in spec:
            return False
        spec = spec[p]
    return True


BOOL_LABELS = {"dedicatedCPUPlacement": ("cpu", "dedicatedCPUPlacement"),
               "isolateEmulatorThread": ("cpu", "isolateEmulatorThread"),
               "numa": ("cpu", "numa"), "realtime": ("cpu", "realtime"), "gpus": ("gpus",)}


@pytest.mark.parametrize("obj", ITS, ids=lambda o: o["metadata"]["name"])
def test_label_rules(obj):
    name, labels, spec = obj["metadata"]["name"], obj["metadata"]["labels"], obj["spec"]
    # bool feature labels: present (as "true") exactly when the spec sets the field
    for label, path in BOOL_LABELS.items():
        assert (labels.get(P + label) == "true") == _has(spec, *path), (name, label)
        assert labels.get(P + label) in (None, "true")
    # hugepages label = page size, exactly when set (v1.7.0, not v0.3.0's "true")
    assert labels.get(P + "hugepages") == (spec["memory"].get("hugepages") or {}).get("pageSize")
    assert labels[P + "cpu"] == str(spec["cpu"]["guest"])
    assert labels[P + "memory"] == spec["memory"]["guest"]
    assert labels[P + "size"] == name.split(".", 1)[1]
    assert labels[P + "class"] == CLASS[series(name)]
    assert labels[P + "vendor"] == "kubevirt.io"
    assert labels[P + "icon-pf"]
    deprecated = series(name) in DEPRECATED_SERIES
    assert (labels.get(P + "deprecated") == "true") == deprecated
    assert labels.get(P + "version") == (None if series(name) in ("server", "highperformance") else "1")
    # the version label is on every object and last (as the release script appends it)
    assert list(labels)[-1] == P + "common-instancetypes-version"
    assert labels[P + "common-instancetypes-version"] == "v1.7.0"
    assert list(labels)[:-1] == sorted(list(labels)[:-1])
    ann = obj["metadata"]["annotations"]
    assert set(ann) == {P + "description", P + "displayName"}
    assert not ann[P + "description"].endswith("\n")


def test_series_settings():
    for name, obj in BY_NAME.items():
        s, spec = series(name), obj["spec"]
        cpu, mem = spec["cpu"], spec["memory"]
        dedicated = s in ("cx1", "n1", "rt1", "d1", "highperformance")
        assert bool(cpu.get("dedicatedCPUPlacement")) == dedicated, name
        assert bool(cpu.get("isolateEmulatorThread")) == dedicated, name
        assert ("numa" in cpu) == (s in ("cx1", "rt1")), name
        assert ("realtime" in cpu) == (s == "rt1"), name
        assert ("maxSockets" in cpu) == (s == "cx1"), name
        if s == "cx1":
            assert cpu["maxSockets"] == cpu["guest"]
        assert spec.get("ioThreadsPolicy") == {"cx1": "auto", "d1": "auto", "highperformance": "shared"}.get(s)
        assert mem.get("overcommitPercent") == (50 if s == "o1" else None)
        page = (mem.get("hugepages") or {}).get("pageSize")
        if s in ("cx1", "m1"):
            assert page == ("1Gi" if name.endswith("1gi") else "2Mi"), name
        else:
            assert page == ("1Gi" if s in ("n1", "rt1") else None), name
        crio = {"cpu-load-balancing.crio.io": "disable", "cpu-quota.crio.io": "disable",
                "irq-load-balancing.crio.io": "disable"}
        assert spec.get("annotations") == (crio if s in ("n1", "rt1") else None), name
        assert spec.get("gpus") == ([{"deviceName": "nvidia.com/A400", "name": "gpu1"}] if s == "gn1" else None)


def test_seed_selectors_with_v170_values():
    """Seed 000's selectors, answered with v1.7.0's labels (hugepages is a page size, not "true")."""
    def select(**labels):
        return sorted(n for n, o in BY_NAME.items()
                      if all(o["metadata"]["labels"].get(P + k) == v for k, v in labels.items()))

    assert select(deprecated="true") == sorted(
        ["highperformance.large", "highperformance.medium", "highperformance.small", "server.large",
         "server.medium", "server.micro", "server.small", "server.tiny",
         "gn1.2xlarge", "gn1.4xlarge", "gn1.8xlarge", "gn1.xlarge"])
    assert select(hugepages="true") == []
    assert select(cpu="4", hugepages="2Mi") == ["cx1.xlarge", "m1.xlarge"]
    assert select(cpu="4") == ["cx1.xlarge", "cx1.xlarge1gi", "d1.xlarge", "gn1.xlarge", "m1.xlarge",
                               "m1.xlarge1gi", "n1.large", "n1.medium", "o1.xlarge", "rt1.xlarge", "u1.xlarge"]


def test_returns_fresh_copies():
    a = catalog.instancetypes()
    a[0]["metadata"]["labels"].clear()
    assert catalog.instancetypes()[0]["metadata"]["labels"]
