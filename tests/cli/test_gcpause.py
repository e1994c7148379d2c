"""The one collector pause (`instancetype.gcpause`): `gc_paused` stops the cyclic collector inside
its block and restores it after, freezing what the block made with `keep`; the command line's
start is such a block, held open from `entry.main` until the command's module is loaded, and the
command line freezes everything at exit. Freezing is checked in child processes (a freeze in the
test process would stay for the rest of the session)."""
from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

import pytest

from instancetype import gcpause


def _child(code: str, *args: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_collector_is_off_inside_and_restored_after():
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    with gcpause.gc_paused():
        assert not gc.isenabled()
        with gcpause.gc_paused():           # nested: off until the outermost block ends
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen  # without keep, nothing is frozen
    with pytest.raises(ValueError), gcpause.gc_paused():
        raise ValueError("inside the block")
    assert gc.isenabled()


def test_a_collector_off_before_stays_off():
    gc.disable()
    try:
        with gcpause.gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_keep_freezes_what_the_block_made():
    out = _child("""
        import gc
        from instancetype.gcpause import gc_paused
        before = gc.get_freeze_count()
        with gc_paused(keep=True):
            made = [[i] for i in range(5000)]
        print(gc.isenabled(), gc.get_freeze_count() - before >= 5000)
        """)
    assert out.split() == ["True", "True"]


def test_the_start_pause_lasts_until_the_command_is_loaded():
    out = _child("""
        import gc
        from instancetype import gcpause
        gcpause.started()                   # no start: nothing to end
        print(gc.isenabled(), gc.get_freeze_count())
        gcpause.start()
        gcpause.start()                     # one pause while it is open
        print(gc.isenabled())
        import instancetype.cli.main        # the command's modules
        gcpause.started()
        print(gc.isenabled(), gc.get_freeze_count() > 10000)
        gcpause.started()
        print(gc.isenabled())
        """)
    assert out.split() == ["True", "0", "False", "True", "True", "True"]


def test_the_command_line_freezes_everything_at_exit(tmp_path):
    """`entry.main()` as the console script calls it: paused while `expand` loads, then everything
    made until exit is frozen before the interpreter's last collection (an atexit hook registered
    before `main()` runs after the command line's own)."""
    vm = tmp_path / "vm.yaml"
    vm.write_text("apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: v}\n"
                  "spec: {template: {spec: {domain: {devices: {}}}}}\n")
    script = textwrap.dedent("""
        import atexit, gc, sys
        atexit.register(lambda: print(gc.get_freeze_count(), file=sys.stderr))
        sys.argv = ["instancetype", "expand", "-f", sys.argv[1]]
        import instancetype.cli.main as click_main
        run_click = click_main.run_click

        def probe(argv):
            print(gc.isenabled(), file=sys.stderr)      # the command's module is not loaded yet
            status = run_click(argv)
            print(gc.isenabled(), gc.get_freeze_count(), file=sys.stderr)
            return status

        click_main.run_click = probe
        from instancetype.cli.entry import main
        main()
        """)
    done = subprocess.run([sys.executable, "-c", script, str(vm)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "kind: VirtualMachine" in done.stdout
    loading, ran, frozen_after_run, frozen_at_exit = done.stderr.split()
    assert (loading, ran) == ("False", "True")
    # what the start made was frozen when the command was loaded; the engine's modules, loaded
    # while it ran, at exit
    assert 10000 < int(frozen_after_run) < int(frozen_at_exit)


def test_an_in_process_caller_keeps_its_collector():
    from instancetype.cli.entry import main

    with pytest.raises(SystemExit):
        main(["expand"])                    # (must specify -f: status 1)
    assert gc.isenabled()
    assert gcpause._start is None
