"""The compiled engine (setup.py, `INSTANCETYPE_COMPILE=1`), built on demand for tests and benches.

`install_dir()` returns a directory holding the package as `INSTANCETYPE_COMPILE=1 pip install
--target` installs it: the engine's modules compiled by mypyc, the rest as Python. Put it first on
`PYTHONPATH` to run anything against the compiled build. It is built by setup.py (`build_ext
--inplace`, the build `pip install` runs) in a copy of this checkout's build inputs
(pyproject.toml, setup.py, build_backend/, src/), whose `src/` is then moved to
`~/.cache/instancetype/compiled/<digest of those inputs>/` (or `$INSTANCETYPE_COMPILED_CACHE`),
with the mypy the test dependencies installed (no download), once per change of the sources:
minutes on 2 cores. Parallel workers build once (an `fcntl` lock); an older build is removed.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INPUTS = ("pyproject.toml", "setup.py", "README.md")
INPUT_DIRS = ("build_backend", "src")
BUILD_TIMEOUT_S = 30 * 60


class BuildError(RuntimeError):
    pass


def cache_dir() -> Path:
    override = os.environ.get("INSTANCETYPE_COMPILED_CACHE")
    return Path(override) if override else Path.home() / ".cache" / "instancetype" / "compiled"


def _sources() -> list[Path]:
    files = [ROOT / name for name in INPUTS]
    for d in INPUT_DIRS:
        files += sorted(p for p in (ROOT / d).rglob("*") if p.is_file() and "__pycache__" not in p.parts
                        and p.suffix not in (".pyc", ".so"))
    return files


def _digest() -> str:
    h = hashlib.sha256(sys.version.encode())
    for path in _sources():
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def install_dir() -> Path:
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / _digest()
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)        # another worker may be building it: wait for it
        if not (target / "instancetype").is_dir():
            _build(target)
            for old in cache.iterdir():
                if old.is_dir() and old != target:
                    shutil.rmtree(old, ignore_errors=True)
    return target


def _build(target: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="instancetype-compile-") as tmp:
        work = Path(tmp) / "src-tree"
        work.mkdir()
        for name in INPUTS:
            shutil.copy2(ROOT / name, work / name)
        for d in INPUT_DIRS:
            shutil.copytree(ROOT / d, work / d, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
        log = Path(tmp) / "build.log"
        env = dict(os.environ, INSTANCETYPE_COMPILE="1")
        # setup.py's own build, in place in the copy (no pip, no wheel: the copy's src/ then holds
        # the package as `pip install --target` would, each compiled module beside its source)
        with open(log, "w") as out:
            done = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=work,
                                  stdout=out, stderr=subprocess.STDOUT, env=env, timeout=BUILD_TIMEOUT_S)
        if done.returncode != 0:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
            raise BuildError(f"the compiled engine did not build (exit {done.returncode}):\n{tail}")
        shutil.move(str(work / "src"), str(target))
