"""engine/jsondata: the compiled build's walk answers as jsonutil.clone, on every input.

Run interpreted, these test the walk itself (`_walk_copy`, which the interpreted engine does not
use); run against the compiled build (tests/engine/test_compiled_engine.py), they test it as
compiled, where it is `copy_json`."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from instancetype.engine import jsondata
from instancetype.jsonutil import clone

COPIES = [jsondata._walk_copy, jsondata.copy_json]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=30)


def _containers(v: Any) -> list[int]:
    if isinstance(v, dict):
        return [id(v), *(i for x in v.values() for i in _containers(x))]
    if isinstance(v, list):
        return [id(v), *(i for x in v for i in _containers(x))]
    return []


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same container types all the way down."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@given(json_values)
def test_a_copy_equals_the_round_trip_and_shares_no_container(v):
    for copy in COPIES:
        got = copy(v)
        assert _same(got, clone(v))
        assert not set(_containers(got)) & set(_containers(v))


def test_what_the_walk_does_not_take_is_copied_by_the_round_trip():
    odd: list[Any] = [
        {"a": (1, 2)},                                   # a tuple reads back as a list
        {"a": OrderedDict(b=[1])},                        # a dict subclass reads back as a dict
        [{"n": 2**70}],                                    # past msgpack's integers: walked, kept
        {"b": b"x"},
        {"o": object()},
    ]
    for v in odd:
        for copy in COPIES:
            got = copy(v)
            want = clone(v)
            assert _same(got, want)
            assert not set(_containers(got)) & set(_containers(v))


def test_nesting_past_the_walks_bound_is_copied_whole_by_the_round_trip():
    v: Any = {}
    leaf = v
    for _ in range(jsondata._MAX_DEPTH * 3):
        leaf["x"] = {}
        leaf = leaf["x"]
    leaf["l"] = [[[1]]]
    for copy in COPIES:
        got = copy(v)
        assert got == v and got is not v
        assert not set(_containers(got)) & set(_containers(v))


def test_the_argument_is_never_changed():
    v: dict[str, Any] = {"a": [{"b": "c"}, 1, None], "d": {"e": 1.5}}
    before = clone(v)
    for copy in COPIES:
        got = copy(v)
        got["a"][0]["b"] = "changed"
        got["d"].clear()
    assert v == before
