"""Rows of llm-jp-eval-mm's datasets, read without decoding images: from the Hugging Face Hub
through `datasets` at a pinned revision, or from a local copy of a dataset repository (the
folder `huggingface-cli download --repo-type dataset ID --local-dir DIR` writes: parquet files
and a README.md whose YAML front matter lists configs and splits), or from one parquet file.

A row is a dict of the requested columns as Arrow gives them: image columns stay
`{"bytes": ..., "path": ...}` dicts (or lists of them), decoded later only when asked."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import httpx

from pfgen_fast.common.errors import DataError
from pfgen_fast.evalmm.images import first_line

REVISIONS = Path(__file__).resolve().parents[2] / "reference_data" / "llm-jp-eval-mm-datasets.json"
BATCH_ROWS = 64
README = "README.md"
# Where `huggingface-cli download --local-dir` keeps one record per file, the commit it came
# from on the record's first line; and what a Hub commit looks like.
DOWNLOAD_RECORDS = Path(".cache") / "huggingface" / "download"
COMMIT = re.compile(r"[0-9a-f]{40}")
# The Hub's address when `HF_ENDPOINT` names none, and how long one request to it may wait (the
# Hub library's own wait for a file's metadata).
DEFAULT_HUB_ENDPOINT = "https://huggingface.co"
HUB_PROBE_SECONDS = 10.0
# Hub datasets already said to be unpinned in this process (said once each).
UNPINNED_NOTED: set[str] = set()


@cache
def pinned_revisions() -> dict[str, Any]:
    return dict(json.loads(REVISIONS.read_text(encoding="utf-8"))["datasets"])


def pinned_revision(dataset: str) -> str | None:
    """The revision pinned for a Hub dataset id in reference_data, None when unpinned."""
    entry = pinned_revisions().get(dataset)
    return None if entry is None else entry["revision"]


class Source(Protocol):
    """Where one task's dataset is read from."""

    def config_names(self) -> list[str]: ...

    def rows(
        self, config: str | None, split: str, columns: Sequence[str], optional: Sequence[str] = ()
    ) -> Iterator[dict[str, Any]]:
        """The split's rows in dataset order with `columns` (all required) and those of
        `optional` the dataset has."""
        ...


def hub_hint(task: str, dataset: str) -> str:
    return (
        f"pass a local copy with --data {task}=DIR "
        f"(huggingface-cli download --repo-type dataset {dataset} --local-dir DIR)"
    )


def hub_out_of_reach() -> str | None:
    """Why the Hub cannot be reached (one request to its address, through any proxy the
    environment names), or None when it answers."""
    endpoint = os.environ.get("HF_ENDPOINT") or DEFAULT_HUB_ENDPOINT
    try:
        httpx.head(endpoint, timeout=HUB_PROBE_SECONDS)
    except httpx.TransportError as error:
        return f"{endpoint} cannot be reached: {first_line(error)}"
    return None


@cache
def datasets_library() -> tuple[Any, str | None]:
    """The `datasets` package, and why it runs offline (None: it asks the Hub).

    Imported first while the Hub cannot be reached (and `HF_HUB_OFFLINE` is not set either
    way), it is imported with `HF_HUB_OFFLINE=1`, which both libraries read once, on import:
    datasets in the cache load from it, the others fail at once instead of after the Hub
    library's retries. The variable is not left set for other programs. The libraries'
    warnings are silenced: a failure is one line of ours."""
    if importlib.util.find_spec("datasets") is None:  # not installed: no request to the Hub
        raise ImportError("datasets")
    imported = {"datasets", "huggingface_hub"} & set(sys.modules)
    offline = None
    if "HF_HUB_OFFLINE" not in os.environ and not imported:
        offline = hub_out_of_reach()
    if offline is not None:
        os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        import datasets  # type: ignore[import-untyped]
        import huggingface_hub
    finally:
        if offline is not None:
            del os.environ["HF_HUB_OFFLINE"]
    for library in (datasets, huggingface_hub):
        logging.getLogger(library.__name__).setLevel(logging.ERROR)
    return datasets, offline


def import_datasets(task: str, dataset: str) -> Any:
    try:
        return datasets_library()[0]
    except ImportError:
        raise DataError(
            f"{task}: reading {dataset} from the Hub needs the datasets package "
            f"(pip install 'pfgen_fast[mm]'), or " + hub_hint(task, dataset)
        ) from None


@dataclass
class HubSource:
    """A Hub dataset through `datasets`, at `revision` (None: the latest, said once)."""

    task: str
    dataset: str
    revision: str | None

    def __post_init__(self) -> None:
        if self.revision is None and self.dataset not in UNPINNED_NOTED:
            UNPINNED_NOTED.add(self.dataset)
            print(f"note: {self.dataset} is unpinned: reading its latest revision", file=sys.stderr)

    def unreachable(self, error: BaseException) -> DataError:
        reason = datasets_library()[1]
        if reason is None:
            why = first_line(error)
        else:
            why = f"{reason}, and the dataset is not in the Hugging Face cache"
        return DataError(
            f"{self.task}: cannot load {self.dataset} from the Hub ({why}); "
            + hub_hint(self.task, self.dataset)
        )

    def config_names(self) -> list[str]:
        datasets = import_datasets(self.task, self.dataset)
        try:
            return list(datasets.get_dataset_config_names(self.dataset, revision=self.revision))
        except Exception as error:  # any failure of the Hub or the cache: one line
            raise self.unreachable(error) from None

    def rows(
        self, config: str | None, split: str, columns: Sequence[str], optional: Sequence[str] = ()
    ) -> Iterator[dict[str, Any]]:
        datasets = import_datasets(self.task, self.dataset)
        try:
            loaded = datasets.load_dataset(
                self.dataset, name=config, split=split, revision=self.revision
            )
        except Exception as error:  # any failure of the Hub or the cache: one line
            raise self.unreachable(error) from None
        where = f"{self.dataset} ({config or 'default'}, {split})"
        names = select_columns(where, loaded.column_names, columns, optional)
        table = loaded.select_columns(names).with_format("arrow")
        for batch in table.iter(batch_size=BATCH_ROWS):
            yield from batch.to_pylist()


def select_columns(
    where: str, present: Sequence[str], columns: Sequence[str], optional: Sequence[str]
) -> list[str]:
    for column in columns:
        if column not in present:
            raise DataError(f"{where}: no column {column!r} (columns: {', '.join(present)})")
    return [*columns, *(column for column in optional if column in present)]


def local_revision(path: Path) -> str | None:
    """The Hub commit a local copy of a dataset says it is: the folder's name in the Hub
    cache's layout (`snapshots/<commit>/`), else the one commit all the download records of
    `huggingface-cli download --local-dir` name; None when the copy says nothing (or its
    records disagree)."""
    folder = path.absolute()
    if folder.parent.name == "snapshots" and COMMIT.fullmatch(folder.name):
        return folder.name
    commits = set()
    for record in sorted((folder / DOWNLOAD_RECORDS).rglob("*.metadata")):
        try:
            lines = record.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return None
        commits.add(lines[0].strip() if lines else "")
    if len(commits) == 1 and COMMIT.fullmatch(next(iter(commits))):
        return commits.pop()
    return None


@dataclass(frozen=True)
class ConfigFiles:
    """One config of a local dataset repository: split name → file patterns."""

    name: str
    splits: dict[str, list[str]]
    default: bool = False


def front_matter(readme: Path) -> dict[str, Any]:
    """The YAML between the first two `---` lines of a dataset card ({} without one)."""
    import yaml  # type: ignore[import-untyped]

    text = readme.read_text(encoding="utf-8")
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    for end, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            try:
                data = yaml.safe_load("\n".join(lines[1:end]))
            except yaml.YAMLError as error:
                raise DataError(
                    f"{readme}: front matter is not YAML ({first_line(error)})"
                ) from None
            return data if isinstance(data, dict) else {}
    raise DataError(f"{readme}: front matter not closed by a `---` line")


def split_patterns(readme: Path, name: str, data_files: Any) -> dict[str, list[str]]:
    """A config's `data_files`: a pattern or list of them (split "train"), or a list of
    `{split, path}` with `path` a pattern or a list."""
    if isinstance(data_files, str):
        return {"train": [data_files]}
    if isinstance(data_files, list) and all(isinstance(entry, str) for entry in data_files):
        return {"train": list(data_files)}
    if isinstance(data_files, list):
        splits: dict[str, list[str]] = {}
        for entry in data_files:
            if not isinstance(entry, dict) or "split" not in entry or "path" not in entry:
                raise DataError(f"{readme}: config {name!r}: data_files entry without split/path")
            path = entry["path"]
            splits.setdefault(str(entry["split"]), []).extend(
                [path] if isinstance(path, str) else [str(p) for p in path]
            )
        return splits
    if isinstance(data_files, dict):
        return {
            str(split): [pattern] if isinstance(pattern, str) else list(pattern)
            for split, pattern in data_files.items()
        }
    raise DataError(f"{readme}: config {name!r}: data_files of an unknown form")


def inferred_splits(root: Path, under: str = "") -> dict[str, list[str]]:
    """Splits of the parquet files below `root / under` (paths relative to `root`), as
    `datasets` names them without data_files: by the file's folder (`test/…`) or, directly in
    the folder or its `data/`, by the start of the file's name (`test-00000-of-00001`)."""
    splits: dict[str, list[str]] = {}
    base = root / under
    for file in sorted(base.rglob("*.parquet")):
        relative = file.relative_to(base)
        if any(part.startswith(".") for part in relative.parts):
            continue
        parent = relative.parent.name
        if parent and parent != "data":
            split = parent
        else:
            split = re.split(r"[-._ 0-9]", file.name, maxsplit=1)[0]
        splits.setdefault(split, []).append(file.relative_to(root).as_posix())
    return splits


@dataclass
class LocalSource:
    """A local copy of a dataset repository, read with pyarrow, no network."""

    folder: Path

    def configs(self) -> list[ConfigFiles]:
        if not self.folder.is_dir():
            raise DataError(f"{self.folder}: not a folder (a local copy of the dataset repository)")
        readme = self.folder / README
        configs = front_matter(readme).get("configs") if readme.is_file() else None
        if not configs:
            return [ConfigFiles("default", inferred_splits(self.folder), default=True)]
        result = []
        for entry in configs:
            if not isinstance(entry, dict):
                raise DataError(f"{readme}: configs entry is not a mapping")
            name = str(entry.get("config_name", "default"))
            if "data_files" in entry:
                splits = split_patterns(readme, name, entry["data_files"])
            else:
                splits = inferred_splits(self.folder, str(entry.get("data_dir", "")))
            result.append(ConfigFiles(name, splits, bool(entry.get("default", False))))
        return result

    def config_names(self) -> list[str]:
        return [config.name for config in self.configs()]

    def where(self) -> str:
        """What a message about the copy's configs names: its card, or the folder whose
        parquet files' names gave the splits when it has no card."""
        readme = self.folder / README
        if readme.is_file():
            return str(readme)
        return f"{self.folder} (no {README}: splits from the names of its parquet files)"

    def config(self, name: str | None) -> ConfigFiles:
        configs = self.configs()
        where = self.where()
        names = ", ".join(config.name for config in configs)
        if name is None:
            chosen = [c for c in configs if c.default or c.name == "default"] or (
                configs if len(configs) == 1 else []
            )
            if not chosen:
                raise DataError(f"{where}: several configs ({names}) and no default")
            return chosen[0]
        for config in configs:
            if config.name == name:
                return config
        raise DataError(f"{where}: no config {name!r} (configs: {names})")

    def files(self, config: ConfigFiles, split: str) -> list[Path]:
        where = self.where()
        patterns = config.splits.get(split)
        if patterns is None:
            found = ", ".join(config.splits) or "none"
            raise DataError(f"{where}: config {config.name!r} has no split {split!r} ({found})")
        files: dict[Path, None] = {}
        for pattern in patterns:
            files.update(dict.fromkeys(sorted(p for p in self.folder.glob(pattern) if p.is_file())))
        parquet = [path for path in files if path.suffix == ".parquet"]
        if not parquet:
            raise DataError(
                f"{where}: config {config.name!r}, split {split!r}: no parquet file matches "
                f"{', '.join(patterns)}"
            )
        return parquet

    def rows(
        self, config: str | None, split: str, columns: Sequence[str], optional: Sequence[str] = ()
    ) -> Iterator[dict[str, Any]]:
        for file in self.files(self.config(config), split):
            yield from parquet_rows(file, columns, optional)


@dataclass
class ParquetSource:
    """One parquet file holding a whole split (JIC-VQA's prepared file)."""

    file: Path

    def config_names(self) -> list[str]:
        return ["default"]

    def rows(
        self, config: str | None, split: str, columns: Sequence[str], optional: Sequence[str] = ()
    ) -> Iterator[dict[str, Any]]:
        yield from parquet_rows(self.file, columns, optional)


def parquet_rows(
    file: Path, columns: Sequence[str], optional: Sequence[str]
) -> Iterator[dict[str, Any]]:
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    try:
        reader = pq.ParquetFile(file)
    except (OSError, ValueError) as error:
        raise DataError(f"{file}: not a readable parquet file ({first_line(error)})") from None
    names = select_columns(str(file), reader.schema_arrow.names, columns, optional)
    # One row group at a time (iter_batches reads ahead far more than a batch).
    with reader:
        for group in range(reader.metadata.num_row_groups):
            try:
                table = reader.read_row_group(group, columns=names)
            except (OSError, ValueError) as error:  # a damaged row group
                raise DataError(
                    f"{file}: row group {group + 1} of {reader.metadata.num_row_groups} cannot "
                    f"be read ({first_line(error)})"
                ) from None
            for batch in table.to_batches(max_chunksize=BATCH_ROWS):
                yield from batch.to_pylist()
