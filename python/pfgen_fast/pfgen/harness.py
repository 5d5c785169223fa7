"""pfgen-bench as lm-evaluation-harness tasks (docs/lm-eval.md). The task files in
`lm_eval_tasks/` name the functions of this module: `documents` (the task's data set: one
document per question and trial, with that trial's official prompt), `process_results` (an
answer cleaned up as the published runner does) and one aggregation per metric, each the
run-level figure `eval` gives those answers. The run's trials, as `trials_lines` puts them, are
the same whatever order lm-eval hands the answers in; `lm-eval-import` writes them as a run
folder."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pfgen_fast.common.cpus import usable_cpus
from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.common.files import temporary_folder
from pfgen_fast.pfgen.commands.eval import summary_row
from pfgen_fast.pfgen.data import resolve_data_dir
from pfgen_fast.pfgen.evaluate import Evaluator
from pfgen_fast.pfgen.generate import clean_answer
from pfgen_fast.pfgen.prompts import MODES, build_task, load_examples
from pfgen_fast.pfgen.scorer import ReferenceData

# The metrics of every task, as `eval --json` names them.
METRICS = ("score", "fluency", "truthfulness", "helpfulness", "length")

logger = logging.getLogger(__name__)


@dataclass(frozen=True, order=True)
class Answer:
    """One document's answer, cleaned up: the metric item of every metric."""

    trial: int
    question: str
    answer: str


def documents(mode: str, num_trials: int, **metadata: Any) -> dict[str, Any]:
    """The task's data set (its `custom_dataset`; lm-eval passes the task's metadata too):
    trial after trial, every question in questions.jsonl's order, with the fields of that
    trial's published task (`prompt`, or `system_prompt` and `user_prompt` in chat mode).
    The data is found as every command finds it and checked here, before any model call."""
    import datasets  # type: ignore[import-untyped]

    if mode not in MODES:
        raise InputError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
    data_dir = resolve_data_dir(None)
    examples = load_examples(data_dir / "questions.jsonl")
    references = ReferenceData.load(data_dir)
    for example in examples:
        try:
            references.by_text(example.question)
        except KeyError:
            raise InputError(
                f"{data_dir / 'questions.jsonl'}: question {example.question!r} has no Qxx.json"
            ) from None
    rows = []
    for trial in range(1, num_trials + 1):
        for example in examples:
            task = build_task(examples, example.question, mode, trial)
            del task["seed"]  # the runners' seed of a trial; lm-eval sends its own
            rows.append({"mode": mode, "trial": trial, **task})
    return {"test": datasets.Dataset.from_list(rows)}


def process_results(doc: dict[str, Any], results: Sequence[str]) -> dict[str, list[Any]]:
    """Every metric's item for one document: [trial, question, answer], the answer cleaned up
    as `run_tasks` does (stripped; in qa and chat only what follows the first `A:`)."""
    item = [doc["trial"], doc["question"], clean_answer(results[0], doc["mode"])]
    return {metric: item for metric in METRICS}


def answer_of(item: Any, where: str) -> Answer:
    """A metric item as an answer; an InputError at `where` for an item of another shape."""
    if (
        not isinstance(item, (list, tuple))
        or len(item) != 3
        or isinstance(item[0], bool)
        or not isinstance(item[0], int)
        or not isinstance(item[1], str)
        or not isinstance(item[2], str)
    ):
        raise InputError(f"{where}: expected [trial, question, answer], got {item!r:.80}")
    return Answer(*item)


def sorted_answers(answers: Iterable[Answer], where: str) -> list[Answer]:
    """The answers sorted by trial and question; an InputError at `where` for a question
    answered twice in a trial."""
    ordered = sorted(answers)
    for first, second in zip(ordered, ordered[1:], strict=False):
        if (first.trial, first.question) == (second.trial, second.question):
            raise InputError(f"{where}: trial {first.trial} answers {first.question!r} twice")
    return ordered


def trial_records(
    answers: Iterable[Answer], timestamp: str | None
) -> dict[int, list[dict[str, Any]]]:
    """Each trial's answer records, as a trial file holds them (with `timestamp` when given)."""
    trials: dict[int, list[dict[str, Any]]] = {}
    for answer in answers:
        record: dict[str, Any] = {"question": answer.question, "answer": answer.answer}
        if timestamp is not None:
            record["timestamp"] = timestamp
        trials.setdefault(answer.trial, []).append(record)
    return trials


def trials_lines(answers: Iterable[Answer]) -> bytes:
    """The run's trials file as `generate` packs it (its lines sorted bytewise), without
    timestamps: the lines sort as the run folder's do, whose timestamps are all the same."""
    lines = sorted(
        json.dumps(record, ensure_ascii=False).encode("utf-8")
        for records in trial_records(answers, None).values()
        for record in records
    )
    return b"".join(line + b"\n" for line in lines)


def evaluate_lines(lines: bytes) -> dict[str, float]:
    """`eval`'s figures (its `--json` summary) of a trials file of these lines, over the
    questions present (an lm-eval `--limit` run lacks some)."""
    references = ReferenceData.load(resolve_data_dir(None))
    with temporary_folder("pfgen-fast-lm-eval-") as folder:
        path = folder / "trials.jsonl"
        path.write_bytes(lines)
        evaluator = Evaluator(references, allow_partial=True)
        [outcome] = evaluator.run([path], usable_cpus(), lambda outcome: None)
    # The messages name the temporary file: they are said of the answers instead.
    if outcome.status == "failed":
        problem = (outcome.error or "not evaluated").removeprefix(f"{path}: ")
        raise PfgenError(f"pfgen-bench answers: {problem}")
    for warning in outcome.warnings:
        logger.warning("pfgen-bench answers: %s", warning.removeprefix(f"{path}: "))
    row = summary_row(outcome, legacy_sum=False)
    return {metric: row[metric] for metric in METRICS}


# The figures of the last answers aggregated: lm-eval aggregates each metric on its own,
# over the same items.
_last: dict[bytes, dict[str, float]] = {}


def run_figures(items: Iterable[Sequence[Any]]) -> dict[str, float]:
    """The figures of the answers of a task's documents (any order)."""
    answers = sorted_answers((answer_of(item, "a metric item") for item in items), "the items")
    lines = trials_lines(answers)
    key = hashlib.sha1(lines).digest()
    if key not in _last:
        _last.clear()
        _last[key] = evaluate_lines(lines)
    return _last[key]


# The aggregation of each metric, as the task files name them.


def score(items: Sequence[Sequence[Any]]) -> float:
    return run_figures(items)["score"]


def fluency(items: Sequence[Sequence[Any]]) -> float:
    return run_figures(items)["fluency"]


def truthfulness(items: Sequence[Sequence[Any]]) -> float:
    return run_figures(items)["truthfulness"]


def helpfulness(items: Sequence[Sequence[Any]]) -> float:
    return run_figures(items)["helpfulness"]


def length(items: Sequence[Sequence[Any]]) -> float:
    return run_figures(items)["length"]
