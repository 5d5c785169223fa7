"""One figure, one function: the Fluency and Truthfulness totals of every published run, as the
README leaderboard publishes them, come from `pfgen.outputs.run_figures`, and `eval`'s summary,
`report`'s leaderboard (printed, Markdown, exported) and the site's rows all show that figure."""

from __future__ import annotations

import re
from pathlib import Path

import published
from pfgen_fast.pfgen.commands.eval import SUMMARY_PLACES, summary_row
from pfgen_fast.pfgen.evaluate import RunOutcome, summary_of
from pfgen_fast.pfgen.exactness import py_sum
from pfgen_fast.pfgen.leaderboard import frame, rank_runs
from pfgen_fast.pfgen.outputs import RESULT_NAME, load_result, run_figures
from pfgen_fast.site.model import Collected
from pfgen_fast.site.pfgen_runs import collect_pfgen

# A leaderboard row of the README: its page link, then Length, Fluency, Truthfulness, Helpfulness.
ROW = re.compile(
    r"^\| <code>[^<]*</code> \| <code>[^<]*</code> \| <code>\[[^\]]*\]\((?P<page>[^)]*)\)</code>"
    r" \| <code>[^<]*</code> \| <code>(?P<fluency>[0-9.]+)</code> \| "
    r"<code>(?P<truthfulness>[0-9.]+)</code> \| <code>(?P<helpfulness>[0-9.]+)</code> \|$",
    re.MULTILINE,
)


def published_rows(checkout: Path) -> dict[Path, dict[str, str]]:
    """result.json path -> the figures its README leaderboard row shows."""
    text = (checkout / "README.md").read_text(encoding="utf-8")
    rows = {}
    for found in ROW.finditer(text):
        path = checkout / Path(found["page"]).parent / RESULT_NAME
        rows[path] = {k: found[k] for k in ("fluency", "truthfulness", "helpfulness")}
    return rows


def test_every_output_shows_the_published_figures() -> None:
    checkout = published.require(published.CHECKOUT)
    rows = published_rows(checkout)
    assert len(rows) > 500
    # the runs of the checkout (a copy may hold only some of the README's)
    runs = [load_result(path) for path in sorted(rows) if path.is_file()]
    assert len(runs) >= len(published.published_runs())
    table = {row["path"]: row for row in frame(rank_runs(runs)).to_dicts()}
    for run in runs:
        figures = run_figures(run.data)
        published_row = rows[run.path]
        # the README: three decimals of the unrounded totals
        assert f"{figures.fluency:.3f}" == published_row["fluency"], run.path
        assert f"{figures.truthfulness:.3f}" == published_row["truthfulness"], run.path
        assert f"{figures.helpfulness:.3f}" == published_row["helpfulness"], run.path
        # `report --table`'s export and `eval`'s summary
        exported = table[str(run.path)]
        assert exported["fluency"] == figures.rounded_fluency
        assert exported["truthfulness"] == figures.rounded_truthfulness
        outcome = RunOutcome(run.path, "skipped", summary_of(run.data))
        summary = summary_row(outcome, legacy_sum=False)  # four places, rounded once
        assert (
            summary["fluency"]
            == round(figures.fluency, SUMMARY_PLACES)
            == round(py_sum(list(run.data["scores"]["fluency"].values()), False), 4)
        )
        assert summary["truthfulness"] == round(figures.truthfulness, SUMMARY_PLACES)
    # the site's rows
    collected = Collected()
    collect_pfgen([checkout / "result"], collected)
    [board] = collected.boards
    by_run = {run.path: run_figures(run.data) for run in runs}
    shown = 0
    for row in board.rows:
        path = checkout / "result" / row.run / RESULT_NAME
        if path in by_run:
            assert row.cells["fluency"] == by_run[path].rounded_fluency, row.run
            assert row.cells["truthfulness"] == by_run[path].rounded_truthfulness, row.run
            shown += 1
    assert shown == len(published.published_runs())
