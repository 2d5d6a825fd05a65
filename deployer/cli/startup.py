"""Start-up and exit of a ``deploy`` process: the cyclic garbage collector stays out of them.

A command's first fraction of a second is mostly imports (Click, this package, the SDKs and
what they import: aiohttp, requests, the credentials chain). They allocate long-lived objects
— modules, classes, functions — and the collector's passes over them find almost nothing to
free: in a no-op ``deploy up`` about 170 of them cost 50-70 ms of its 0.6 s (one of them a
full collection) for some 2,000 objects freed; the interpreter's final collections at exit
traverse everything once more (about 4 % of the run's instructions).

:func:`collector_paused` therefore turns the collector off while the command starts, and a
daemon timer turns it back on after :data:`PAUSE_SECONDS`, so a command that runs longer
(``deploy dev``, watching an execution, ``deploy emulator start --foreground``) collects as
usual; resuming first moves what start-up made into the permanent generation
(``gc.freeze()``), so those later collections never traverse it again. When the command ends,
everything is frozen the same way, and the exit's collections have (almost) nothing to do.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["PAUSE_SECONDS", "RESUME_THREAD", "collector_paused"]

PAUSE_SECONDS = 1.0
RESUME_THREAD = "deploy-gc-resume"


@contextmanager
def collector_paused(seconds: float | None = None) -> Iterator[None]:
    """Run the block with the cyclic collector off for its first ``seconds`` (default
    :data:`PAUSE_SECONDS`); freeze what is left when it ends. A collector already off stays
    off."""
    timer = None
    if gc.isenabled():
        gc.disable()
        timer = threading.Timer(PAUSE_SECONDS if seconds is None else seconds, _resume)
        timer.daemon = True  # never keeps the process alive
        timer.name = RESUME_THREAD
        timer.start()
    try:
        yield
    finally:
        gc.freeze()
        if timer is not None:
            timer.cancel()
            gc.enable()


def _resume() -> None:
    gc.freeze()
    gc.enable()
