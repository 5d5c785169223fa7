"""make_leaderboard.py's figures of a leaderboard: the Spearman correlation between tasks over
the models (lower triangle, English tasks first, Japanese ones in red, a dotted line between
them) and the tasks' hierarchical clustering (average linkage on 1 − correlation) as a
dendrogram, side by side in one figure, computed with scipy as the original computes them. One
score column per task: its first metric other than ROUGE-L. Correlations use the models scored
on both tasks; a pair with fewer than two such models, or a task whose scores are all equal,
has none (blank, and distance 1 in the clustering, where the original would stop)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.figures import pyplot, write_figure
from pfgen_fast.evalmm.leaderboard import Board

# make_leaderboard.py's colour threshold of dendrogram links.
CLUSTER_THRESHOLD = 0.7
# The tasks in the order of llm-jp-eval-mm's metadata.py, which make_leaderboard.py's figures
# follow (English tasks, then the others): the order of the observations the clustering is
# given, on which the leaf order of tied distances depends.
METADATA_ORDER = (
    "okvqa", "textvqa", "ai2d", "chartqa", "docvqa", "blink", "infographicvqa", "mmmu",
    "llava-bench-in-the-wild", "chartqapro", "mmmlu", "cvqa", "cc-ocr", "jic-vqa",
    "ja-multi-image-vqa", "jmmmu", "jdocqa", "ja-vlm-bench-in-the-wild", "ja-vg-vqa-500",
    "japanese-heron-bench", "mecha-ja", "jawildtext-board-vqa", "jawildtext-handwriting-ocr",
    "jawildtext-receipt-kie",
)  # fmt: skip
# File names of common fonts with Japanese glyphs (IPA, IPAex, Noto CJK, Takao, VL).
JAPANESE_FONT_FILES = ("ipag", "ipaexg", "notosanscjk", "notosansjp", "takaogothic", "vl-gothic")


def task_scores(board: Board) -> tuple[list[str], list[bool], list[list[float | None]]]:
    """Task display names (English first, each group in METADATA_ORDER, other tasks last),
    whether each is English, and each task's scores over the models."""
    chosen: dict[str, int] = {}
    for index, column in enumerate(board.score_columns):
        task = column.display.split("/")[0]
        if column.metric != "rougel" and task not in chosen:
            chosen[task] = index
    offset = len(board.columns) - len(board.score_columns)
    columns = {task: board.score_columns[index] for task, index in chosen.items()}

    def place(task: str) -> tuple[bool, int]:
        name = columns[task].task
        known = METADATA_ORDER.index(name) if name in METADATA_ORDER else len(METADATA_ORDER)
        return not columns[task].english, known

    names = sorted(chosen, key=place)
    scores = [[row[offset + chosen[task]] for row in board.values] for task in names]
    return names, [columns[task].english for task in names], scores


def spearman(first: list[float | None], second: list[float | None]) -> float | None:
    """Spearman's ρ over the models scored on both (ties ranked by their mean rank), None when
    it is undefined."""
    from scipy.stats import spearmanr  # type: ignore[import-untyped]

    pairs = [(a, b) for a, b in zip(first, second, strict=True) if a is not None and b is not None]
    if len(pairs) < 2 or len({a for a, _ in pairs}) < 2 or len({b for _, b in pairs}) < 2:
        return None
    return float(spearmanr([a for a, _ in pairs], [b for _, b in pairs]).statistic)


def correlation_matrix(scores: list[list[float | None]]) -> list[list[float | None]]:
    """Spearman's ρ of every pair of tasks (1 on the diagonal)."""
    count = len(scores)
    return [
        [1.0 if i == j else spearman(scores[i], scores[j]) for j in range(count)]
        for i in range(count)
    ]


def task_linkage(matrix: list[list[float | None]]) -> Any:
    """scipy's average linkage of the tasks on the distance 1 − ρ (1 where ρ is undefined)."""
    import numpy as np
    from scipy.cluster.hierarchy import linkage  # type: ignore[import-untyped]
    from scipy.spatial.distance import squareform  # type: ignore[import-untyped]

    distance = np.array(
        [[1 - (value if value is not None else 0.0) for value in row] for row in matrix]
    )
    np.fill_diagonal(distance, 0.0)
    return linkage(squareform(distance, checks=False), method="average")


def draw_dendrogram(axes: Any, names: list[str], tree: Any, red: list[bool], weight: str) -> None:
    """scipy's dendrogram, coloured as the original's: each largest subtree joined below the
    threshold in a colour of its own, the links above it grey."""
    from scipy.cluster.hierarchy import dendrogram

    drawn = dendrogram(
        tree,
        labels=names,
        orientation="top",
        color_threshold=CLUSTER_THRESHOLD,
        above_threshold_color="gray",
        ax=axes,
    )
    for label, leaf in zip(axes.get_xticklabels(), drawn["leaves"], strict=True):
        label.set(rotation=45, ha="right", fontweight=weight)
        if red[leaf]:
            label.set_color("red")
    axes.set_ylabel("distance (1 − Spearman's ρ)")
    axes.set_title("Tasks clustered by their correlation (average linkage)", fontweight=weight)


def text_font(texts: list[str]) -> tuple[list[str], str]:
    """The font families and the weight for a figure's text: matplotlib's own sans-serif, bold,
    when it has every character of `texts`; else, after it, a system font with Japanese
    glyphs, bold only when that font has a bold face (matplotlib would warn that it substitutes
    the regular one)."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    bold = font_manager.FontProperties(family="sans-serif", weight="bold")
    charmap = FT2Font(font_manager.findfont(bold)).get_charmap()
    if all(ord(character) in charmap for text in texts for character in text):
        return ["sans-serif"], "bold"
    for path in sorted(font_manager.findSystemFonts()):
        if any(part in Path(path).name.lower() for part in JAPANESE_FONT_FILES):
            font_manager.fontManager.addfont(path)
            name = font_manager.FontProperties(fname=path).get_name()
            return ["sans-serif", name], "bold" if has_bold_face(name) else "normal"
    return ["sans-serif"], "bold"  # no Japanese font: those glyphs are missing


def has_bold_face(family: str) -> bool:
    """Whether matplotlib knows a face of `family` of weight 600 or more."""
    from matplotlib import font_manager

    for entry in font_manager.fontManager.ttflist:
        weight = entry.weight
        numeric = weight if isinstance(weight, int) else font_manager.weight_dict.get(weight, 400)
        if entry.name == family and numeric >= 600:
            return True
    return False


def draw_heatmap(
    axes: Any, names: list[str], english: list[bool], matrix: list[list[float | None]], weight: str
) -> Any:
    """The lower triangle of ρ with its values; returns the image (for its colour bar)."""
    count = len(names)
    shown = [
        [math.nan if j > i or value is None else value for j, value in enumerate(row)]
        for i, row in enumerate(matrix)
    ]
    image = axes.imshow(shown, cmap="RdBu_r", vmin=-1, vmax=1)
    for i in range(count):
        for j in range(i + 1):
            value = matrix[i][j]
            if value is not None:
                ink = "white" if abs(value) > 0.6 else "black"
                axes.text(j, i, f"{value:.2f}", ha="center", va="center", color=ink,
                          fontsize=9, fontweight=weight)  # fmt: skip
    axes.set_xticks(range(count))
    axes.set_yticks(range(count))
    x_labels = axes.set_xticklabels(names, rotation=45, ha="right", fontweight=weight)
    y_labels = axes.set_yticklabels(names, fontweight=weight)
    for label_x, label_y, is_english in zip(x_labels, y_labels, english, strict=True):
        if not is_english:
            label_x.set_color("red")
            label_y.set_color("red")
    english_count = sum(english)
    if 0 < english_count < count:
        axes.axvline(english_count - 0.5, color="black", linestyle=":", linewidth=1)
        axes.axhline(english_count - 0.5, color="black", linestyle=":", linewidth=1)
    axes.set_title("Spearman's ρ between tasks, over the models", fontweight=weight)
    return image


def plot_task_correlation(board: Board, path: Path) -> None:
    """Writes the heatmap and the dendrogram to `path` (its suffix gives the format)."""
    names, english, scores = task_scores(board)
    if len(names) < 2 or len(board.models) < 2:
        raise InputError(
            f"--plot: the task correlation needs two tasks and two models (found {len(names)} "
            f"tasks, {len(board.models)} models)"
        )
    matrix = correlation_matrix(scores)
    plt = pyplot()
    families, weight = text_font(names)
    count = len(names)
    with plt.rc_context({"font.family": families}):
        figure, (heat, tree) = plt.subplots(1, 2, figsize=(12 + count * 0.8, 6 + count * 0.35))
        image = draw_heatmap(heat, names, english, matrix, weight)
        figure.colorbar(image, ax=heat, shrink=0.8, label="Spearman's ρ")
        draw_dendrogram(tree, names, task_linkage(matrix), [not e for e in english], weight)
        figure.tight_layout()
        write_figure(figure, path, path.suffix.lstrip(".").lower())
    plt.close(figure)
