"""The judge scorers — llm-as-a-judge (1-5), heron-bench (relative score) and
jawildtext-board-vqa (correct yes/no) — through the shared LLM client, with llm-jp-eval-mm's
prompts read from its own files, its parameters (temperature 0, seed 0) and its reply parsing.

A judge's verdict is read after its reasoning (`<think>` blocks removed; a reply without them
is read whole, as the original reads it). An item the judge could not score (its call refused
or failed for good, or its reply cut at max_tokens or reasoning without a verdict) is, by
default, left out of the means and counted (`judge_errors` in the details); with
`JudgeErrors.ZERO` it is scored as the original scores the empty reply it substitutes (0,
heron -1). Its reason is returned with the scores (`Judged.failures`) for the caller to record.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.llm import ChatRequest, LLMClient, LLMError, LLMReply
from pfgen_fast.common.reasoning import after_reasoning, has_reasoning, unanswered
from pfgen_fast.evalmm.metrics.base import Judged, JudgeErrors, Options
from pfgen_fast.evalmm.prompts import JudgePrompt, judge_prompt

FIRST_DIGIT = re.compile(r"\d")
JSON_BLOCK = re.compile(r"```json(.*?)```", re.DOTALL)
BRACES = re.compile(r"\{.*?\}", re.DOTALL)
CONTROL = re.compile(r"[\x00-\x1F\x7F]")
CORRECT = re.compile(r"correct\s*:\s*(yes|no)", re.IGNORECASE)
HERON_CATEGORIES = ("conv", "detail", "complex")
HERON_FAILED = {"score": -1, "score_gpt": -1}
BOXED = "\\boxed{"
Doc = dict[str, Any]
Score = TypeVar("Score")


@dataclass(frozen=True)
class JudgeCall:
    """Which prompt file a judge metric uses, its parameters, and how it reads a reply."""

    file: str
    template: str
    params: dict[str, Any]


LLM_AS_A_JUDGE = JudgeCall(
    "llm_as_a_judge_scorer.py", "INSTRUCTION", {"max_tokens": 1024, "temperature": 0.0, "seed": 0}
)
HERON = JudgeCall(
    "heron_bench_scorer.py", "INSTRUCTION", {"max_tokens": 1024, "temperature": 0, "seed": 0}
)
BOARD_VQA = JudgeCall(
    "jawildtext_board_vqa_scorer.py",
    "GRADER_TEMPLATE",
    {"max_tokens": 256, "temperature": 0.0, "seed": 0},
)


# Each judged metric's call, by metric name.
JUDGE_CALLS = {
    "llm-as-a-judge": LLM_AS_A_JUDGE,
    "heron-bench": HERON,
    "jawildtext-board-vqa": BOARD_VQA,
}


def check_judge_prompts(metrics: Sequence[str], data_dir: Path | None) -> None:
    """Reads the prompt of each judged metric among `metrics` (DataError naming the file
    when it is missing or differs), so that a run finds out before its first request."""
    for name in metrics:
        call = JUDGE_CALLS.get(name)
        if call is not None:
            judge_prompt(call.file, call.template, data_dir)


def verdict_text(reply: LLMReply) -> tuple[str | None, str | None]:
    """What a verdict is read from (the reply after its reasoning), or None with the reason
    when a reasoning reply has no verdict (cut at max_tokens, or nothing after the
    reasoning). A reply without reasoning is read whole, as the original reads it."""
    text = after_reasoning(reply.text)
    reasoned = reply.reasoning is not None or has_reasoning(reply.text)
    if reasoned or reply.finish_reason == "length":
        reason = unanswered(text, reply.finish_reason)
        if reason is not None:
            return None, reason
    return text, None


def ask(
    options: Options,
    metric: str,
    prompt: JudgePrompt,
    contents: Sequence[str],
    items: Sequence[int],
) -> tuple[list[str | None], dict[int, str]]:
    """The text to read each verdict from (contents of the items `items`), None where the
    judge gave none, and the reason of each such item by its index."""
    call = JUDGE_CALLS[metric]
    params = dict(call.params)
    if options.judge_max_tokens is not None:
        params["max_tokens"] = options.judge_max_tokens
    requests = [
        ChatRequest(
            messages=[
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": content},
            ],
            params=dict(params),
        )
        for content in contents
    ]
    results = client_of(options).run(requests, label=f"{metric} judging") if requests else []
    texts: list[str | None] = []
    failures: dict[int, str] = {}
    for item, result in zip(items, results, strict=True):
        text: str | None
        failure: str | None
        if isinstance(result, LLMError):
            reason = getattr(result, "reason", None)
            text, failure = None, reason if isinstance(reason, str) and reason else str(result)
        else:
            text, failure = verdict_text(result)
        if failure is not None:
            failures[item] = failure
        texts.append(text)
    return texts, failures


def judged_scores(
    options: Options,
    metric: str,
    prompt: JudgePrompt,
    contents: Sequence[str],
    items: Sequence[int],
    failed: list[Score],
    read: Callable[[str], Score],
) -> Judged:
    """Each item's score: `read` of its verdict for the items asked about (`items`, with their
    `contents`); its `failed` score (as the original scores an empty reply) for an item not
    asked, and for one the judge gave no verdict under `JudgeErrors.ZERO` (else None); and
    why the judge gave no verdict, by item."""
    scores: list[Score | None] = list(failed)
    verdicts, failures = ask(options, metric, prompt, contents, items)
    for item, verdict in zip(items, verdicts, strict=True):
        if verdict is not None:
            scores[item] = read(verdict)
        elif options.judge_errors is not JudgeErrors.ZERO:
            scores[item] = None
    return Judged(scores, failures)


def client_of(options: Options) -> LLMClient:
    if options.judge is None:
        raise InputError("this metric asks a judge model: give --base-url and --judge-model")
    return options.judge


def first_digit_score(reply: str) -> int:
    found = FIRST_DIGIT.search(reply)
    return int(found.group()) if found else 0


def score_llm_as_a_judge(
    refs: Sequence[str], preds: Sequence[str], docs: Sequence[Doc], options: Options
) -> Judged:
    """1-5 from the first digit of the reply; an empty prediction is 0 without a call."""
    prompt = judge_prompt(LLM_AS_A_JUDGE.file, LLM_AS_A_JUDGE.template, options.data_dir)
    asked = [i for i, pred in enumerate(preds) if pred != ""]
    contents = [
        prompt.template.format(Question=docs[i]["input_text"], Answer=refs[i], Prediction=preds[i])
        for i in asked
    ]
    return judged_scores(
        options, "llm-as-a-judge", prompt, contents, asked, [0] * len(preds), first_digit_score
    )


def heron_scores_of(parsed: Any) -> dict[str, int] | None:
    if isinstance(parsed, dict) and "score" in parsed and "score_gpt" in parsed:
        try:
            return {"score": int(parsed["score"]), "score_gpt": int(parsed["score_gpt"])}
        except (TypeError, ValueError, OverflowError):
            return None
    return None


def parse_heron(reply: str) -> dict[str, int]:
    """The first ```json block (else the first {...} without nesting) holding both scores."""
    candidates = JSON_BLOCK.findall(reply) or BRACES.findall(reply)
    for text in candidates:
        text = text.strip()
        for attempt in (text, CONTROL.sub("", text)):
            try:
                parsed = json.loads(attempt)
            except json.JSONDecodeError:
                continue
            found = heron_scores_of(parsed)
            if found is not None:
                return found
            break
    return dict(HERON_FAILED)


def score_heron(
    refs: Sequence[str], preds: Sequence[str], docs: Sequence[Doc], options: Options
) -> Judged:
    prompt = judge_prompt(HERON.file, HERON.template, options.data_dir)
    contents = [
        prompt.template.format(
            context=doc["context"], question=doc["input_text"], gpt4o_answer=ref, model_answer=pred
        )
        for doc, ref, pred in zip(docs, refs, preds, strict=True)
    ]
    failed = [dict(HERON_FAILED) for _ in contents]
    return judged_scores(
        options, "heron-bench", prompt, contents, range(len(contents)), failed, parse_heron
    )


def last_boxed(text: str) -> str:
    """The content of the last complete \\boxed{...} (braces nested), else the stripped text."""
    found = []
    position = 0
    while (start := text.find(BOXED, position)) != -1:
        end = start + len(BOXED)
        depth = 1
        while end < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        if depth == 0:
            found.append(text[start + len(BOXED) : end - 1].strip())
        position = end
    return found[-1] if found else text.strip()


def correct(verdict: str) -> float:
    """1.0 when the grader's `correct:` says yes, else 0.0."""
    found = CORRECT.search(verdict)
    return 1.0 if found and found.group(1).lower() == "yes" else 0.0


def score_board_vqa(
    refs: Sequence[str], preds: Sequence[str], docs: Sequence[Doc], options: Options
) -> Judged:
    prompt = judge_prompt(BOARD_VQA.file, BOARD_VQA.template, options.data_dir)
    extracted = [last_boxed(pred) for pred in preds]
    asked = [i for i, text in enumerate(extracted) if text != ""]
    contents = [
        prompt.template.format(
            question=docs[i]["input_text"], gold_answer=refs[i], prediction=extracted[i]
        )
        for i in asked
    ]
    return judged_scores(
        options, "jawildtext-board-vqa", prompt, contents, asked, [0.0] * len(preds), correct
    )


def mean_with_errors(key: str, scores: Sequence[Any]) -> dict[str, Any]:
    """The mean of the scores judged; failed calls (None) counted under `judge_errors`. With
    no score at all (every call failed) there is no mean: None, never 0.0."""
    kept = [s for s in scores if s is not None]
    value = sum(kept) / len(kept) if kept else None
    details: dict[str, Any] = {key: value}
    if len(kept) != len(scores):
        details["judge_errors"] = len(scores) - len(kept)
    return {"overall_score": value, "details": details}


def heron_aggregate(scores: Sequence[dict[str, int] | None], docs: Sequence[Doc]) -> dict[str, Any]:
    """Per category mean and 100·mean/max(0.01, mean of the reference's scores), -1 entries
    included; a category with no items or a mean of -1 is left out and counts 0 in
    `overall_rel`, the mean of the three relative scores. With no item judged (every call
    failed) there is no score: `overall` and `overall_rel` are None, never 0.0."""
    pairs = [(s, d) for s, d in zip(scores, docs, strict=True) if s is not None]
    if scores and not pairs:
        unjudged = {"overall": None, "overall_rel": None, "judge_errors": len(scores)}
        return {"overall_score": None, "details": unjudged}
    metrics: dict[str, Any] = defaultdict(float)
    for category in HERON_CATEGORIES:
        own = [s["score"] for s, d in pairs if d["category"] == category]
        gpt = [s["score_gpt"] for s, d in pairs if d["category"] == category]
        if not own or np.mean(own) == -1:
            continue
        metrics[category] = float(np.mean(own))
        gpt_mean = float(np.mean(gpt))
        metrics[f"{category}_rel"] = float(100 * np.mean(own) / max(0.01, gpt_mean))
    metrics["parse_error_count"] = sum(s["score"] == -1 for s, _ in pairs)
    metrics["overall"] = sum(s["score"] for s, _ in pairs) / len(pairs) if pairs else 0.0
    relative = [metrics[f"{category}_rel"] for category in HERON_CATEGORIES]
    metrics["overall_rel"] = sum(relative) / len(HERON_CATEGORIES)
    if len(pairs) != len(scores):
        metrics["judge_errors"] = len(scores) - len(pairs)
    return {"overall_score": metrics["overall_rel"], "details": dict(metrics)}
