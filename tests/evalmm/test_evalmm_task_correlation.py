"""`mm leaderboard --plot`'s statistics are llm-jp-eval-mm's: its `make_leaderboard.py` (imported
from $EVALMM_DIR's scripts, with stand-ins for the plotting and logging packages it imports but
that compute nothing) gets the same Spearman ρ matrix, the same average linkage and the same
leaf order from the same score table. And the figure is drawn without font warnings."""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_cli
from published import EVALMM_SOURCE, require

pytestmark = pytest.mark.slow

pd = pytest.importorskip("pandas")
pytest.importorskip("scipy")

# Per model: okvqa, ai2d (English); jmmmu, ja-vg-vqa-500 (judge, ROUGE-L), mecha-ja, jdocqa.
# Ties within tasks (ranked by their mean rank), none between distances.
SCORES = {
    "m1": (0.50, 0.61, 0.40, 3.0, 30.0, 0.55, 0.30),
    "m2": (0.70, 0.61, 0.45, 3.5, 20.0, 0.60, 0.10),
    "m3": (0.55, 0.52, 0.40, 2.5, 10.0, 0.35, 0.20),
    "m4": (0.80, 0.70, 0.62, 3.5, 40.0, 0.80, 0.40),
    "m5": (0.20, 0.33, 0.25, 1.0, 50.0, 0.15, 0.35),
    "m6": (0.35, 0.40, 0.30, 2.0, 60.0, 0.40, 0.25),
    "m7": (0.90, 0.88, 0.50, 4.5, 15.0, 0.70, 0.45),
}
METRICS = [
    ("okvqa", "substring-match"), ("ai2d", "ai2d"), ("jmmmu", "jmmmu"),
    ("ja-vg-vqa-500", "llm-as-a-judge"), ("ja-vg-vqa-500", "rougel"),
    ("mecha-ja", "mecha-ja"), ("jdocqa", "jdocqa"),
]  # fmt: skip


def write_results(result: Path) -> None:
    for model, scores in SCORES.items():
        by_task: dict[str, dict[str, Any]] = {}
        for (task, metric), score in zip(METRICS, scores, strict=True):
            by_task.setdefault(task, {})[metric] = {"overall_score": score, "details": {}}
        for task, evaluation in by_task.items():
            folder = result / task / model
            folder.mkdir(parents=True)
            (folder / "evaluation.jsonl").write_text(json.dumps(evaluation) + "\n")


def original_leaderboard(monkeypatch: pytest.MonkeyPatch) -> Any:
    """make_leaderboard.py as a module: eval_mm's metadata real, the rest of eval_mm (result
    reading, scorers), loguru, seaborn and japanize_matplotlib stand-ins; seaborn's heatmap
    notes the correlation matrix it is given."""
    checkout = require(EVALMM_SOURCE)
    package = types.ModuleType("eval_mm")
    package.__path__ = [str(checkout / "src" / "eval_mm")]
    package.load_evaluation = None  # type: ignore[attr-defined]  # reads result folders
    loguru = types.ModuleType("loguru")
    loguru.logger = types.SimpleNamespace(info=print, warning=print)  # type: ignore[attr-defined]
    seaborn = types.ModuleType("seaborn")
    seen: list[Any] = []

    def heatmap(corr: Any, ax: Any, **_: Any) -> None:
        seen.append(corr)
        ax.set_xticks(range(len(corr.columns)), list(corr.columns))
        ax.set_yticks(range(len(corr.index)), list(corr.index))

    seaborn.heatmap = heatmap  # type: ignore[attr-defined]
    stand_ins = {
        "eval_mm": package,
        "eval_mm.metrics": types.ModuleType("eval_mm.metrics"),
        "loguru": loguru,
        "seaborn": seaborn,
        "japanize_matplotlib": types.ModuleType("japanize_matplotlib"),
    }
    for name, module in stand_ins.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.delitem(sys.modules, "eval_mm.metadata", raising=False)
    path = checkout / "scripts" / "make_leaderboard.py"
    spec = importlib.util.spec_from_file_location("make_leaderboard", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.seen_heatmaps = seen
    return module


# Its titles are Japanese, and japanize_matplotlib's font is not here.
@pytest.mark.filterwarnings("ignore:Glyph .* missing from font:UserWarning")
def test_correlation_linkage_and_leaf_order_are_make_leaderboards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import scipy.cluster.hierarchy as hierarchy

    from pfgen_fast.evalmm import leaderboard, task_correlation
    from pfgen_fast.evalmm.task_correlation import (
        correlation_matrix,
        draw_dendrogram,
        task_linkage,
        task_scores,
    )

    write_results(tmp_path / "result")
    results, problems = leaderboard.find_evaluations(tmp_path / "result")
    assert not problems
    board = leaderboard.make_board(results)
    names, english, scores = task_scores(board)
    matrix = correlation_matrix(scores)
    tree = task_linkage(matrix)
    _, axes = plt.subplots()
    draw_dendrogram(axes, names, tree, [not e for e in english], "bold")
    leaves = [label.get_text() for label in axes.get_xticklabels()]
    plt.close("all")

    # The original's table: the board's columns (display names, rounded), the one column per
    # task it plots given as its TeX columns.
    offset = len(board.columns) - len(board.score_columns)
    table = pd.DataFrame(
        {column: [row[offset + i] for row in board.values] for i, column in
         enumerate(c.display for c in board.score_columns)},
        index=pd.Index(board.models, name="Model"),
    )  # fmt: skip
    plotted = [next(c for c in table.columns if c.split("/")[0] == name) for name in names]
    original = original_leaderboard(monkeypatch)
    original.plot_correlation(table.copy(), str(tmp_path / "correlation.png"), plotted)
    linkages, orders = [], []

    def linkage(*args: Any, **kwargs: Any) -> Any:
        linkages.append(real_linkage(*args, **kwargs))
        return linkages[-1]

    def dendrogram(*args: Any, **kwargs: Any) -> Any:
        drawn = real_dendrogram(*args, **kwargs)
        orders.append(drawn["ivl"])
        return drawn

    real_linkage, real_dendrogram = hierarchy.linkage, hierarchy.dendrogram
    monkeypatch.setattr(hierarchy, "linkage", linkage)
    monkeypatch.setattr(hierarchy, "dendrogram", dendrogram)
    original.plot_task_clustering(table.copy(), str(tmp_path / "clustering.png"), plotted)

    metadata = sys.modules["eval_mm.metadata"]
    assert list(task_correlation.METADATA_ORDER) == list(metadata.TASKS)
    corr = original.seen_heatmaps[0]
    assert list(corr.columns) == names
    for i, first in enumerate(names):
        for j, second in enumerate(names):
            assert matrix[i][j] == pytest.approx(corr.loc[first, second], abs=1e-12)
    assert len({round(v, 9) for row in matrix for v in row if v is not None}) > len(names) // 2
    np.testing.assert_allclose(tree, linkages[0], rtol=0, atol=1e-12)
    assert orders == [leaves, leaves]  # the top and the left dendrogram


def test_plot_prints_no_font_warning(tmp_path: Path) -> None:
    write_results(tmp_path / "result")
    figure = tmp_path / "tasks.png"
    # A process of its own: matplotlib looks a font up, and warns, once per process.
    args = ["mm", "leaderboard", tmp_path / "result", "--format", "csv", "--plot", figure]
    result = run_cli(*args, process=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr == f"wrote {figure}\n"
    assert figure.stat().st_size > 10_000
