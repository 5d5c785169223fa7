"""The paper's figures for pfgen-bench, drawn by `python -m pfgen_fast plot` (run as a command:
the site room does not import the pfgen room) into OUT/figures/, as PNG files the index shows.
Without matplotlib they are left out, with a note saying so."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from pfgen_fast.site.model import Collected


def draw_figures(roots: list[Path], out: Path, collected: Collected) -> None:
    notes = collected.notes.setdefault("pfgen", [])
    if importlib.util.find_spec("matplotlib") is None:
        notes.append("The paper's figures are left out: matplotlib is not installed.")
        return
    paths = [str(p) for root in roots for p in sorted(root.rglob("result.json"))]
    if not paths:
        return
    command = [sys.executable, "-m", "pfgen_fast", "plot", "--no-stability", "--out"]
    command.append(str(out / "figures"))
    data = next((root / "data" for root in roots if (root / "data").is_dir()), None)
    if data is not None:
        command += ["--data", str(data)]
    done = subprocess.run(command + paths, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["no message"])[-1]
        collected.warnings.append(f"figures left out: `plot` failed: {reason}")
        notes.append("The paper's figures are left out: `plot` failed on these results.")
        return
    figures = sorted((out / "figures").glob("*.png"))
    for svg in (out / "figures").glob("*.svg"):
        svg.unlink()
    collected.figures = [p.relative_to(out).as_posix() for p in figures]
