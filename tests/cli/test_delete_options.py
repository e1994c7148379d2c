"""kubectl delete's flags as kubectl reads them (DeleteFlags.ToOptions, Complete, Validate):
--cascade, --wait, --timeout, --grace-period, --now, --force; and `force deleted` printed."""
from __future__ import annotations

import pytest

from instancetype.cli.delete_wait import FORCE_WARNING, WEEK_SECONDS, delete_options
from instancetype.cli.kubectl import CommandError
from tests.cli._helpers import run_main


def test_defaults():
    o = delete_options("background", "true", "0s", -1, False, False)
    assert (o.propagation, o.wait, o.timeout, o.grace_period) == ("Background", True, WEEK_SECONDS, -1)


@pytest.mark.parametrize(("cascade", "propagation", "warning"), [
    ("foreground", "Foreground", ""), ("orphan", "Orphan", ""),
    ("true", "Background", "warning: --cascade=true is deprecated (boolean value) and can be replaced with "
                           "--cascade=background.\n"),
    ("false", "Orphan", "warning: --cascade=false is deprecated (boolean value) and can be replaced with "
                        "--cascade=orphan.\n"),
])
def test_cascade(capsys, cascade, propagation, warning):
    assert delete_options(cascade, "true", "0s", -1, False, False).propagation == propagation
    assert capsys.readouterr().err == warning


@pytest.mark.parametrize(("args", "message"), [
    (("sideways", "true", "0s", -1, False, False),
     'error: invalid cascade value (sideways). Must be "background", "foreground", or "orphan"'),
    (("background", "maybe", "0s", -1, False, False),
     'error: invalid argument "maybe" for "--wait" flag: strconv.ParseBool: parsing "maybe": invalid syntax'),
    (("background", "true", "0s", 5, True, False), "error: --now and --grace-period cannot be specified together"),
    (("background", "true", "0s", 5, False, True),
     "error: --force and --grace-period greater than 0 cannot be specified together"),
])
def test_refused(args, message):
    with pytest.raises(CommandError) as e:
        delete_options(*args)
    assert str(e.value) == message


def test_grace_periods(capsys):
    assert delete_options("background", "true", "0s", 0, False, False).grace_period == 1      # 0 needs --force
    assert delete_options("background", "true", "0s", -1, True, False).grace_period == 1      # --now
    assert capsys.readouterr().err == ""
    assert delete_options("background", "false", "5s", -1, False, True).grace_period == 0     # --force
    assert capsys.readouterr().err == f"Warning: {FORCE_WARNING}\n"


def test_force_deleted_is_printed(tmp_path):
    state = ["--state", str(tmp_path / "s.db")]
    r = run_main([*state, "create", "namespace", "gone"])
    assert r.code == 0, r.err
    r = run_main([*state, "delete", "namespace", "gone", "--grace-period=0", "--force"])
    assert (r.code, r.out) == (0, 'namespace "gone" force deleted\n')
    assert r.err == f"Warning: {FORCE_WARNING}\n"
