"""Guest vCPU topology: every preferred topology, legacy spellings, spread and spread options
(pkg/instancetype/apply/cpu.go applyGuestCPUTopology and cpu_test.go vectors)."""
from __future__ import annotations

import pytest

from instancetype.engine.topology import guest_topology, preferred_topology, spread_options


@pytest.mark.parametrize("topology,expected", [
    (None, (2, 1, 1)),
    ("sockets", (2, 1, 1)), ("preferSockets", (2, 1, 1)),
    ("any", (2, 1, 1)), ("preferAny", (2, 1, 1)),
    ("cores", (1, 2, 1)), ("preferCores", (1, 2, 1)),
    ("threads", (1, 1, 2)), ("preferThreads", (1, 1, 2)),
    ("spread", (1, 2, 1)), ("preferSpread", (1, 2, 1)),
    ("bogus", (1, 1, 1)),
])
def test_two_vcpus(topology, expected):
    pref = {"cpu": {"preferredCPUTopology": topology}} if topology else {"cpu": {}}
    assert guest_topology(2, pref) == expected


def test_no_preference_is_sockets():
    assert guest_topology(4, None) == (4, 1, 1)
    assert preferred_topology(None) == "sockets"


def test_empty_topology_is_not_sockets():
    # GetPreferredTopology returns a present pointer as is: "" matches no case of
    # applyGuestCPUTopology's switch (pkg/instancetype/apply/cpu.go), which leaves 1/1/1.
    pref = {"cpu": {"preferredCPUTopology": ""}}
    assert preferred_topology(pref) == ""
    assert guest_topology(4, pref) == (1, 1, 1)
    assert guest_topology(4, {"cpu": {"preferredCPUTopology": None}}) == (4, 1, 1)


@pytest.mark.parametrize("topology", ["sockets", "cores", "threads", "spread", "any"])
def test_one_vcpu_is_always_one(topology):
    assert guest_topology(1, {"cpu": {"preferredCPUTopology": topology}}) == (1, 1, 1)


SPREAD_TABLE = [
    # (spreadOptions, {guest: (sockets, cores, threads)})
    (None, {2: (1, 2, 1), 4: (2, 2, 1), 6: (3, 2, 1), 8: (4, 2, 1)}),
    ({"ratio": 3}, {3: (1, 3, 1), 6: (2, 3, 1), 9: (3, 3, 1), 12: (4, 3, 1)}),
    ({"ratio": 4}, {4: (1, 4, 1), 8: (2, 4, 1), 12: (3, 4, 1), 16: (4, 4, 1)}),
    ({"across": "SocketsCoresThreads"}, {4: (1, 2, 2), 8: (2, 2, 2), 12: (3, 2, 2), 16: (4, 2, 2)}),
    ({"across": "SocketsCoresThreads", "ratio": 3}, {6: (1, 3, 2), 12: (2, 3, 2), 18: (3, 3, 2), 24: (4, 3, 2)}),
    ({"across": "SocketsCoresThreads", "ratio": 4}, {8: (1, 4, 2), 16: (2, 4, 2), 24: (3, 4, 2), 36: (4, 4, 2)}),
    ({"across": "CoresThreads"}, {2: (1, 1, 2), 4: (1, 2, 2), 6: (1, 3, 2), 8: (1, 4, 2)}),
]


@pytest.mark.parametrize("opts,table", SPREAD_TABLE)
def test_spread_table(opts, table):
    cpu = {"preferredCPUTopology": "spread"}
    if opts:
        cpu["spreadOptions"] = opts
    for guest, expected in table.items():
        assert guest_topology(guest, {"cpu": cpu}) == expected, guest


def test_spread_legacy_ratio_and_precedence():
    pref = {"preferSpreadSocketToCoreRatio": 3, "cpu": {"preferredCPUTopology": "preferSpread"}}
    assert spread_options(pref) == (3, "SocketsCores")
    assert guest_topology(6, pref) == (2, 3, 1)
    pref["cpu"]["spreadOptions"] = {"ratio": 2}
    assert spread_options(pref) == (2, "SocketsCores")


def test_spread_unknown_across():
    assert guest_topology(8, {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "X"}}}) == (1, 1, 1)


def test_spread_ratio_zero_does_not_crash():
    pref = {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"ratio": 0}}}
    assert guest_topology(4, pref) == (0, 0, 1)
