"""`launcher_pod.quantity_int`'s integer path for the common quantity texts gives what the exact
path (`Quantity` and `fractions.Fraction`, kube-scheduler's Value/MilliValue rounded up) gives:
every suffix, exponents, decimals, rounding up, signs, spaces, the int64 edge, and no quantity."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from instancetype.engine.launcher_pod import _quantity_int_exact, quantity_int
from instancetype.engine.scheduler import allocatable

SUFFIXES = ["", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "m", "n", "u",
            "e3", "E3", "e-2", "E-1", "e0", "i", "K", "mi", "Mm", " ", "x"]


def _same(value, milli: bool) -> None:
    assert quantity_int(value, milli=milli) == _quantity_int_exact(value, milli), (value, milli)


@pytest.mark.parametrize("milli", [False, True])
@pytest.mark.parametrize("text", [
    "0", "1", "4", "500m", "1500m", "1m", "999m", "1001m", "2Gi", "64Mi", "0Ki", "110", "8E", "9E", "10E",
    "7Ei", "8Ei", "9223372036854775807", "9223372036854775808", "999999999999999999",
    "1000000000000000000", "0001Gi", "1.5Gi", "0.5", "-1", "-500m", "+2", " 2Gi", "2Gi ", "1e3", "1E3",
    "1n", "1u", "", "Gi", "abc", "١٢", "²", "1_000", "0x10", "12345678901234567890m"])
def test_the_texts_a_start_and_a_node_carry(text, milli):
    _same(text, milli)


@pytest.mark.parametrize("milli", [False, True])
@pytest.mark.parametrize("value", [0, 1, -3, 2**63 - 1, 2**63, -(2**63), 10**30, True, False, None, 1.5, 2.0,
                                   1e20, [], {}, "null"])
def test_json_values(value, milli):
    _same(value, milli)


@settings(max_examples=1000, deadline=None)
@given(digits=st.one_of(st.integers(0, 10**20).map(str), st.from_regex(r"\A[0-9]{1,22}\Z")),
       suffix=st.sampled_from(SUFFIXES), milli=st.booleans())
def test_digits_and_a_suffix(digits, suffix, milli):
    _same(digits + suffix, milli)


@settings(max_examples=800, deadline=None)
@given(text=st.from_regex(r"\A[ +\-]?[0-9]{0,20}(\.[0-9]{0,6})?([eE][+\-]?[0-9]{1,3}|[kMGTPEmnu]|[KMGTPE]i)?\Z"),
       milli=st.booleans())
def test_any_quantity_text(text, milli):
    _same(text, milli)


@settings(max_examples=500, deadline=None)
@given(value=st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=8)), milli=st.booleans())
def test_anything(value, milli):
    _same(value, milli)


def test_allocatable_reads_cpu_in_millicores():
    node = {"status": {"allocatable": {"cpu": "3500m", "memory": "16Gi", "pods": "110", "bad": "x"},
                       "capacity": {"cpu": "4"}}}
    assert allocatable(node) == {"cpu": 3500, "memory": 16 << 30, "pods": 110}
    assert allocatable({"status": {"capacity": {"cpu": "4", "memory": "1G"}}}) == {"cpu": 4000, "memory": 10**9}


def test_allocatable_follows_the_node_text_and_hands_out_its_own_dict():
    node = {"status": {"allocatable": {"cpu": "2", "memory": "1Gi", "pods": "10"}}}
    first = allocatable(node)
    first["cpu"] = 0                       # the caller's to change
    assert allocatable(node) == {"cpu": 2000, "memory": 1 << 30, "pods": 10}
    node["status"]["allocatable"]["cpu"] = "1500m"
    assert allocatable(node)["cpu"] == 1500
    assert allocatable({"status": {"allocatable": {"cpu": 2}}}) == {"cpu": 2000}     # a number, not the text
    assert allocatable({"status": {"allocatable": {"cpu": 2.5}}}) == {"cpu": 2500}
    odd = {"status": {"allocatable": {"cpu": {"not": "a quantity"}, "pods": "3"}}}
    assert allocatable(odd) == {"pods": 3}
