"""The build machinery of the test environment, on a tiny Go module (seconds, no download)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.kube import build

HELLO = 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello %s") }\n'
RECIPE = build.Recipe("hello", ".")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def module(tmp_path: Path) -> Path:
    mod = tmp_path / "hello"
    mod.mkdir()
    (mod / "go.mod").write_text("module example.test/hello\n\ngo 1.22\n")
    (mod / "main.go").write_text(HELLO % "one")
    return mod


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    cache.mkdir()
    # The shared compile cache (safe for concurrent use): the standard library is not rebuilt.
    shared = build.cache_dir() / "gocache"
    if shared.is_dir():
        (cache / "gocache").symlink_to(shared)
    return cache


def _run(path: Path) -> str:
    return subprocess.run([path], capture_output=True, text=True, timeout=30).stdout.strip()


def test_a_binary_is_built_once_then_reused_and_rebuilt_when_its_module_changes(module, cache):
    path = build.binary("hello", recipe=RECIPE, module_dir=module, cache=cache)
    assert _run(path) == "hello one"
    assert build.build_seconds("hello", cache) is not None
    inode = path.stat().st_ino
    assert build.binary("hello", recipe=RECIPE, module_dir=module, cache=cache).stat().st_ino == inode
    (module / "main.go").write_text(HELLO % "two")
    assert _run(build.binary("hello", recipe=RECIPE, module_dir=module, cache=cache)) == "hello two"
    assert not list((cache / "bin").glob(".hello.tmp-*"))


def test_parallel_callers_build_once(module, cache):
    code = ("import sys; from pathlib import Path; from tests.kube import build; "
            "print(build.binary('hello', recipe=build.Recipe('hello', '.'), "
            "module_dir=Path(sys.argv[1]), cache=Path(sys.argv[2])))")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(module), str(cache)],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT) for _ in range(3)]
    outs = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len(set(outs)) == 1
    # One build: every caller but the first found the binary current once it had the lock.
    assert (cache / "logs" / "builds.txt").read_text().count(" hello exit=0 ") == 1


def test_a_failed_build_says_why_with_the_log_tail(module, cache):
    (module / "main.go").write_text("package main\n\nfunc main() { undefinedThing() }\n")
    with pytest.raises(build.BuildError) as info:
        build.binary("hello", recipe=RECIPE, module_dir=module, cache=cache)
    message = str(info.value)
    assert message.startswith("building hello failed (exit 1)")
    assert "undefined: undefinedThing" in message
    assert not (cache / "bin" / "hello").exists()
