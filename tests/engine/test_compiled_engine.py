"""The compiled engine (`INSTANCETYPE_COMPILE=1 pip install .`, setup.py) answers as the Python one:
the engine's tests and every conformance vector, run against that build (tests/compiled_engine.py).

mypyc checks at run time the types the annotations and the stubs promise, where Python does not:
a value from the user's JSON in a variable typed narrower than what the JSON can hold would raise
`TypeError` in the compiled build only (the guard would then report it as an input error or a
bug, never crash, but the answer could differ). These tests are what catches it."""
from __future__ import annotations

import os
import subprocess
import sys

from tests import compiled_engine

ROOT = compiled_engine.ROOT


def test_the_compiled_engine_passes_the_engine_tests_and_every_vector():
    target = compiled_engine.install_dir()
    env = dict(os.environ, PYTHONPATH=str(target))
    probe = subprocess.run([sys.executable, "-c", "import instancetype.engine.expand as m; print(m.__file__)"],
                           env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0 and probe.stdout.strip().endswith(".so"), probe.stdout + probe.stderr
    run = subprocess.run([sys.executable, "-m", "pytest", "tests/engine", "tests/conformance", "-q", "-x",
                          "-p", "no:cacheprovider", "-n", "0", f"--ignore={__file__}"],
                         env=env, cwd=ROOT, capture_output=True, text=True, timeout=30 * 60)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
