"""The cyclic garbage collector while a command line starts.

The start of every command line is imports (click, the command's module, the engine), which make
tens of thousands of long-lived objects (modules, classes, functions) and no garbage. When this
process is the command line (`entry.main()` with no argv), `pause()` stops the collector until the
command's module is loaded; `resume()` then freezes what the imports made (`gc.freeze`: never
walked again) and runs the collector again for what the command makes. At exit the interpreter's
last collection would walk every object once more, only to free memory the process gives back
anyway: an `atexit` hook (which runs before it) freezes them too. Together about a tenth of
`expand -f`'s instructions (BENCHMARKS.md). Callers in the same process (the tests) never call
`pause()`, and keep their collector as it is."""
from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    global _paused
    import atexit

    atexit.register(gc.freeze)
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """The command's module is loaded: freeze what the imports made and run the collector again
    (a no-op unless `pause` stopped it)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
