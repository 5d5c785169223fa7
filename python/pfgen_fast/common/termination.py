"""A SIGTERM that comes during an import is delivered again once the import is done:
importlib's callbacks (module locks' weak references) drop an exception raised in them, and
some compiled modules crash when one interrupts their initialisation. `__main__` (before the
CLI is imported) and the CLI's own handler both do this; the CLI's handler also redelivers it
while asyncio makes or closes a loop (`running_in` asyncio's files)."""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType

# How soon a SIGTERM that came during an import is delivered again.
REDELIVERY_SECONDS = 0.01


def running_in(frame: FrameType | None, prefix: str) -> bool:
    """Whether the interrupted code runs, at any depth, in a file whose name starts with
    `prefix`."""
    while frame is not None:
        if frame.f_code.co_filename.startswith(prefix):
            return True
        frame = frame.f_back
    return False


def importing(frame: FrameType | None) -> bool:
    """Whether the interrupted code runs inside an import."""
    return running_in(frame, "<frozen importlib")


def deliver_again_soon() -> None:
    """SIGTERM again once the interpreter has left the code it interrupted."""
    timer = threading.Timer(REDELIVERY_SECONDS, os.kill, (os.getpid(), signal.SIGTERM))
    timer.daemon = True
    timer.start()
