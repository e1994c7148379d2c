"""`jsonpatch.diff` skips an unchanged subtree in C (`_same`): its patches are the walk's, field
for field, where Python's `==` and the walk disagree too (1, 1.0 and true; keys in another order),
and on objects deeper than C's comparison may go."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from instancetype.jsonutil import allow_deep_objects
from instancetype.webhook import jsonpatch


def walked(old, new, monkeypatch) -> list[dict]:
    """The patch of the walk alone (no subtree skipped by `_same`)."""
    with monkeypatch.context() as m:
        m.setattr(jsonpatch, "_same", lambda a, b: False)
        return jsonpatch.diff(old, new)


@pytest.mark.parametrize(("old", "new"), [
    ({"a": 1}, {"a": 1.0}),
    ({"a": 1}, {"a": True}),
    ({"a": [1, {"b": 0}]}, {"a": [1.0, {"b": False}]}),
    ({"a": {"x": 1, "y": 2}}, {"a": {"y": 2, "x": 1}}),
    ({"a": {"x": 1, "y": [1]}}, {"a": {"y": [True], "x": 1}}),
    ({"s": {"t": {"u": [1, 2]}}, "k": "v"}, {"s": {"t": {"u": [1, 2]}}, "k": "w"}),
])
def test_the_patch_is_the_walks(old, new, monkeypatch):
    assert jsonpatch.diff(old, new) == walked(old, new, monkeypatch)


def test_objects_deeper_than_c_compares_are_walked(monkeypatch):
    allow_deep_objects()

    def deep(leaf, levels):
        x = {"leaf": leaf}
        for _ in range(levels):
            x = {"k": x}
        return x

    for levels in (5_000, 14_000):      # C's `==` goes 13,000 levels deep, then raises RecursionError
        old, new = {"spec": deep(1, levels), "same": deep(2, levels)}, {"spec": deep(1.0, levels), "same": deep(2, levels)}
        ops = jsonpatch.diff(old, new)
        assert ops == walked(old, new, monkeypatch)
        assert len(ops) == 1 and ops[0]["op"] == "replace" and ops[0]["value"] == 1.0


scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.0, 2.5]),
                    st.sampled_from(["", "a", "b"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abcd"), inner, max_size=4)), max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from("abcd"), values, max_size=4),
       st.dictionaries(st.sampled_from("abcd"), values, max_size=4))
def test_any_pair(old, new):
    with pytest.MonkeyPatch.context() as m:
        expected = walked(old, new, m)
    assert jsonpatch.diff(old, new) == expected
    # and the same pair with `new` made of `old`'s parts where they are equal
    merged = {k: (old[k] if k in old and old[k] == v else v) for k, v in new.items()}
    with pytest.MonkeyPatch.context() as m:
        assert jsonpatch.diff(old, merged) == walked(old, merged, m)
