"""Label selectors as kubectl -l parses them."""
from __future__ import annotations

import pytest

from instancetype.api.selectors import labels_match, parse_label_selector
from instancetype.errors import SelectorError

LABELS = {"a": "1", "b": "x", "k8s.io/c": "true"}


@pytest.mark.parametrize("selector, expected", [
    ("", True), ("a", True), ("!a", False), ("z", False), ("!z", True),
    ("a=1", True), ("a==1", True), ("a=2", False), ("a!=2", True), ("z!=2", True), ("a!=1", False),
    ("a in (1,2)", True), ("a in (2, 3)", False), ("a notin (2,3)", True), ("z notin (1)", True),
    ("z in (1)", False), ("a=1,b=x", True), ("a=1,b=y", False), ("a in (1,2),k8s.io/c=true", True),
    (" a = 1 , b ", True), ("a=", False), ("z=", False),
])
def test_match(selector, expected):
    assert labels_match(LABELS, parse_label_selector(selector)) is expected


@pytest.mark.parametrize("selector", ["a=1,", "=1", "a in 1", "a=b=c", "a in (x y)", "a=@"])
def test_bad_selectors(selector):
    with pytest.raises(SelectorError, match="unable to parse requirement"):
        parse_label_selector(selector)
