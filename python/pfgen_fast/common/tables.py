"""Tables as users see them: rich tables on a terminal (names folded, never cut), tab-separated
text when the output is piped (full values, one line per row), and CSV, Parquet or JSON files
through polars."""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.console import Console

from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.common.files import write_atomically

EXPORT_FORMATS = ("csv", "parquet", "json")


def cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


# Tabs and line breaks inside a value, as spaces in tab-separated output (one line per row).
ONE_LINE = str.maketrans("\t\n\r", "   ")
# A cell that reads as a number (or its absence): right-aligned on a terminal.
NUMBER = re.compile(r"[-+]?[0-9][0-9,.]*(e[-+]?[0-9]+)?%?|nan|inf|n/a|")


def print_table(
    title: str | None,
    columns: list[str],
    rows: list[list[Any]],
    *,
    console: Console | None = None,
    labels: Sequence[str] | None = None,
    second_line: Sequence[str] = (),
    caption: str | None = None,
) -> None:
    """A rich table when the console is a terminal, else a header line (`columns`) and one line
    per row, tab-separated, every value whole. On a terminal the columns are headed by `labels`
    (short names, explained in `caption`, default `columns`), the `second_line` columns are
    shown below the first column's value instead of in columns of their own, the first column
    folds instead of being cut, and the other columns keep their header and values whole on
    one line: when they do not all fit the width, they are shown in several tables one under
    the other, each led by the first column. Numbers are shown as given (format them
    before)."""
    console = console or Console()
    if not console.is_terminal:
        out = console.file if console.file is not None else sys.stdout
        lines = ["\t".join(columns)]
        lines += ["\t".join(cell_text(value).translate(ONE_LINE) for value in row) for row in rows]
        out.write("\n".join(lines) + "\n")
        out.flush()
        return
    below = [columns.index(name) for name in second_line]
    shown = [index for index in range(len(columns)) if index not in below]
    headers = list(labels) if labels is not None else columns
    texts = [[cell_text(value) for value in row] for row in rows]
    key, others = shown[0], shown[1:]
    widths = {
        index: max([cell_len(row[index]) for row in texts] + [cell_len(headers[index])])
        for index in shown
    }
    whole = sum(widths[index] + COLUMN_GAP for index in shown)
    key_width = widths[key]
    if whole > console.width:  # folding is needed: the first column gives up to 2/3 of it
        key_width = min(widths[key], max(KEY_MIN_WIDTH, console.width // 3))
    panels = split_columns(others, widths, console.width - key_width - COLUMN_GAP)
    for number, panel in enumerate(panels, start=1):
        shown_title = title
        if title is not None and len(panels) > 1:
            shown_title = f"{title} ({number}/{len(panels)})"
        last = number == len(panels)
        console.print(
            panel_table(
                shown_title,
                caption if last else None,
                texts,
                headers,
                [key, *panel],
                below,
                key_width,
                widths,
            )
        )


# The first column's narrowest width, and the room a column takes beside its width.
KEY_MIN_WIDTH = 12
COLUMN_GAP = 2


def split_columns(indexes: list[int], widths: dict[int, int], room: int) -> list[list[int]]:
    """The columns in order, in groups each fitting `room` (a column wider than `room` alone);
    one empty group when there are no columns."""
    panels: list[list[int]] = [[]]
    used = 0
    for index in indexes:
        needed = widths[index] + COLUMN_GAP
        if panels[-1] and used + needed > room:
            panels.append([])
            used = 0
        panels[-1].append(index)
        used += needed
    return panels


def panel_table(
    title: str | None,
    caption: str | None,
    texts: list[list[str]],
    headers: list[str],
    indexes: list[int],
    below: list[int],
    key_width: int,
    widths: dict[int, int],
) -> Any:
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    table = Table(
        title=title, caption=caption, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True
    )
    key, others = indexes[0], indexes[1:]
    table.add_column(headers[key], overflow="fold", min_width=key_width, max_width=key_width)
    for index in others:
        numbers = all(NUMBER.fullmatch(row[index]) for row in texts)
        table.add_column(
            headers[index],
            justify="right" if numbers else "left",
            overflow="fold",
            min_width=widths[index],
        )
    for row in texts:
        cells = [escape(row[index]) for index in indexes]
        extra = "  ".join(row[index] for index in below if row[index])
        if extra:
            cells[0] += f"\n[dim]{escape(extra)}[/dim]"
        table.add_row(*cells)
    return table


def table_bytes(columns: list[str], rows: list[list[Any]], file_format: str) -> bytes:
    """The table as `csv`, `parquet` or `json` (a list of row objects)."""
    import polars as pl

    frame = pl.DataFrame(rows, schema=columns, orient="row")
    if file_format == "csv":
        return frame.write_csv().encode()
    if file_format == "json":
        return frame.write_json().encode()
    if file_format == "parquet":
        buffer = io.BytesIO()
        frame.write_parquet(buffer)
        return buffer.getvalue()
    raise PfgenError(f"unknown table format {file_format!r} (one of {', '.join(EXPORT_FORMATS)})")


def write_table(path: Path, columns: list[str], rows: list[list[Any]]) -> None:
    """Writes the table in the format its extension names (.csv, .parquet, .json)."""
    file_format = path.suffix.lstrip(".").lower()
    if file_format not in EXPORT_FORMATS:
        raise InputError(f"{path}: unknown table format (use .csv, .parquet or .json)")
    write_atomically(path, table_bytes(columns, rows, file_format))
