"""The package's build backend: setuptools', asking for mypy (whose mypyc compiles the engine)
only when the compiled engine is asked for (`INSTANCETYPE_COMPILE=1`, see setup.py), so that a
plain `pip install .` downloads nothing more."""
from __future__ import annotations

import os

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (every other hook is setuptools' own)

_MYPYC = ["mypy>=1.18"]


def _compile() -> bool:
    return os.environ.get("INSTANCETYPE_COMPILE") == "1"


def get_requires_for_build_wheel(config_settings=None):
    if not _compile():
        return _setuptools.get_requires_for_build_wheel(config_settings)
    # setuptools runs setup.py to find its requirements: there, before mypy is installed, as a
    # plain build
    os.environ["INSTANCETYPE_COMPILE"] = "0"
    try:
        return _setuptools.get_requires_for_build_wheel(config_settings) + _MYPYC
    finally:
        os.environ["INSTANCETYPE_COMPILE"] = "1"
