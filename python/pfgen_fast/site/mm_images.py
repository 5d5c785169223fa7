"""The images of llm-jp-eval-mm items, from a task's dataset given as `--mm-data TASK=DIR`: a
local folder in the Hugging Face Hub layout (parquet files) whose rows have an id column and
image columns (`{"bytes", "path"}` structs, or lists of them). Each image is written once under
OUT/images/, as the bytes the dataset holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from pfgen_fast.common.errors import PfgenError

ID_COLUMNS = ("question_id", "id", "q_id")
# The first bytes of the image formats browsers show, and their file extensions.
SIGNATURES = (
    (b"\x89PNG", "png"),
    (b"\xff\xd8", "jpg"),
    (b"GIF8", "gif"),
    (b"RIFF", "webp"),
    (b"BM", "bmp"),
)


def extension(data: bytes) -> str | None:
    return next((ext for magic, ext in SIGNATURES if data.startswith(magic)), None)


def image_bytes(value: Any) -> list[bytes]:
    """The images of one cell: a struct with `bytes`, a list of them, or raw bytes."""
    if isinstance(value, (bytes, bytearray)):
        return [bytes(value)]
    if isinstance(value, dict):
        data = value.get("bytes")
        return [bytes(data)] if isinstance(data, (bytes, bytearray)) else []
    if isinstance(value, list):
        return [data for element in value for data in image_bytes(element)]
    return []


def image_columns(schema: pl.Schema) -> list[str]:
    """Columns that can hold images: binary, structs with a `bytes` field, lists of those."""

    def holds_images(dtype: pl.DataType) -> bool:
        if dtype == pl.Binary:
            return True
        if isinstance(dtype, pl.Struct):
            return any(f.name == "bytes" and f.dtype == pl.Binary for f in dtype.fields)
        if isinstance(dtype, (pl.List, pl.Array)):
            return holds_images(dtype.inner)  # type: ignore[arg-type]
        return False

    return [name for name, dtype in schema.items() if holds_images(dtype)]


class TaskImages:
    """A task's dataset, read on first use: question id -> the images' paths below OUT."""

    def __init__(self, task: str, folder: Path, out: Path, slot: int) -> None:
        self.task = task
        self.folder = folder
        self.out = out
        self.slot = slot  # the task's folder number under OUT/images/mm/
        self.paths: dict[str, list[str]] | None = None

    def images(self, question_id: Any) -> list[str]:
        if self.paths is None:
            self.paths = self.write_all()
        return self.paths.get(str(question_id), [])

    def write_all(self) -> dict[str, list[str]]:
        files = sorted(self.folder.rglob("*.parquet")) if self.folder.is_dir() else []
        if not files:
            raise PfgenError(f"--mm-data {self.task}={self.folder}: no parquet files found")
        paths: dict[str, list[str]] = {}
        directory = self.out / "images" / "mm" / str(self.slot)
        directory.mkdir(parents=True, exist_ok=True)
        written = 0
        for file in files:
            try:
                frame = pl.read_parquet(file)
            except (OSError, pl.exceptions.PolarsError) as error:
                raise PfgenError(f"{file}: cannot read as parquet: {error}") from None
            id_column = next((c for c in ID_COLUMNS if c in frame.columns), None)
            if id_column is None:
                raise PfgenError(f"{file}: no id column (looked for {', '.join(ID_COLUMNS)})")
            columns = image_columns(frame.schema)
            for row in frame.select([id_column, *columns]).iter_rows(named=True):
                key = str(row[id_column])
                for column in columns:
                    for data in image_bytes(row[column]):
                        ext = extension(data)
                        if ext is None:
                            continue
                        written += 1
                        name = f"{written}.{ext}"
                        (directory / name).write_bytes(data)
                        paths.setdefault(key, []).append(f"images/mm/{self.slot}/{name}")
        return paths
