"""Writes the site: OUT/index.html (every leaderboard as a static table), one script per run
page under OUT/runs/ (loaded when the run is opened: scripts load from file://, fetch() of
JSON does not) and one per set of items several run pages share (loaded with the first of them),
the package's own CSS and JavaScript under OUT/assets/, and the images and figures. Everything
is made in a temporary folder beside OUT, which then takes OUT's place."""

from __future__ import annotations

import html
import os
import shutil
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import WriteError, temporary_folder
from pfgen_fast.site.model import BENCHMARKS, Board, Collected, Column, Row

ASSETS = ("site.js", "site.css")


def places(value: float) -> int:
    """Decimal places a number is shown with: 4, or 1 from 10 up (lengths)."""
    return 1 if abs(value) >= 10 else 4


def number_text(value: float, like: float | None = None) -> str:
    """A number as a cell shows it: whole numbers of integer columns as they are, others with
    the decimal places of `like` (the value a spread belongs to) or of their own size."""
    if isinstance(value, int) and like is None:
        return str(value)
    return f"{value:.{places(value if like is None else like)}f}"


def value_attribute(value: Any) -> str:
    return orjson.dumps(value).decode()


def settings_text(settings: dict[str, Any]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in settings.items() if v is not None)


def cell(column: Column, row: Row) -> str:
    value = row.cells.get(column.name)
    name = html.escape(column.name, quote=True)
    if value is None:
        return f'<td data-column="{name}"></td>'
    if not column.numeric or not isinstance(value, (int, float)) or isinstance(value, bool):
        return f'<td data-column="{name}">{html.escape(str(value))}</td>'
    text = number_text(value)
    attributes = f'data-column="{name}" data-value="{value_attribute(value)}"'
    spread = row.spreads.get(column.name)
    if column.spread == "±" and isinstance(spread, (int, float)):
        attributes += f' data-std="{value_attribute(spread)}"'
        text += f' <span class="spread">± {number_text(spread, value)}</span>'
    elif column.spread == "CI" and isinstance(spread, list) and len(spread) == 2:
        low, high = spread
        attributes += f' data-low="{value_attribute(low)}" data-high="{value_attribute(high)}"'
        text += (
            f' <span class="spread">[{number_text(low, value)}, {number_text(high, value)}]</span>'
        )
    return f'<td class="number" {attributes}>{text}</td>'


def count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def header_cell(board: Board, column: Column) -> str:
    attributes = f'data-column="{html.escape(column.name, quote=True)}"'
    if column.spread:
        attributes += f' data-spread="{column.spread}"'
    if column.numeric:
        attributes += ' class="number"'
    if column.name == board.sort:
        attributes += f' aria-sort="{board.sorted}"'
    return f"<th {attributes}>{html.escape(column.name)}</th>"


def board_html(board: Board) -> str:
    key = html.escape(board.key, quote=True)
    headers = "".join(header_cell(board, c) for c in board.columns)
    choosers = "".join(
        f'<label><input type="checkbox" checked data-toggle="{html.escape(c.name, quote=True)}">'
        f" {html.escape(c.name)}</label>"
        for c in board.columns
    )
    rows = []
    for row in board.rows:
        drill = (
            f'<button type="button" data-drill="{html.escape(row.page, quote=True)}">open</button>'
            if row.page
            else ""
        )
        rows.append(
            f'<tr data-run="{html.escape(row.run, quote=True)}" '
            f'title="{html.escape(settings_text(row.settings), quote=True)}">'
            f'<td class="run">{drill} <span class="run-name">{html.escape(row.run)}</span></td>'
            + "".join(cell(c, row) for c in board.columns)
            + "</tr>"
        )
    return (
        f'<div class="board" data-board="{key}">'
        f"<h3>{html.escape(board.title)} <small>{count(len(board.rows), 'row')}</small></h3>"
        '<div class="toolbar">'
        '<input type="search" class="filter" placeholder="filter by name" aria-label="filter">'
        f'<details class="chooser"><summary>columns</summary>{choosers}</details>'
        '<button type="button" data-download="csv">CSV</button>'
        '<button type="button" data-download="json">JSON</button>'
        "</div>"
        f'<div class="scroll"><table data-leaderboard="{key}"><thead><tr>'
        f'<th class="run">run</th>{headers}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        "</div>"
    )


def index_html(title: str, collected: Collected) -> str:
    benches = [b for b in BENCHMARKS if any(x.key.split("-")[0] == b for x in collected.boards)]
    tabs = "".join(
        f'<button type="button" data-show="{b}">{html.escape(BENCHMARKS[b])}</button>'
        for b in benches
    )
    sections = []
    for bench in benches:
        parts = [board_html(x) for x in collected.boards if x.key.split("-")[0] == bench]
        notes = collected.notes.get(bench, [])
        parts.extend(f'<p class="note">{html.escape(n)}</p>' for n in notes)
        if bench == "pfgen" and collected.figures:
            parts.append(
                '<h3>Figures</h3><div class="figures">'
                + "".join(
                    f'<figure><img src="{html.escape(f, quote=True)}" alt="{html.escape(f)}"'
                    f' class="zoomable"><figcaption>{html.escape(Path(f).stem)}</figcaption>'
                    "</figure>"
                    for f in collected.figures
                )
                + "</div>"
            )
        sections.append(
            f'<section class="bench" data-bench="{bench}"><h2>{html.escape(BENCHMARKS[bench])}'
            f"</h2>{''.join(parts)}</section>"
        )
    if not benches:
        sections.append('<p class="note">No results were found in the inputs.</p>')
    template = resources.files("pfgen_fast.site").joinpath("assets/index.html").read_text("utf-8")
    return (
        template.replace("{{title}}", html.escape(title))
        .replace("{{tabs}}", tabs)
        .replace("{{sections}}", "".join(sections))
    )


def page_script(loaded: str, document: dict[str, Any]) -> bytes:
    """A run page or shared items as a script that hands its data to the site's function
    `loaded` (UTF-8, nothing escaped to \\uXXXX; `</` is written `<\\/` so the text can never
    close a script element)."""
    data = orjson.dumps(document).replace(b"</", b"<\\/")
    return b"window." + loaded.encode() + b"(" + data + b");\n"


def write_site(
    out: Path,
    title: str,
    fill: Callable[[Path], Collected],
) -> Collected:
    """Makes the site in a temporary folder beside OUT (`fill` reads the inputs into it, writing
    images and figures there), then puts it in OUT's place. OUT must be new, empty, or a site
    written before (an index.html in it)."""
    out = out.absolute()
    if out.exists() and (
        not out.is_dir() or (any(out.iterdir()) and not (out / "index.html").is_file())
    ):
        raise PfgenError(f"{out}: exists and is not a site written before; give a new folder")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise WriteError.of(out, error) from None
    with temporary_folder(f".{out.name}.site-", out.parent) as work:
        collected = fill(work)
        (work / "runs").mkdir(exist_ok=True)
        for page in collected.pages:
            script = page_script("siteRunLoaded", page.document())
            (work / "runs" / f"{page.id}.js").write_bytes(script)
        for shared in collected.shared:
            script = page_script("siteSharedLoaded", shared.document())
            (work / "runs" / f"{shared.id}.js").write_bytes(script)
        (work / "assets").mkdir()
        for name in ASSETS:
            data = resources.files("pfgen_fast.site").joinpath(f"assets/{name}").read_bytes()
            (work / "assets" / name).write_bytes(data)
        (work / "index.html").write_text(index_html(title, collected), encoding="utf-8")
        os.chmod(work, 0o755)
        replace_folder(work, out)
    return collected


def replace_folder(new: Path, out: Path) -> None:
    """Puts `new` in OUT's place: the old site moves aside first, and is removed after."""
    old = out.with_name(f".{out.name}.site-{os.getpid()}-old")
    try:
        if out.exists():
            os.replace(out, old)
        os.replace(new, out)
    except OSError as error:
        if old.exists() and not out.exists():
            os.replace(old, out)
        raise WriteError.of(out, error) from None
    shutil.rmtree(old, ignore_errors=True)
