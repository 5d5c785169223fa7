"""Figures as every room draws them: matplotlib (the `[plot]` extra) without a display, and
each figure written as PNG and SVG files, atomically."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import write_atomically


def pyplot() -> Any:
    """`matplotlib.pyplot` on the file-only backend; a PfgenError saying how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise PfgenError(
            "plotting needs matplotlib: pip install 'pfgen_fast[plot]' (or matplotlib)"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(
    figure: Any, out_dir: Path, name: str, extensions: Sequence[str] = ("png", "svg")
) -> list[Path]:
    """Writes `out_dir/name.EXT` for each extension (each through a temporary file)."""
    written = []
    for extension in extensions:
        path = out_dir / f"{name}.{extension}"
        write_figure(figure, path, extension)
        written.append(path)
    return written


def write_figure(figure: Any, path: Path, file_format: str) -> None:
    """Writes one figure to `path` in `file_format` (png, svg, ...) through a temporary file."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format=file_format, dpi=150, bbox_inches="tight")
    write_atomically(path, buffer.getvalue())
