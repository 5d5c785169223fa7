"""`plot` draws every figure from result.json's aggregates, one file at a time: on the published
runs, the numbers fed to the figures are those of the former way (every result.json kept, and
source stability from every answer scored against each source alone: `stability`'s scores),
Fig. 1-3 and score against length exactly, Fig. 4-6 within result.json's rounding."""

from __future__ import annotations

import numpy as np
from rich.console import Console

from pfgen_bench import bench_dir
from pfgen_fast.pfgen.commands.plot import figure_data
from pfgen_fast.pfgen.data import load_questions
from pfgen_fast.pfgen.plots import run_point
from pfgen_fast.pfgen.results import load_results
from pfgen_fast.pfgen.scorer import ReferenceData
from pfgen_fast.pfgen.stability import (
    STABILITY_SOURCES,
    pearson_by_pair,
    source_scores,
    stability_questions,
)


def test_figure_data_unchanged_on_the_published_runs() -> None:
    paths = sorted((bench_dir() / "result").glob("**/result.json"))
    assert len(paths) == 66
    question_ids = [
        q.question_id for q in stability_questions(load_questions(bench_dir() / "data"))
    ]
    data = figure_data(paths, question_ids)
    assert not data.errors

    runs, errors = load_results(paths)
    assert not errors
    assert data.points == [run_point(run) for run in runs]

    references = ReferenceData.load(bench_dir() / "data")
    scored = [run for run in runs if run.mode != "system"]
    former = source_scores([run.path for run in scored], references, Console(quiet=True))
    assert len(former.runs) == len(data.stable_kinds) == len(scored)
    new = {source: np.array(data.by_source[source]) for source in STABILITY_SOURCES}
    for source in STABILITY_SOURCES:
        assert np.abs(new[source] - former.scores[source]).max() < 1e-5
    for pair, r in pearson_by_pair(new).items():
        assert abs(r - former.pearson()[pair]) < 1e-6
