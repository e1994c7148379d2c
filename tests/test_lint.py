"""Lint is a test: ruff's pyflakes, bugbear, isort and pyupgrade rules (pyproject.toml's
[tool.ruff]) over the package, the tests and the benchmarks. A finding fails the suite."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_finds_nothing():
    run = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                          "src", "tests", "bench"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
