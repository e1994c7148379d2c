"""Only the optional compiled engine; everything else about the package is in pyproject.toml.

`INSTANCETYPE_COMPILE=1 pip install .` compiles the engine (`src/instancetype/engine`, pure
functions over plain dicts, the hot path of every expand, admission and VMI build) with mypyc,
from the same Python source, into C extension modules installed in place of the `.py` files'
bytecode: the same answers (tests/engine/test_compiled_engine.py runs the engine's tests and
every conformance vector against that build), about 1.5-2x faster (BENCHMARKS.md). Without the
variable, or for an editable install (where compiled modules would shadow the source being
edited), nothing is compiled.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup

# ContentCache subclasses OrderedDict: mypyc's compiled subclass of it crashes the cyclic GC at
# import, and its hot methods are OrderedDict's own C ones anyway.
# ObjectSource: the stores derive their (interpreted) sources from it, and an interpreted class
# cannot derive from a compiled one.
NOT_COMPILED = frozenset({"cache.py", "object_source.py"})


def engine_sources(root: Path = Path("src")) -> list[str]:
    """The engine's modules mypyc compiles (package `__init__`s stay Python: they only import)."""
    engine = root / "instancetype" / "engine"
    return sorted(str(p) for p in engine.rglob("*.py") if p.name != "__init__.py" and p.name not in NOT_COMPILED)


if __name__ == "__main__":
    if os.environ.get("INSTANCETYPE_COMPILE") == "1" and "editable_wheel" not in sys.argv:
        from mypyc.build import mypycify

        setup(ext_modules=mypycify(engine_sources(), opt_level="3"))
    else:
        setup()
