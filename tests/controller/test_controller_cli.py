"""`instancetype controller`'s bad input, without a cluster: one clear line, exit 1, no traceback."""
from __future__ import annotations

import subprocess
import sys

import pytest

from instancetype.controller.leader import LeaderElector, parse_duration


def _run(*args):
    return subprocess.run([sys.executable, "-m", "instancetype", "controller", *args], capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("args, message", [
    (("--kubeconfig", "/nonexistent/kubeconfig"), "error: kubeconfig: Configuration file /nonexistent/kubeconfig not found"),
    (("--workers", "0"), "error: Invalid value for '--workers': 0 is not in the range 1<=x<=256."),
    (("--leader-elect-lease-duration", "15"), "error: Invalid value for '--leader-elect-lease-duration': "
                                              'time: invalid duration "15"'),
    (("--leader-elect-lease-duration", "0s"), "error: Invalid value for '--leader-elect-lease-duration': "
                                              "must be greater than zero"),
])
def test_bad_input_is_one_line(args, message):
    r = _run(*args)
    assert r.returncode == 1
    assert r.stderr.splitlines()[0] == message and "Traceback" not in r.stderr


def test_go_durations():
    assert [parse_duration(t) for t in ("15s", "1m30s", "500ms", "1.5s", "2h")] == [15, 90, 0.5, 1.5, 7200]
    for bad in ("15", "s", "1x", "-1s", ""):
        with pytest.raises(ValueError):
            parse_duration(bad)


def test_renew_deadline_and_retry_period_scale_with_the_lease_as_client_gos_defaults():
    e = LeaderElector(None, lease_duration=15)
    assert (e.renew_deadline, e.retry_period) == (10, 2)
    e = LeaderElector(None, lease_duration=4.5)
    assert (e.renew_deadline, e.retry_period) == (3, 0.6)
    assert not e.is_leading()
