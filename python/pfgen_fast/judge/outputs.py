"""What the judge room writes, and how it is read back (by `judge rank` and by other rooms).
Every file of the room is written and read here.

* `judge pairwise --out DIR` writes `items.jsonl`, one pair a line (`PairRecord`): `id`,
  `task` and `model_a`, `model_b` when the item names them, `question`, `reference` when
  given, `answer_a`, `answer_b`, `error` when the judge failed, for a judged pair `verdict`
  (`proposed`, `bs1`, `bs2`), `consistent`, `tie_broken`, `averages`, both `orders`
  (`OrderRecord`: `shown_first`, `letter`, `position`, `probabilities`, `top_logprobs`,
  `alternatives`, `text`) and `labels` when the item has them, and `criteria` when
  generated; a probability or log-probability that is NaN is written as null;
* `judge pointwise --out DIR` writes `ratings.jsonl`, one rated answer a line
  (`RatingRecord`): `run`, `question`, `trial`, `rating`, `text` (the reply, when there is
  one), and `error` when no rating was read;
* both write `summary.json`: their measures, with `judge_model`, `settings` (`base_urls`, the
  request settings, `extra_body`), `usage` (`calls`, `cached`, `failed`, `prompt_tokens`,
  `completion_tokens`) and `tokens` (`prompt`, `completion`); and `replies.jsonl`, every raw
  reply (the shared LLM client's log);
* `judge rank --table FILE` writes the ranking (`rank`, `model`, `strength`, `low`, `high`,
  `wins`, `losses`, `ties`; no `low`, `high` without bootstrap resamples) as CSV, Parquet or
  JSON."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import polars as pl

from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.jsonl import (
    dumps_line,
    iter_json_lines,
    missing_field,
    read_json,
    read_json_object,
    require,
    require_object,
)
from pfgen_fast.common.tables import write_table
from pfgen_fast.judge.items import optional_string, read_labels
from pfgen_fast.judge.leaderboard import Comparison
from pfgen_fast.judge.verdicts import LETTERS, METHODS
from pfgen_fast.judge.verdicts import PairVerdict as PairVerdict  # a PairRecord's verdict

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


@dataclass(frozen=True)
class OrderRecord:
    """One presentation order of a judged pair: whose answer was shown first ("A": LLM A's),
    the letter generated at the verdict token (None: not A, B or C) and that token's index
    among the reply's tokens, the probabilities of A, B and C there, its top log-probabilities
    and how many came (`alternatives`), and the reply's text."""

    shown_first: str
    letter: str | None
    position: int | None
    probabilities: dict[str, float]
    top_logprobs: list[tuple[str, float]]
    alternatives: int
    text: str

    def line(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(OrderRecord)}


@dataclass
class PairRecord:
    """One pair as `items.jsonl` records it: what names it (its id, and its task and models when
    the item gives them), what was judged (the question, its reference, both answers), why it
    has no verdict (`error`), the verdicts from both orders and each order's reading (with an
    error too when no letter had any probability in either order), the annotators' labels of
    a judged pair, and the criteria the judge was given (`--criteria`)."""

    id: str | int
    question: str
    answer_a: str
    answer_b: str
    task: str | None = None
    model_a: str | None = None
    model_b: str | None = None
    reference: str | None = None
    error: str | None = None
    verdict: PairVerdict | None = None
    orders: list[OrderRecord] = field(default_factory=list)
    labels: tuple[str, ...] | None = None
    criteria: str | None = None

    def line(self) -> dict[str, Any]:
        """The JSON line: the fields in the order the module's docstring gives, the optional
        ones only when set (both models when either is)."""
        line: dict[str, Any] = {"id": self.id}
        if self.task is not None:
            line["task"] = self.task
        if self.model_a is not None or self.model_b is not None:
            line["model_a"], line["model_b"] = self.model_a, self.model_b
        line["question"] = self.question
        if self.reference is not None:
            line["reference"] = self.reference
        line["answer_a"], line["answer_b"] = self.answer_a, self.answer_b
        if self.error is not None:
            line["error"] = self.error
        if self.verdict is not None:
            line["verdict"] = self.verdict.by_method()
            line["consistent"] = self.verdict.consistent
            line["tie_broken"] = self.verdict.tie_broken
            line["averages"] = self.verdict.averages
            line["orders"] = [order.line() for order in self.orders]
        if self.labels is not None:
            line["labels"] = self.labels
        if self.criteria is not None:
            line["criteria"] = self.criteria
        return line

    def judged_verdict(self) -> PairVerdict | None:
        """The verdicts of a pair judged without error."""
        return self.verdict if self.error is None else None


@dataclass
class RatingRecord:
    """One rated answer as `ratings.jsonl` records it."""

    run: str
    question: str  # its id
    trial: int
    rating: float | None = None  # None: none was read
    text: str | None = None  # the judge's reply; None: the call failed
    error: str | None = None  # why there is no rating

    def line(self) -> dict[str, Any]:
        """The JSON line: the fields in order, `text` and `error` only when set."""
        line = {f.name: getattr(self, f.name) for f in fields(RatingRecord)}
        for name in ("text", "error"):
            if line[name] is None:
                del line[name]
        return line


def write_outputs(
    out: Path, name: str, records: Iterable[PairRecord | RatingRecord], summary: dict[str, Any]
) -> None:
    write_atomically(out / name, b"".join(dumps_line(r.line()) for r in records))
    write_atomically(out / SUMMARY, orjson.dumps(summary, option=orjson.OPT_INDENT_2))


def write_ranking(path: Path, columns: list[str], rows: list[list[Any]]) -> None:
    """The ranking of `judge rank --table`, in the format its suffix names."""
    write_table(path, columns, rows)


def probability(obj: dict[str, Any], name: str, where: str) -> float:
    """A probability as written: a number, or null for NaN."""
    value = require(obj, name, (float, type(None)), where)
    return math.nan if value is None else value


def read_probabilities(obj: dict[str, Any], name: str, where: str) -> dict[str, float]:
    """The probability of each of A, B and C."""
    values = require(obj, name, dict, where)
    return {x: probability(values, x, f"{where}: {name}") for x in LETTERS}


def optional_letter(obj: dict[str, Any], name: str, where: str) -> str | None:
    """A verdict letter, or null for none."""
    letter = require(obj, name, (str, type(None)), where)
    if letter is not None and letter not in LETTERS:
        raise InputError(f'{where}: field "{name}": {letter!r} is not A, B or C')
    return letter


def read_top_logprobs(obj: dict[str, Any], where: str) -> list[tuple[str, float]]:
    """The [token, log-probability] pairs at the verdict token (null: NaN)."""
    top = []
    for pair in require(obj, "top_logprobs", list, where):
        if not (
            isinstance(pair, list)
            and len(pair) == 2
            and isinstance(pair[0], str)
            and (pair[1] is None or isinstance(pair[1], float))
        ):
            raise InputError(
                f'{where}: field "top_logprobs": {pair!r} is not a token and its log-probability'
            )
        top.append((pair[0], math.nan if pair[1] is None else pair[1]))
    return top


def read_order(value: Any, where: str) -> OrderRecord:
    """One of a pair's `orders`."""
    obj = require_object(value, where)
    shown_first = require(obj, "shown_first", str, where)
    if shown_first not in ("A", "B"):
        raise InputError(f'{where}: field "shown_first": {shown_first!r} is not A or B')
    return OrderRecord(
        shown_first=shown_first,
        letter=optional_letter(obj, "letter", where),
        position=require(obj, "position", (int, type(None)), where),
        probabilities=read_probabilities(obj, "probabilities", where),
        top_logprobs=read_top_logprobs(obj, where),
        alternatives=require(obj, "alternatives", int, where),
        text=require(obj, "text", str, where),
    )


def read_verdict(obj: dict[str, Any], where: str) -> PairVerdict:
    """The verdicts of a pair: `verdict`, `consistent`, `tie_broken` and `averages`."""
    letters = require(obj, "verdict", dict, where)
    proposed, bs1, bs2 = (optional_letter(letters, m, f"{where}: verdict") for m in METHODS)
    consistent = require(obj, "consistent", bool, where)
    tie_broken = require(obj, "tie_broken", bool, where)
    averages = read_probabilities(obj, "averages", where)
    return PairVerdict(proposed, bs1, bs2, consistent, averages, tie_broken)


def read_pair(obj: dict[str, Any], where: str) -> PairRecord:
    """One line of `items.jsonl`; an InputError naming `where` and the field of a line that is
    not as `PairRecord.line` writes it (a pair without an error has a verdict)."""
    record = PairRecord(
        id=require(obj, "id", (str, int), where),
        task=optional_string(obj, "task", where),
        model_a=optional_string(obj, "model_a", where),
        model_b=optional_string(obj, "model_b", where),
        question=require(obj, "question", str, where),
        reference=optional_string(obj, "reference", where),
        answer_a=require(obj, "answer_a", str, where),
        answer_b=require(obj, "answer_b", str, where),
        error=optional_string(obj, "error", where),
    )
    if record.error is None or "verdict" in obj:
        record.verdict = read_verdict(obj, where)
        orders = require(obj, "orders", list, where)
        if len(orders) != 2:
            raise InputError(f'{where}: field "orders": {len(orders)} orders, not 2')
        record.orders = [read_order(o, f"{where}: order {n}") for n, o in enumerate(orders, 1)]
    record.labels = read_labels(obj, where)
    record.criteria = optional_string(obj, "criteria", where)
    return record


def read_pairs(path: Path) -> list[PairRecord]:
    """The pairs of an `items.jsonl` file, in file order."""
    return [read_pair(line.value, line.where) for line in iter_json_lines(path)]


@dataclass(frozen=True)
class PairwiseResult:
    """A `judge pairwise --out` folder: its judged pairs and its summary."""

    folder: Path
    records: list[PairRecord]
    summary: dict[str, Any]

    def models(self) -> list[str]:
        """The models its pairs name."""
        named = {name for r in self.records for name in (r.model_a, r.model_b) if name}
        return sorted(named)


def is_pairwise_result(folder: Path) -> bool:
    """A folder `judge pairwise --out` wrote: its items beside its summary (an input
    `items.jsonl` alone is not one)."""
    return (folder / PAIRWISE_ITEMS).is_file() and (folder / SUMMARY).is_file()


def read_pairwise_result(folder: Path) -> PairwiseResult:
    return PairwiseResult(
        folder, read_pairs(folder / PAIRWISE_ITEMS), read_json_object(folder / SUMMARY)
    )


def comparisons(path: Path, method: str) -> list[Comparison]:
    """The verdicts of `method` in an items file (or a result folder); items with errors or
    without a verdict (BS1 on disagreeing orders) give none."""
    path = path / PAIRWISE_ITEMS if path.is_dir() else path
    found = []
    for line in iter_json_lines(path):
        record = read_pair(line.value, line.where)
        verdict = record.judged_verdict()
        if verdict is None:
            continue
        if record.model_a is None or record.model_b is None:
            name = "model_a" if record.model_a is None else "model_b"
            raise InputError(f"{line.where}: {missing_field(name)}")
        letter = verdict.by_method()[method]
        if letter is not None:
            found.append(Comparison(record.model_a, record.model_b, letter))
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
