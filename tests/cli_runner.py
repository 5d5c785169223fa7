"""Running the command line from any room's tests (a plain module, not a conftest: every room
folder may have its own conftest.py, and pytest imports each of them under the name
`conftest`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_cli(
    *args: str | int | Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """`python -m pfgen_fast ARGS` (in `cwd`, with `env` added to the environment), output
    captured as text (wide, for the rich tables)."""
    return subprocess.run(
        [sys.executable, "-m", "pfgen_fast", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )
