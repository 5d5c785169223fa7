"""Tables as users see them: rich tables on a terminal, tab-separated text when the output is
piped (full values, one line per row), and CSV, Parquet or JSON files through polars."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import write_atomically

EXPORT_FORMATS = ("csv", "parquet", "json")


def cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def print_table(
    title: str | None,
    columns: list[str],
    rows: list[list[Any]],
    *,
    console: Console | None = None,
) -> None:
    """A rich table when the console is a terminal, else a header line and one line per row,
    tab-separated. On a terminal the first column folds instead of being cut, so names stay
    whole at any width; numbers are shown as given (format them before)."""
    console = console or Console()
    if not console.is_terminal:
        out = console.file if console.file is not None else sys.stdout
        lines = ["\t".join(columns)]
        lines += ["\t".join(cell_text(value) for value in row) for row in rows]
        out.write("\n".join(lines) + "\n")
        out.flush()
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title)
    for index, name in enumerate(columns):
        if index == 0:
            table.add_column(name, overflow="fold", ratio=1, min_width=12)
        else:
            table.add_column(name, justify="right", no_wrap=True)
    for row in rows:
        table.add_row(*(escape(cell_text(value)) for value in row))
    console.print(table)


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
        raise PfgenError(f"{path}: unknown table format (use .csv, .parquet or .json)")
    write_atomically(path, table_bytes(columns, rows, file_format))
