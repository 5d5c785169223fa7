"""Running the command line from any room's tests (a plain module, not a conftest: every room
folder may have its own conftest.py, and pytest imports each of them under the name
`conftest`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m pfgen_fast ARGS` in `cwd`, output captured (wide, for the rich tables)."""
    return subprocess.run(
        [sys.executable, "-m", "pfgen_fast", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )
