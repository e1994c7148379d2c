"""Overcommit arithmetic in float32 (pkg/instancetype/apply/memory.go applyMemory)."""
from __future__ import annotations

import pytest

from instancetype.engine.memory import f32, overcommit_request, overcommit_value

TABLE = [
    ("128Mi", 15, "114085072"), ("128Mi", 10, "120795952"), ("128Mi", 20, "107374184"),
    ("128Mi", 25, "96Mi"), ("128Mi", 50, "64Mi"), ("128Mi", 80, "26843544"), ("128Mi", 100, "0"),
    ("512M", 15, "435200k"), ("512M", 80, "102399992"), ("128M", 80, "25599998"),
    ("1Gi", 10, "966367616"), ("1Gi", 15, "912680576"), ("1Gi", 25, "768Mi"), ("1Gi", 50, "512Mi"),
    ("2Gi", 15, "1825361152"), ("1G", 80, "199999984"), ("4Gi", 80, "858993408"),
    ("1e9", 20, "800e6"),
]


@pytest.mark.parametrize("guest,percent,expected", TABLE)
def test_overcommit_table(guest, percent, expected):
    assert overcommit_request(guest, percent) == expected


def test_value_is_truncated_float32():
    assert overcommit_value(134217728, 15) == 114085072
    assert f32(0.85) != 0.85 and abs(f32(0.85) - 0.85) < 1e-7


def test_fractional_guest_rounds_up_first():
    # "0.5" -> Value() 1 byte; 1 * 0.5 = 0.5 -> int 0
    assert overcommit_value(1, 50) == 0
