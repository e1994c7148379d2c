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
