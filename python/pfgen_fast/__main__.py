"""`python -m pfgen_fast`. SIGTERM is taken before anything else is imported: a run terminated
while it starts ends as any terminated run does (status 143, cli.EXIT_TERMINATED), not killed
by the signal; `cli.main` puts its own handler in place once it runs."""

import os
import signal
import sys
import threading
from types import FrameType


def terminated_while_starting(signum: int, frame: FrameType | None) -> None:
    while frame is not None:  # during an import (see cli.importing): again once it is done
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGTERM)).start()
            return
        frame = frame.f_back
    sys.stderr.write("terminated\n")
    raise SystemExit(143)


signal.signal(signal.SIGTERM, terminated_while_starting)

from pfgen_fast.cli import main  # noqa: E402 (after the handler, on purpose)

sys.exit(main())
