"""Lint and types are tests: ruff's pyflakes, bugbear, isort and pyupgrade rules (pyproject.toml's
[tool.ruff]) over the package, the tests and the benchmarks, and mypy over the package
(pyproject.toml's [tool.mypy]: strict on api and engine, the default checks and the bodies of
unannotated functions elsewhere). A finding fails the suite."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_finds_nothing():
    run = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                          "src", "tests", "bench"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_finds_nothing():
    # The files and flags are pyproject.toml's; the cache is the checkout's .mypy_cache (ignored
    # by git), so a second run checks only what changed.
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    run = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(ROOT / ".mypy_cache")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
