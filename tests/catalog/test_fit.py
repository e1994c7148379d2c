"""`catalog fit` rules, on the generated catalogue."""
from __future__ import annotations

import pytest

from instancetype import catalog
from instancetype.catalog.fit import Request, fit, format_bytes, memory_bytes
from instancetype.errors import CLIError, Error

ITS = catalog.instancetypes()
GI = 2 ** 30


def names(**kw) -> list[str]:
    mem = kw.pop("memory", None)
    req = Request(memory=mem, memory_bytes=memory_bytes(mem) if mem else 0, **kw)
    return [f.type.name for f in fit(req, ITS)]


def test_plain_request_offers_only_plain_classes():
    assert names(cpu=3, memory="6Gi") == ["u1.xlarge"]
    assert names(cpu=1) == ["u1.nano"]
    assert names(cpu=2, memory="3Gi") == ["u1.2xmedium"]


def test_dedicated_cpu_offers_every_dedicated_class_with_or_without_hugepages():
    assert names(cpu=3, memory="6Gi", dedicated_cpu=True) == ["cx1.xlarge", "n1.large", "d1.xlarge", "rt1.xlarge"]


def test_hugepages_alone_offers_shared_cpu_hugepages_types():
    assert names(cpu=3, memory="6Gi", hugepages=True) == ["m1.xlarge"]
    assert names(cpu=3, memory="6Gi", hugepages=True, dedicated_cpu=True) == ["cx1.xlarge", "n1.large", "rt1.xlarge"]


def test_overcommit():
    assert names(cpu=3, memory="6Gi", overcommit=True) == ["o1.xlarge"]


def test_ranking_extra_cpu_then_memory_then_name():
    fits = fit(Request(cpu=2, memory="8Gi", memory_bytes=8 * GI, dedicated_cpu=True), ITS)
    keys = [(f.extra_cpu, f.extra_memory, f.type.name) for f in fits]
    assert keys == sorted(keys)
    assert [f.type.name for f in fits] == ["d1.large", "rt1.large", "cx1.xlarge", "n1.large"]


def test_class_names_a_class_and_allows_its_features():
    assert names(cpu=3, memory="6Gi", classes=("cx",)) == ["cx1.xlarge"]
    assert names(cpu=3, memory="6Gi", classes=("compute.exclusive",)) == ["cx1.xlarge"]
    assert names(cpu=3, memory="6Gi", classes=("cx1",)) == ["cx1.xlarge"]
    assert names(cpu=3, memory="6Gi", classes=("u", "m")) == ["u1.xlarge", "m1.xlarge"]
    assert names(cpu=3, memory="6Gi", classes=("General.Purpose",)) == ["u1.xlarge"]


def test_deprecated_only_when_named():
    assert "gn1.xlarge" not in names(cpu=4, classes=("u", "o", "cx", "m", "n", "rt", "d"))
    assert names(cpu=4, classes=("gn",)) == ["gn1.xlarge"]
    assert names(cpu=1, memory="1Gi", classes=("server",)) == ["server.tiny"]
    assert names(cpu=2, classes=("highperformance",)) == ["highperformance.large"]
    assert names(cpu=4, gpus=1, classes=("gpu.nvidia",)) == ["gn1.xlarge"]
    with pytest.raises(CLIError, match="--gpus 1"):
        names(cpu=4, gpus=1)


def test_requested_feature_must_be_present():
    with pytest.raises(CLIError):
        names(cpu=1, overcommit=True, classes=("u",))
    assert names(cpu=1, classes=("u", "o"), overcommit=True) == ["o1.nano"]


def test_reasons_say_why():
    [f] = fit(Request(cpu=3, memory="6Gi", memory_bytes=6 * GI), ITS)
    assert f.reasons[:2] == ["4 vCPUs >= 3", "16Gi memory >= 6Gi"]
    assert f.to_dict("VirtualMachineClusterInstancetype")["extraMemory"] == "10Gi"


@pytest.mark.parametrize("req, flag", [
    (Request(cpu=500), "--cpu"),
    (Request(cpu=1, memory="1Ti", memory_bytes=2 ** 40), "--memory"),
    (Request(cpu=1, classes=("nope",)), "--class"),
])
def test_nothing_fits_names_the_flag(req, flag):
    with pytest.raises(CLIError) as e:
        fit(req, ITS)
    assert flag in str(e.value)


def test_memory_parsing():
    assert memory_bytes("6Gi") == 6 * GI
    assert memory_bytes("1.5Gi") == 1536 * 2 ** 20
    assert memory_bytes("6G") == 6 * 10 ** 9
    with pytest.raises(Error):
        memory_bytes("12Qi")
    assert format_bytes(10 * GI) == "10Gi"
    assert format_bytes(1536 * 2 ** 20) == "1536Mi"
    assert format_bytes(0) == "0"


# --- ranges, memory per vCPU, exclusions, every type, the engine's check ------------------------
def test_ranges_bound_both_ends():
    assert names(cpu=2, cpu_max=2, memory="4Gi", memory_max_bytes=4 * GI) == ["u1.2xmedium"]
    assert names(cpu=2, cpu_max=4, memory="4Gi", memory_max_bytes=8 * GI, every=True) == [
        "u1.2xmedium", "u1.large"]
    with pytest.raises(CLIError, match="within the ranges"):
        names(cpu=3, cpu_max=3)


def test_memory_per_cpu_and_natural_order():
    got = names(cpu=1, memory_per_cpu=(4 * GI, 4 * GI), every=True)
    assert got == ["u1.medium", "u1.large", "u1.xlarge", "u1.2xlarge", "u1.4xlarge", "u1.8xlarge"]
    assert names(cpu=2, memory_per_cpu=(8 * GI, None), hugepages=True) == ["m1.large"]
    with pytest.raises(CLIError, match="within the ranges"):
        names(cpu=2, memory_per_cpu=(8 * GI, None))       # only the hugepages-backed m1 has 8Gi per vCPU


def test_exclude_patterns():
    assert names(cpu=3, memory="6Gi", exclude=("u1.x*",)) == ["u1.2xlarge"]
    with pytest.raises(CLIError, match="outside --exclude u1"):
        names(cpu=3, memory="6Gi", exclude=("u1.*",))


def test_a_check_refuses_with_the_nearest_reason():
    from instancetype.catalog.fit import engine_check

    fedora = next(o for o in catalog.preferences() if o["metadata"]["name"] == "fedora")
    req = Request(cpu=1, every=True, classes=("u",), check=engine_check(preference=fedora))
    assert [f.type.name for f in fit(req, ITS)][:2] == ["u1.small", "u1.medium"]     # 2Gi required
    with pytest.raises(CLIError, match=r"^no instancetype fits: u1.small: preference requires architecture amd64 "
                                       r"but arm64 is being requested \(and 7 more\)$"):
        fit(Request(cpu=1, memory="2Gi", memory_bytes=2 * GI, classes=("u",),
                    check=engine_check(preference=fedora, arch="arm64")), ITS)


def test_user_types_without_catalogue_labels():
    mine = [{"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
             "metadata": {"name": n, "namespace": "ns1"}, "spec": {"cpu": {"guest": c}, "memory": {"guest": m}}}
            for n, c, m in (("big", 8, "16Gi"), ("small", 1, "1Gi"), ("mid", 2, "4Gi"))]
    fits = fit(Request(cpu=2, every=True), mine)
    assert [(f.type.name, f.type.resource) for f in fits] == [
        ("big", "virtualmachineinstancetype/big"), ("mid", "virtualmachineinstancetype/mid")]
    assert [f.type.name for f in fit(Request(cpu=2), mine)] == ["mid", "big"]    # each its own series


def test_size_names_in_natural_order():
    from instancetype.catalog.sizes import size_rank, split_size

    sizes = ["8xlarge", "small", "2xlarge", "large", "xlarge", "2xmedium", "medium", "nano", "micro", "4xlarge"]
    assert sorted(sizes, key=size_rank) == ["nano", "micro", "small", "medium", "2xmedium", "large", "xlarge",
                                            "2xlarge", "4xlarge", "8xlarge"]
    assert split_size("large1gi") == ("large", "1gi") and split_size("weird") == ("weird", "")
    assert size_rank("weird") > size_rank("8xlarge")
