"""The paper's figures for pfgen-bench, drawn by `python -m pfgen_fast plot` (run as a command:
the site imports only the pfgen room's `outputs`) from the runs the site could read, into
OUT/figures/ as PNG files the index shows (named by their content). Without matplotlib they are
left out, with a note saying so."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pfgen_fast.site.build import write_named
from pfgen_fast.site.model import Collected


def draw_figures(roots: list[Path], results: list[Path], out: Path, collected: Collected) -> None:
    """Draws the figures of `results` (the result.json files read) into `out`/figures."""
    notes = collected.notes.setdefault("pfgen", [])
    if importlib.util.find_spec("matplotlib") is None:
        notes.append("The paper's figures are left out: matplotlib is not installed.")
        return
    drawn = out / "plot"  # then copied to figures/ under digest names
    command = [sys.executable, "-m", "pfgen_fast", "plot", "--no-stability", "--out", str(drawn)]
    data = next((root / "data" for root in roots if (root / "data").is_dir()), None)
    if data is not None:
        command += ["--data", str(data)]
    done = subprocess.run(
        command + [str(p) for p in results], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        # the folder it was drawn into is a temporary one: not named
        lines = done.stderr.replace(f"{drawn}{os.sep}", "").replace(str(drawn), "OUT/figures")
        reason = (lines.strip().splitlines() or ["no message"])[-1]
        collected.warnings.append(f"figures left out: `plot` failed: {reason}")
        notes.append(f"The paper's figures are left out: `plot` failed: {reason}")
        return
    for path in sorted(drawn.glob("*.png")):
        collected.figures.append(write_named(out, "figures", path.stem, ".png", path.read_bytes()))
    shutil.rmtree(drawn, ignore_errors=True)
