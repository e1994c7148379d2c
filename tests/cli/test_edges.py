"""kubectl's conventions at the edges of the command line (issue 29 item 5), and the one table of
global options every parser reads (issue 24 item 7)."""
from __future__ import annotations

import pytest

from instancetype.cli import entry
from instancetype.cli.global_options import GLOBAL_OPTIONS

from ._helpers import run_main


def test_bare_command_prints_help_and_exits_0():
    for argv in ([], ["-n", "x"], ["--state", "s.db"]):
        r = run_main(argv)
        assert r.code == 0 and r.err == "", (argv, r)
        assert r.out.startswith("Usage: instancetype [OPTIONS] COMMAND [ARGS]...") and "Commands:" in r.out


def test_help_command():
    r = run_main(["help"])
    assert r.code == 0 and r.out == run_main(["--help"]).out
    r = run_main(["help", "get"])
    assert (r.code, r.out) == (0, run_main(["get", "--help"]).out)
    r = run_main(["help", "catalog", "fit"])
    assert (r.code, r.out) == (0, run_main(["catalog", "fit", "--help"]).out)
    r = run_main(["help", "create", "vm"])
    assert (r.code, r.out) == (0, run_main(["create", "vm", "--help"]).out) and "--instancetype" in r.out
    # cobra: an unknown topic is named, then the root command's usage, status 0
    r = run_main(["help", "nosuch"])
    assert r.code == 0 and r.out.startswith("Unknown help topic [`nosuch`]\nUsage: instancetype")


@pytest.mark.parametrize("typed,suggested", [
    ("gte", ["get"]),
    ("ap", ["api-resources", "apply"]),          # cobra: a prefix is suggested too
    ("DELETE", ["delete"]),                      # case is ignored
    ("lable", ["label"]),
    ("xyzzy", []),
])
def test_unknown_command_gets_cobra_s_suggestions(typed, suggested):
    r = run_main([typed])
    text = f'error: unknown command "{typed}" for "instancetype"\n'
    if suggested:
        text += "\nDid you mean this?\n" + "".join(f"\t{s}\n" for s in suggested)
    assert (r.code, r.out, r.err) == (1, "", text)


def test_every_error_has_one_error_prefix(tmp_path):
    state = ["--state", str(tmp_path / "s.db")]
    # create (virtctl's parser), a virtctl verb, a kubectl verb, a usage error
    for argv in (["create", "vm", "--bogus"], [*state, "start"], [*state, "start", "a", "b"],
                 [*state, "get", "nosuchkind"], [*state, "get", "--bogus"], ["--state=", "create", "vm"]):
        r = run_main(argv)
        assert r.code == 1 and r.err.startswith("error: ") and not r.err.startswith("error: error:"), (argv, r.err)
    # kubectl's own forms are kept as kubectl prints them
    r = run_main([*state, "get", "vm", "nosuch"])
    assert r.err == 'Error from server (NotFound): virtualmachines.kubevirt.io "nosuch" not found\n'


def _interrupt(*_a, **_k):
    raise KeyboardInterrupt


def test_ctrl_c_exits_130_silently(monkeypatch, tmp_path):
    """kubectl dies of SIGINT: status 130 in a shell, nothing printed (click printed `Aborted!`)."""
    import instancetype.cli.create as create
    import instancetype.cli.offline as offline

    monkeypatch.setattr(offline, "read_sources", _interrupt)
    f = tmp_path / "vm.yaml"
    f.write_text("{}")
    r = run_main(["expand", "-f", str(f)])
    assert (r.code, r.out, r.err) == (130, "", "")
    monkeypatch.setattr(create, "_command", _interrupt)
    r = run_main(["create", "vm"])
    assert (r.code, r.out, r.err) == (130, "", "")


def test_the_click_group_declares_the_table_s_options():
    from instancetype.cli.main import STORE_OPTIONS, cli

    declared = {opt for p in cli.params for opt in p.opts}
    assert {name for o in GLOBAL_OPTIONS for name in o.names} <= declared
    assert STORE_OPTIONS == {"--state": True, "--kubeconfig": True, "--context": True, "--cluster": False,
                             "-v": True, "--v": True}


@pytest.mark.parametrize("argv,create_args", [
    (["create", "vm"], ["vm"]),
    (["-n", "a", "create", "vm", "--name", "x"], ["vm", "--namespace=a", "--name", "x"]),
    (["--namespace=a", "--kubeconfig", "k", "--cluster", "--context=c", "create", "vm"], ["vm", "--namespace=a"]),
    (["--state", "s", "create"], []),
    (["get", "create"], None),                 # `create` is not the verb
    (["--cluster=yes", "create", "vm"], None),  # a flag takes no value: left to click's error
    (["-n"], None),
])
def test_create_is_found_behind_the_table_s_options(argv, create_args):
    assert entry._create_args(argv) == create_args


def test_an_empty_state_is_refused_before_create():
    from instancetype.errors import CLIError

    with pytest.raises(CLIError, match="--state: the path is empty"):
        entry._create_args(["--state", "", "create", "vm"])
