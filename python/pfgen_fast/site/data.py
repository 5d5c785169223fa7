"""Where the site's inputs are and how they are read: the outputs of pfgen_fast's own commands
for each benchmark, gathered into one Collected (leaderboards, run pages, warnings)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pfgen_fast.common.errors import InputError, UsageError
from pfgen_fast.site.figures import draw_figures
from pfgen_fast.site.judge_runs import collect_judge
from pfgen_fast.site.lctg_runs import collect_lctg
from pfgen_fast.site.mm_runs import collect_mm
from pfgen_fast.site.model import Collected
from pfgen_fast.site.pfgen_runs import collect_pfgen


@dataclass(frozen=True)
class Inputs:
    """The folders given for each benchmark, the task datasets that hold mm's images, and
    LCTG Bench's files."""

    pfgen: list[Path]
    lctg: list[Path]
    mm: list[Path]
    mm_data: dict[str, Path]
    judge: list[Path]
    lctg_data: Path | None  # LCTG Bench's files, for the prompts' texts

    def check(self) -> None:
        given = [*self.pfgen, *self.lctg, *self.mm, *self.judge]
        if not given:
            raise UsageError("give at least one input (--pfgen, --lctg, --mm or --judge)")
        missing = [str(path) for path in given if not path.exists()]
        if missing:
            raise InputError(f"{missing[0]}: no such file or folder")


def collect(inputs: Inputs, work: Path) -> Collected:
    """Every input read into one Collected; the pfgen-bench figures drawn into `work`. Nothing
    recognised in any input is an error that names what was looked for."""
    collected = Collected()
    read = collect_pfgen(inputs.pfgen, collected)
    if read:
        draw_figures(inputs.pfgen, read, work, collected)
    collect_lctg(inputs.lctg, inputs.lctg_data, collected)
    collect_mm(inputs.mm, inputs.mm_data, work, collected)
    collect_judge(inputs.judge, collected)
    if not collected.boards:
        raise InputError("; ".join(collected.warnings) + " (site not written)")
    return collected
