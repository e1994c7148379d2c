"""The compiled engine (`INSTANCETYPE_COMPILE=1 pip install .`, setup.py) answers as the Python one:
the engine's tests and every conformance vector, then the store's, the controller's and the
commands' tests, run against that build (tests/compiled_engine.py).

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


def test_the_store_the_controller_and_the_commands_run_on_the_compiled_engine():
    """The rest of the product imports the compiled modules as they are installed: an interpreted
    class cannot derive from a compiled one, a compiled caller calls a compiled function directly
    (a test's monkeypatch of it does not reach it), annotations are checked at run time. The
    embedded store, the controller, the commands and the webhooks' tests (all but the cluster
    ones) against that build; the first of these found the stores' ObjectSource compiled."""
    target = compiled_engine.install_dir()
    env = dict(os.environ, PYTHONPATH=str(target))
    run = subprocess.run([sys.executable, "-m", "pytest", "tests/store", "tests/controller", "tests/cli",
                          "tests/virtapi", "tests/webhook", "-m", "not cluster", "-q", "-x",
                          "-p", "no:cacheprovider", "-n", "0"],
                         env=env, cwd=ROOT, capture_output=True, text=True, timeout=30 * 60)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]


# Compiled functions do not check Python's recursion limit (a compiled walk of deep enough data
# would overflow the C stack): the public functions must answer deep input as the Python engine
# does, at the API server's own limit (10,000 levels) and far past it.
_DEEP = r'''
import copy, json, sys
import instancetype
req = json.load(open("bench/typical-expand.json"))
vm, it, pref = req["vm"], req["instancetype"], req["preference"]
def deep(n, make):
    v = make()
    for _ in range(n):
        v = make(v)
    return v
obj = lambda *v: {"a": v[0]} if v else {}
arr = lambda *v: [v[0]] if v else []
def put(path, value):
    x = copy.deepcopy(vm); cur = x
    for k in path[:-1]:
        cur = cur.setdefault(k, {})
    cur[path[-1]] = value
    return x
for depth in (10_000, 200_000):
    vms = {"unknown": put(["spec", "template", "spec", "zz"], deep(depth, obj)),
           "disks": put(["spec", "template", "spec", "domain", "devices", "disks"], [deep(depth, obj)]),
           "dataVolumeTemplates": put(["spec", "dataVolumeTemplates"], deep(depth, arr)),
           "annotations": put(["spec", "template", "metadata", "annotations"], deep(depth, obj))}
    for name, v in vms.items():
        for fn in ("expand", "admit_vm", "build_vmi"):
            try:
                got = getattr(instancetype, fn)(v, instancetype=it, preference=pref)
                out = getattr(got, "allowed", "answered")
            except instancetype.Error as e:
                out = f"{type(e).__name__}: {e}"
            print(depth, name, fn, out)
    for name, (i, p) in {"instancetype": ({**it, "zz": deep(depth, obj)}, pref),
                         "preference": (it, {**pref, "zz": deep(depth, arr)})}.items():
        try:
            instancetype.expand(vm, instancetype=i, preference=p)
            out = "answered"
        except instancetype.Error as e:
            out = f"{type(e).__name__}: {e}"
        print(depth, name, "expand", out)
'''


def test_deep_input_is_answered_as_the_python_engine_answers_it():
    target = compiled_engine.install_dir()
    answers = []
    for path in (str(target), str(ROOT / "src")):
        run = subprocess.run([sys.executable, "-c", _DEEP], env=dict(os.environ, PYTHONPATH=path), cwd=ROOT,
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, (path, run.returncode, run.stderr[-3000:])
        answers.append(run.stdout)
    assert answers[0] == answers[1]
    assert answers[0].count("\n") == 2 * (4 * 3 + 2)
