"""Writes the site: OUT/index.html (every leaderboard as a static table), one script per run
page under OUT/runs/ (loaded when the run is opened: scripts load from file://, fetch() of
JSON does not) and one per set of items several run pages share (loaded with the first of them),
the package's own CSS and JavaScript under OUT/assets/, and the images and figures. Every file
but index.html is named with its content's digest; index.html maps each page to its file.
Everything is made in a temporary folder beside OUT, then moved into OUT (`publish`)."""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.files import WriteError, temporary_folder
from pfgen_fast.site.model import BENCHMARKS, Board, Collected, Column, Row
from pfgen_fast.site.publish import INDEX, publish, site_target

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
    """The settings on hover, one a line, true and false as on the run page."""
    return "\n".join(
        f"{k}: {str(v).lower() if isinstance(v, bool) else v}"
        for k, v in settings.items()
        if v is not None
    )


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
    elif column.spread == "of" and isinstance(spread, int):
        attributes += f' data-total="{spread}"'
        if spread != value:
            text += f'<span class="spread">/{spread}</span>'
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


def index_html(
    title: str, collected: Collected, assets: dict[str, str], scripts: dict[str, str]
) -> str:
    """The index page; `assets` and `scripts` map the stylesheet, the code and each run page's
    or shared items' id to their files."""
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
    fills = {
        "title": html.escape(title),
        "css": html.escape(assets["site.css"], quote=True),
        "js": html.escape(assets["site.js"], quote=True),
        "scripts": html.escape(orjson.dumps(scripts).decode(), quote=True),
        "tabs": tabs,
        "sections": "".join(sections),
    }
    return re.sub(r"\{\{(\w+)\}\}", lambda found: fills[found[1]], template)


def page_script(loaded: str, document: dict[str, Any]) -> bytes:
    """A run page or shared items as a script that hands its data to the site's function
    `loaded` (UTF-8, nothing escaped to \\uXXXX; `</` is written `<\\/` so the text can never
    close a script element)."""
    data = orjson.dumps(document).replace(b"</", b"<\\/")
    return b"window." + loaded.encode() + b"(" + data + b");\n"


def digest_name(stem: str, suffix: str, data: bytes) -> str:
    """A file name that carries its content's digest: a rebuild writes a changed file under a
    new name, beside the old one the old index.html still names."""
    return f"{stem}.{hashlib.sha256(data).hexdigest()[:16]}{suffix}"


def write_named(root: Path, folder: str, stem: str, suffix: str, data: bytes) -> str:
    """Writes `data` into `root`/`folder` under its digest name; the path relative to `root`."""
    name = digest_name(stem, suffix, data)
    (root / folder).mkdir(parents=True, exist_ok=True)
    (root / folder / name).write_bytes(data)
    return f"{folder}/{name}"


def write_site(
    out: Path,
    title: str,
    fill: Callable[[Path], Collected],
) -> Collected:
    """Makes the site in a temporary folder beside OUT (`fill` reads the inputs into it, writing
    images and figures there), then moves it into OUT (`publish`). OUT must be new, a site
    written before, or a folder the site's files go into without touching what it holds
    (`site_target`); a symbolic link OUT keeps pointing where it did."""
    target = site_target(out)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise WriteError.of(out, error) from None
    with temporary_folder(f".{target.name}.site-", target.parent) as work:
        collected = fill(work)
        scripts = {}
        for page in collected.pages:
            script = page_script("siteRunLoaded", page.document())
            scripts[page.id] = write_named(work, "runs", page.id, ".js", script)
        for shared in collected.shared:
            script = page_script("siteSharedLoaded", shared.document())
            scripts[shared.id] = write_named(work, "runs", shared.id, ".js", script)
        assets = {}
        for name in ASSETS:
            data = resources.files("pfgen_fast.site").joinpath(f"assets/{name}").read_bytes()
            stem, suffix = name.rsplit(".", 1)
            assets[name] = write_named(work, "assets", stem, f".{suffix}", data)
        index = index_html(title, collected, assets, scripts)
        (work / INDEX).write_text(index, encoding="utf-8")
        publish(work, target)
    return collected
