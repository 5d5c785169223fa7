"""`python -m pfgen_fast`. SIGTERM is taken before anything else is imported: a run terminated
while it starts ends as any terminated run does (status 143, cli.EXIT_TERMINATED), not killed
by the signal; `cli.main` puts its own handler in place once it runs."""

import signal
import sys
from types import FrameType

from pfgen_fast.common.termination import deliver_again_soon, importing


def terminated_while_starting(signum: int, frame: FrameType | None) -> None:
    if importing(frame):
        deliver_again_soon()
        return
    sys.stderr.write("terminated\n")
    raise SystemExit(143)


signal.signal(signal.SIGTERM, terminated_while_starting)

from pfgen_fast.cli import main  # noqa: E402 (after the handler, on purpose)

sys.exit(main())
