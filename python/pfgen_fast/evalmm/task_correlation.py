"""make_leaderboard.py's figures of a leaderboard: the Spearman correlation between tasks over
the models (lower triangle, English tasks first, Japanese ones in red, a dotted line between
them) and the tasks' hierarchical clustering (average linkage on 1 − correlation) as a
dendrogram, side by side in one figure. One score column per task: its first metric other
than ROUGE-L. Correlations use the models scored on both tasks; a pair with fewer than two
such models, or a task whose scores are all equal, has none (blank, and distance 1 in the
clustering). The average linkage is written here (scipy is not a dependency): at most a few
dozen tasks."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.figures import pyplot, write_figure
from pfgen_fast.evalmm.leaderboard import Board

# make_leaderboard.py's colour threshold of dendrogram links.
CLUSTER_THRESHOLD = 0.7
# File names of common fonts with Japanese glyphs (IPA, IPAex, Noto CJK, Takao, VL).
JAPANESE_FONT_FILES = ("ipag", "ipaexg", "notosanscjk", "notosansjp", "takaogothic", "vl-gothic")
COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def task_scores(board: Board) -> tuple[list[str], list[bool], list[list[float | None]]]:
    """Task display names (English first), whether each is English, and each task's scores
    over the models."""
    chosen: dict[str, int] = {}
    for index, column in enumerate(board.score_columns):
        task = column.display.split("/")[0]
        if column.metric != "rougel" and task not in chosen:
            chosen[task] = index
    offset = len(board.columns) - len(board.score_columns)
    english = {column.display.split("/")[0]: column.english for column in board.score_columns}
    names = sorted(chosen, key=lambda task: not english[task])
    scores = [[row[offset + chosen[task]] for row in board.values] for task in names]
    return names, [english[task] for task in names], scores


def ranks(values: list[float]) -> list[float]:
    """Ranks from 1, ties given their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            result[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return result


def spearman(first: list[float | None], second: list[float | None]) -> float | None:
    pairs = [(a, b) for a, b in zip(first, second, strict=True) if a is not None and b is not None]
    if len(pairs) < 2:
        return None
    x = ranks([a for a, _ in pairs])
    y = ranks([b for _, b in pairs])
    mean_x, mean_y = sum(x) / len(x), sum(y) / len(y)
    covariance = sum((a - mean_x) * (b - mean_y) for a, b in zip(x, y, strict=True))
    spread = math.sqrt(sum((a - mean_x) ** 2 for a in x) * sum((b - mean_y) ** 2 for b in y))
    return None if spread == 0 else covariance / spread


@dataclass(frozen=True)
class Merge:
    """Two clusters (leaf numbers < n, merges n + i) joined at `height`."""

    left: int
    right: int
    height: float
    size: int


def average_linkage(distance: list[list[float]]) -> list[Merge]:
    """UPGMA: repeatedly join the two clusters with the least mean distance between their
    members (ties: the first pair in order of cluster number)."""
    members: dict[int, list[int]] = {i: [i] for i in range(len(distance))}
    merges: list[Merge] = []
    while len(members) > 1:
        numbers = sorted(members)
        best: tuple[float, int, int] | None = None
        for place, a in enumerate(numbers):
            for b in numbers[place + 1 :]:
                total = sum(distance[i][j] for i in members[a] for j in members[b])
                mean = total / (len(members[a]) * len(members[b]))
                if best is None or mean < best[0]:
                    best = (mean, a, b)
        assert best is not None
        height, a, b = best
        joined = members.pop(a) + members.pop(b)
        members[len(distance) + len(merges)] = joined
        merges.append(Merge(a, b, height, len(joined)))
    return merges


def draw_dendrogram(axes: object, names: list[str], merges: list[Merge], red: list[bool]) -> None:
    """Leaves left to right in the tree's order; each largest subtree joined below the
    threshold in a colour of its own, the links above it grey (as scipy's dendrogram)."""
    count = len(names)
    root = count + len(merges) - 1
    order: list[int] = []
    colour_of: dict[int, str] = {}

    def height(node: int) -> float:
        return 0.0 if node < count else merges[node - count].height

    def walk(node: int, colour: str | None) -> None:
        if colour is None and height(node) < CLUSTER_THRESHOLD and node >= count:
            colour = COLOURS[len(set(colour_of.values())) % len(COLOURS)]
        if node < count:
            order.append(node)
            return
        colour_of[node] = colour or "gray"
        walk(merges[node - count].left, colour)
        walk(merges[node - count].right, colour)

    walk(root, None)
    x_of = {leaf: float(place) for place, leaf in enumerate(order)}
    for number, merge in enumerate(merges):
        node = count + number
        left_x, right_x = x_of[merge.left], x_of[merge.right]
        axes.plot(  # type: ignore[attr-defined]
            [left_x, left_x, right_x, right_x],
            [height(merge.left), merge.height, merge.height, height(merge.right)],
            color=colour_of[node],
            linewidth=1.5,
        )
        x_of[node] = (left_x + right_x) / 2
    axes.set_xticks(range(count))  # type: ignore[attr-defined]
    labels = axes.set_xticklabels(  # type: ignore[attr-defined]
        [names[leaf] for leaf in order], rotation=45, ha="right", fontweight="bold"
    )
    for label, leaf in zip(labels, order, strict=True):
        if red[leaf]:
            label.set_color("red")
    axes.set_ylabel("distance (1 − Spearman's ρ)")  # type: ignore[attr-defined]
    axes.set_title("Tasks clustered by their correlation (average linkage)", fontweight="bold")  # type: ignore[attr-defined]


def japanese_font() -> str | None:
    """A system font with Japanese glyphs (for the titles, as the original's), registered with
    matplotlib; None when there is none (the titles then miss their glyphs)."""
    from matplotlib import font_manager

    for path in sorted(font_manager.findSystemFonts()):
        if any(part in Path(path).name.lower() for part in JAPANESE_FONT_FILES):
            font_manager.fontManager.addfont(path)
            return str(font_manager.FontProperties(fname=path).get_name())
    return None


def plot_task_correlation(board: Board, path: Path) -> None:
    """Writes the heatmap and the dendrogram to `path` (its suffix gives the format)."""
    names, english, scores = task_scores(board)
    if len(names) < 2 or len(board.models) < 2:
        raise InputError(
            f"--plot: the task correlation needs two tasks and two models (found {len(names)} "
            f"tasks, {len(board.models)} models)"
        )
    count = len(names)
    matrix = [[spearman(scores[i], scores[j]) for j in range(count)] for i in range(count)]
    for i in range(count):
        matrix[i][i] = 1.0
    distance = [[1 - (value if value is not None else 0.0) for value in row] for row in matrix]
    for i in range(count):
        distance[i][i] = 0.0
    plt = pyplot()
    font = japanese_font()
    if font is not None:
        plt.rcParams["font.family"] = [font, "sans-serif"]
    figure, (heat, tree) = plt.subplots(1, 2, figsize=(12 + count * 0.8, 6 + count * 0.35))
    shown = [
        [math.nan if j > i or value is None else value for j, value in enumerate(row)]
        for i, row in enumerate(matrix)
    ]
    image = heat.imshow(shown, cmap="RdBu_r", vmin=-1, vmax=1)
    for i in range(count):
        for j in range(i + 1):
            if matrix[i][j] is not None:
                value = matrix[i][j]
                ink = "white" if value is not None and abs(value) > 0.6 else "black"
                heat.text(
                    j,
                    i,
                    f"{value:.2f}",
                    ha="center",
                    va="center",
                    color=ink,
                    fontsize=9,
                    fontweight="bold",
                )
    heat.set_xticks(range(count))
    heat.set_yticks(range(count))
    x_labels = heat.set_xticklabels(names, rotation=45, ha="right", fontweight="bold")
    y_labels = heat.set_yticklabels(names, fontweight="bold")
    for label_x, label_y, is_english in zip(x_labels, y_labels, english, strict=True):
        if not is_english:
            label_x.set_color("red")
            label_y.set_color("red")
    english_count = sum(english)
    if 0 < english_count < count:
        heat.axvline(english_count - 0.5, color="black", linestyle=":", linewidth=1)
        heat.axhline(english_count - 0.5, color="black", linestyle=":", linewidth=1)
    heat.set_title("Spearman's ρ between tasks, over the models", fontweight="bold")
    figure.colorbar(image, ax=heat, shrink=0.8, label="Spearman's ρ")
    draw_dendrogram(tree, names, average_linkage(distance), [not e for e in english])
    figure.tight_layout()
    write_figure(figure, path, path.suffix.lstrip(".").lower())
    plt.close(figure)
