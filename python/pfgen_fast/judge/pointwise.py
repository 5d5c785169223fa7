"""The pfgen-bench paper's 10-point judge (its section 4.2): each answer of a run rated 1-10
against the question's model answer, the run's mean rating, and Pearson's r between the runs'
mean ratings and their pfgen-bench scores."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.figures import pyplot, write_figure
from pfgen_fast.common.llm import ChatRequest, LLMClient, LLMError, LLMReply
from pfgen_fast.common.reasoning import after_reasoning
from pfgen_fast.judge.data import Run
from pfgen_fast.judge.outputs import RatingRecord
from pfgen_fast.judge.prompts import pointwise_prompt
from pfgen_fast.judge.replies import answer_failure, reply_tokens
from pfgen_fast.pfgen.outputs import Question

# MT-Bench's judge settings: greedy decoding, at most 2048 new tokens (FastChat's llm_judge).
SAMPLING = {"temperature": 0}
DEFAULT_MAX_TOKENS = 2048
NO_RATING = "no rating [[1-10]] in the reply"
RATING = re.compile(r"\[\[\s*(\d+(?:\.\d+)?)\s*\]\]")
LOOSE_RATING = re.compile(r"\[\s*(\d+(?:\.\d+)?)\s*\]")


def parse_rating(text: str) -> float | None:
    """The last "[[n]]" of the reply (else the last "[n]"), when n is within 1-10."""
    for pattern in (RATING, LOOSE_RATING):
        found = pattern.findall(text)
        if found:
            value = float(found[-1])
            return value if 1.0 <= value <= 10.0 else None
    return None


@dataclass(frozen=True)
class RunRating:
    run: str
    pfgen_score: float
    mean_rating: float | None  # over the rated answers
    rated: int
    unrated: int  # no rating in the reply, or the call failed


def rating_record(run: str, question: str, trial: int, result: LLMReply | LLMError) -> RatingRecord:
    """The answer's rating (None when there is none), the reply's text, and why there is no
    rating. The rating is read after the judge's reasoning."""
    record = RatingRecord(run, question, trial)
    record.error = answer_failure(result, "rating")
    if isinstance(result, LLMReply):
        record.text = result.text
        if record.error is None:
            record.rating = parse_rating(after_reasoning(result.text))
            record.error = NO_RATING if record.rating is None else None
    return record


def rate_runs(
    client: LLMClient,
    runs: Sequence[tuple[Run, float]],
    questions: Sequence[Question],
    trials: int | None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> tuple[list[RatingRecord], list[RunRating], Counter[str]]:
    """One record per rated answer (run, question, trial, rating, reply, error when unrated),
    each run's summary, and the tokens of all replies; `runs` pairs each run with its
    pfgen-bench score."""
    keys: list[tuple[str, Question, int]] = []
    requests: list[ChatRequest] = []
    params = {**SAMPLING, "max_tokens": max_tokens}
    for run, _ in runs:
        for question in questions:
            answers = run.answers.get(question.question, [])
            for t, answer in enumerate(answers[:trials] if trials else answers):
                text = pointwise_prompt(question.question, question.note, answer)
                keys.append((run.name, question, t + 1))
                requests.append(ChatRequest([{"role": "user", "content": text}], params))
    replies = client.run(requests, label="ratings")
    records = []
    ratings: dict[str, list[float | None]] = {run.name: [] for run, _ in runs}
    for (name, question, trial), reply in zip(keys, replies, strict=True):
        record = rating_record(name, question.question_id, trial, reply)
        ratings[name].append(record.rating)
        records.append(record)
    summaries = []
    for run, score in runs:
        rated = [r for r in ratings[run.name] if r is not None]
        summaries.append(
            RunRating(
                run.name,
                score,
                sum(rated) / len(rated) if rated else None,
                len(rated),
                len(ratings[run.name]) - len(rated),
            )
        )
    return records, summaries, reply_tokens(replies)


def check_plot_path(path: Path) -> None:
    """Before any call: matplotlib is there and draws the suffix's format."""
    plt = pyplot()
    formats = plt.figure().canvas.get_supported_filetypes()
    plt.close("all")
    suffix = path.suffix.lstrip(".").lower() or "png"
    if suffix not in formats:
        raise PfgenError(
            f"--plot {path}: unknown figure format {suffix!r} (one of {', '.join(sorted(formats))})"
        )


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r; None for fewer than 3 points or a constant series."""
    if len(xs) < 3:
        return None
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mean_x) ** 2 for x in xs)
    syy = sum((y - mean_y) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def score_and_rating(summaries: Sequence[RunRating]) -> tuple[list[float], list[float]]:
    """The pfgen-bench scores and mean ratings of the runs with a rating."""
    pairs = [(s.pfgen_score, s.mean_rating) for s in summaries if s.mean_rating is not None]
    return [score for score, _ in pairs], [rating for _, rating in pairs]


def rating_correlation(summaries: Sequence[RunRating]) -> float | None:
    """r between the runs' pfgen-bench scores and their mean ratings."""
    return pearson(*score_and_rating(summaries))


def point_labels(summaries: Sequence[RunRating]) -> list[str]:
    """The label of each rated run's point: its directory below the folder all the runs share
    (e.g. `org/model/run`), so that the labels are short and still tell the runs apart."""
    names = [s.run for s in summaries if s.mean_rating is not None]
    parts = [PurePath(name).parts for name in names]
    shared = 0
    while (
        parts and all(len(p) > shared + 1 for p in parts) and len({p[shared] for p in parts}) == 1
    ):
        shared += 1
    return [str(PurePath(*p[shared:])) for p in parts]


def draw_scatter(summaries: Sequence[RunRating], r: float | None, path: Path) -> None:
    """pfgen-bench score against mean rating, one labelled point per run (PNG, SVG, ... by
    suffix), written atomically."""
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(6.4, 5))
    scores, ratings = score_and_rating(summaries)
    axes.scatter(scores, ratings, s=14)
    for label, x, y in zip(point_labels(summaries), scores, ratings, strict=True):
        axes.annotate(
            label, (x, y), xytext=(3, 3), textcoords="offset points", fontsize=6, alpha=0.8
        )
    axes.set_xlabel("pfgen-bench score")
    axes.set_ylabel("mean judge rating (1-10)")
    axes.set_title("10-point judge" + ("" if r is None else f" (r = {r:.4f})"))
    axes.grid(alpha=0.3)
    figure.tight_layout()
    write_figure(figure, path, path.suffix.lstrip(".") or "png")
    plt.close(figure)
