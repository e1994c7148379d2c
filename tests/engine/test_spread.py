"""The VM webhook's spread divisibility check (webhooks/vm/admitter_test.go vectors)."""
from __future__ import annotations

import pytest

from instancetype.engine.spread import check_spread
from instancetype.engine.topology import guest_topology
from instancetype.errors import ConflictError, SpreadError

SC = ("{g} vCPUs provided by the instance type are not divisible by the Spec.PreferSpreadSocketToCoreRatio "
      "or Spec.CPU.PreferSpreadOptions.Ratio of {r} provided by the preference")
CT = "{g} vCPUs provided by the instance type are not divisible by the number of threads per core {r}"
SCT = ("{g} vCPUs provided by the instance type are not divisible by the number of threads per core 2 and "
       "Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of {r}")


def it(guest):
    return {"cpu": {"guest": guest}, "memory": {"guest": "1Gi"}}


@pytest.mark.parametrize("guest,pref,msg", [
    (3, {"cpu": {"preferredCPUTopology": "spread"}}, SC.format(g=3, r=2)),
    (2, {"preferSpreadSocketToCoreRatio": 3, "cpu": {"preferredCPUTopology": "preferSpread"}}, SC.format(g=2, r=3)),
    (4, {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"ratio": 3}}}, SC.format(g=4, r=3)),
    # spreadOptions.ratio wins over the top-level ratio
    (4, {"preferSpreadSocketToCoreRatio": 2, "cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"ratio": 3}}},
     SC.format(g=4, r=3)),
    (5, {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "CoresThreads"}}}, CT.format(g=5, r=2)),
    (5, {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "SocketsCoresThreads"}}},
     SCT.format(g=5, r=2)),
    (6, {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "SocketsCoresThreads", "ratio": 4}}},
     SCT.format(g=6, r=4)),
    (6, {"preferSpreadSocketToCoreRatio": 4,
         "cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "SocketsCoresThreads"}}},
     SCT.format(g=6, r=4)),
    (1, {"cpu": {"preferredCPUTopology": "spread"}}, SC.format(g=1, r=2)),
])
def test_not_divisible(guest, pref, msg):
    with pytest.raises(SpreadError) as e:
        check_spread(it(guest), pref)
    assert str(e.value) == msg
    assert e.value.fields == ["instancetype.spec.cpu.guest"]
    assert isinstance(e.value, ConflictError)


@pytest.mark.parametrize("instancetype,pref,topology", [
    # no instancetype: nothing to divide
    (None, {"cpu": {"preferredCPUTopology": "spread"}}, None),
    # divisible: the spread the instancetype is then applied with (applyGuestCPUTopology)
    (it(4), {"cpu": {"preferredCPUTopology": "spread"}}, (2, 2, 1)),
    (it(6), {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "CoresThreads"}}}, (1, 3, 2)),
    (it(8), {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "SocketsCoresThreads", "ratio": 4}}},
     (1, 4, 2)),
    # not a spread (or an unknown `across`): 3 vCPUs are never checked
    (it(3), {"cpu": {"preferredCPUTopology": "cores"}}, (1, 3, 1)),
    (it(3), None, (3, 1, 1)),
    (it(3), {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "Nope"}}}, (1, 1, 1)),
])
def test_divisible_or_not_checked(instancetype, pref, topology):
    assert check_spread(instancetype, pref) is None
    if instancetype is not None:
        assert guest_topology(instancetype["cpu"]["guest"], pref) == topology


def test_ratio_zero_is_an_error_not_a_crash():
    with pytest.raises(SpreadError):
        check_spread(it(4), {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"ratio": 0}}})
    # an odd count fails before the ratio is divided by (Go short-circuits)
    with pytest.raises(SpreadError) as e:
        check_spread(it(3), {"cpu": {"preferredCPUTopology": "spread",
                                     "spreadOptions": {"ratio": 0, "across": "SocketsCoresThreads"}}})
    assert str(e.value) == SCT.format(g=3, r=0)


def test_bad_ratio_type_is_a_decode_error():
    from instancetype.errors import DecodeError

    with pytest.raises(DecodeError):
        check_spread(it(4), {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"ratio": "2"}}})
