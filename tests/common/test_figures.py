"""common.figures: matplotlib without a display, each figure written as PNG and SVG."""

from __future__ import annotations

from pathlib import Path

from pfgen_fast.common.figures import pyplot, save_figure


def test_a_figure_is_written_in_each_format(tmp_path: Path) -> None:
    plt = pyplot()
    figure, axes = plt.subplots()
    axes.plot([0, 1], [1, 0])
    written = save_figure(figure, tmp_path, "line")
    plt.close(figure)
    assert written == [tmp_path / "line.png", tmp_path / "line.svg"]
    assert written[0].read_bytes().startswith(b"\x89PNG")
    assert b"<svg" in written[1].read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["line.png", "line.svg"]  # no temporaries
