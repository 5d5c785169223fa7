"""What the judge room writes, and how it is read back (by `judge rank` and by other rooms).
Every file of the room is written and read here.

* `judge pairwise --out DIR` writes `items.jsonl`, one pair a line (the records of
  `judge.pairwise`): `id`, `task` and `model_a`, `model_b` when the item names them,
  `question`, `reference` when given, `answer_a`, `answer_b`, `criteria` when generated, and
  for a judged pair `verdict` (`proposed`, `bs1`, `bs2`), `consistent`, `tie_broken`,
  `averages`, both `orders` (`shown_first`, `letter`, `position`, `probabilities`,
  `top_logprobs`, `alternatives`, `text`) and `labels` when the item has them; `error` when
  the judge failed;
* `judge pointwise --out DIR` writes `ratings.jsonl`, one rated answer a line (the records of
  `judge.pointwise`): `run`, `question`, `trial`, `rating`, `text` (the reply, when there is
  one), and `error` when no rating was read;
* both write `summary.json`: their measures, with `judge_model`, `settings` (`base_urls`, the
  request settings, `extra_body`), `usage` (`calls`, `cached`, `failed`, `prompt_tokens`,
  `completion_tokens`) and `tokens` (`prompt`, `completion`); and `replies.jsonl`, every raw
  reply (the shared LLM client's log);
* `judge rank --table FILE` writes the ranking (`rank`, `model`, `strength`, `low`, `high`,
  `wins`, `losses`, `ties`; no `low`, `high` without bootstrap resamples) as CSV, Parquet or
  JSON."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import polars as pl

from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.jsonl import (
    dumps_line,
    iter_json_lines,
    read_json,
    read_json_object,
    require,
)
from pfgen_fast.common.tables import write_table
from pfgen_fast.judge.leaderboard import Comparison
from pfgen_fast.judge.verdicts import LETTERS

if TYPE_CHECKING:
    from pfgen_fast.common.llm import LLMClient, LLMStats

PAIRWISE_ITEMS = "items.jsonl"
POINTWISE_RATINGS = "ratings.jsonl"
SUMMARY = "summary.json"
REPLIES = "replies.jsonl"
RANKING_COLUMNS = ("rank", "model", "strength", "low", "high", "wins", "losses", "ties")
INTERVAL_COLUMNS = ("low", "high")  # absent when ranked without bootstrap resamples
# The columns a file must have to be read as a ranking.
RANKING_REQUIRED = ("rank", "model", "strength")
RANKING_SUFFIXES = (".csv", ".json", ".parquet")


def settings_record(client: LLMClient, requests: dict[str, Any]) -> dict[str, Any]:
    """How the judge was asked: its servers, the request settings and `--extra-body`."""
    return {"base_urls": client.base_urls, **requests, "extra_body": client.extra_body}


def stats_record(stats: LLMStats) -> dict[str, int]:
    return {
        "calls": stats.calls,
        "cached": stats.cached,
        "failed": stats.failed,
        "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.completion_tokens,
    }


def write_outputs(
    out: Path, name: str, records: list[dict[str, Any]], summary: dict[str, Any]
) -> None:
    write_atomically(out / name, b"".join(dumps_line(r) for r in records))
    write_atomically(out / SUMMARY, orjson.dumps(summary, option=orjson.OPT_INDENT_2))


def write_ranking(path: Path, columns: list[str], rows: list[list[Any]]) -> None:
    """The ranking of `judge rank --table`, in the format its suffix names."""
    write_table(path, columns, rows)


@dataclass(frozen=True)
class PairwiseResult:
    """A `judge pairwise --out` folder: its judged pairs and its summary."""

    folder: Path
    records: list[dict[str, Any]]
    summary: dict[str, Any]

    def models(self) -> list[str]:
        return sorted({str(r[k]) for r in self.records for k in ("model_a", "model_b") if k in r})


def is_pairwise_result(folder: Path) -> bool:
    """A folder `judge pairwise --out` wrote: its items beside its summary (an input
    `items.jsonl` alone is not one)."""
    return (folder / PAIRWISE_ITEMS).is_file() and (folder / SUMMARY).is_file()


def read_pairwise_result(folder: Path) -> PairwiseResult:
    records = [line.value for line in iter_json_lines(folder / PAIRWISE_ITEMS)]
    return PairwiseResult(folder, records, read_json_object(folder / SUMMARY))


def comparisons(path: Path, method: str) -> list[Comparison]:
    """The verdicts of `method` in an items file (or a result folder); items with errors or
    without a verdict (BS1 on disagreeing orders) give none."""
    path = path / PAIRWISE_ITEMS if path.is_dir() else path
    found = []
    for line in iter_json_lines(path):
        record = line.value
        if "error" in record:
            continue
        model_a = require(record, "model_a", str, line.where)
        model_b = require(record, "model_b", str, line.where)
        verdict = require(record, "verdict", dict, line.where).get(method)
        if verdict is None:
            continue
        if verdict not in LETTERS:
            raise InputError(f'{line.where}: field "verdict": {verdict!r} is not A, B or C')
        found.append(Comparison(model_a, model_b, verdict))
    return found


def read_ranking(path: Path) -> list[dict[str, Any]] | None:
    """A ranking file's rows, None when the file is not a ranking (`judge rank --table`)."""
    if path.suffix not in RANKING_SUFFIXES or path.name == SUMMARY:
        return None
    try:
        if path.suffix == ".json":
            value = read_json(path)
            rows = value if isinstance(value, list) else None
        elif path.suffix == ".csv":
            rows = pl.read_csv(path).to_dicts()
        else:
            rows = pl.read_parquet(path).to_dicts()
    except (OSError, PfgenError, pl.exceptions.PolarsError):
        return None
    if not rows or not all(isinstance(r, dict) and set(RANKING_REQUIRED) <= set(r) for r in rows):
        return None
    return rows
