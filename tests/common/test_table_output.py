"""common.tables.print_table: piped, one tab-separated line per row with every value whole;
on a terminal of 80 columns, nothing wider and the first column folded, never cut."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console

from pfgen_fast.common.tables import print_table

cells = st.one_of(st.text(max_size=60), st.integers(), st.floats(allow_nan=False), st.none())


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.lists(cells, min_size=3, max_size=3), max_size=5))
def test_piped_output_is_one_line_per_row(rows: list[list[object]]) -> None:
    out = io.StringIO()
    print_table("title", ["a", "b", "c"], rows, console=Console(file=out))
    lines = out.getvalue().split("\n")
    assert lines[0] == "a\tb\tc" and lines[-1] == ""
    assert len(lines) == len(rows) + 2
    assert all(len(line.split("\t")) == 3 for line in lines[1:-1])


@settings(max_examples=25, deadline=None)
@given(
    names=st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz/-.", min_size=1, max_size=120),
                   min_size=1, max_size=4),
    scores=st.lists(st.floats(0, 1), min_size=4, max_size=4),
)  # fmt: skip
def test_terminal_table_fits_80_columns_and_keeps_names(
    names: list[str], scores: list[float]
) -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    rows = [[name, "a/path/" + name, *(f"{s:.4f}" for s in scores)] for name in names]
    columns = ["model", "path", "score", "fluency", "truthfulness", "helpfulness"]
    labels = ["model", "path", "score", "F", "T", "H"]
    print_table("runs", columns, rows, console=console, labels=labels, second_line=["path"])
    text = out.getvalue()
    assert max(cell_len(line) for line in text.splitlines()) <= 80
    folded = "".join(line.split()[0] for line in text.splitlines()[4:] if line.strip())
    for name in names:
        assert name in folded and "a/path/" + name in folded
