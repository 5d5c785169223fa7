"""Judging pairs in both presentation orders through the shared LLM client, and the per-item
records and summary of the paper's method and its baselines."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.llm import ChatRequest, LLMClient, LLMError, LLMReply
from pfgen_fast.judge.items import PairItem
from pfgen_fast.judge.metrics import concordance, fleiss_kappa, robustness
from pfgen_fast.judge.prompts import PairwisePrompt, criteria_prompt
from pfgen_fast.judge.verdicts import LETTERS, OrderReading, combine, read_order

# The paper's settings (temperature 0, seed 1) and the top-20 log-probabilities it reads.
SAMPLING = {"temperature": 0, "seed": 1}
TOP_LOGPROBS = 20
METHODS = ("proposed", "bs1", "bs2")

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class JudgeSetup:
    prompt: PairwisePrompt
    base_url: str
    model: str


def criteria_request(question: str, reference: str | None) -> ChatRequest:
    return ChatRequest(
        [{"role": "user", "content": criteria_prompt(question, reference)}], SAMPLING
    )


def judge_request(
    prompt: PairwisePrompt, item: PairItem, swapped: bool, criteria: str | None
) -> ChatRequest:
    """Order 1 shows LLM A's answer first, order 2 (swapped) LLM B's. A result-only reply is
    one token."""
    first, second = (item.answer_b, item.answer_a) if swapped else (item.answer_a, item.answer_b)
    text = prompt.render(item.question, item.reference, first, second, criteria)
    params: dict[str, Any] = {**SAMPLING, "logprobs": True, "top_logprobs": TOP_LOGPROBS}
    if not prompt.reasoning:
        params["max_tokens"] = 1
    return ChatRequest([{"role": "user", "content": text}], params)


def reply_tokens(replies: Sequence[LLMReply | LLMError]) -> Counter[str]:
    """Prompt and completion tokens of the replies, cached ones included (what the evaluation
    costs from scratch)."""
    tokens: Counter[str] = Counter()
    for reply in replies:
        if isinstance(reply, LLMReply):
            tokens["prompt"] += reply.usage.get("prompt_tokens", 0)
            tokens["completion"] += reply.usage.get("completion_tokens", 0)
    return tokens


def generate_criteria(
    client: LLMClient, items: Sequence[PairItem], progress: Progress | None, tokens: Counter[str]
) -> tuple[dict[tuple[str, str | None], str], dict[tuple[str, str | None], str]]:
    """The criteria of every distinct (question, reference), one call each; also the errors of
    the calls that failed. The replies' tokens are added to `tokens`."""
    keys = list(dict.fromkeys((item.question, item.reference) for item in items))
    replies = client.run([criteria_request(q, r) for q, r in keys], progress, label="criteria")
    tokens.update(reply_tokens(replies))
    criteria: dict[tuple[str, str | None], str] = {}
    errors: dict[tuple[str, str | None], str] = {}
    for key, reply in zip(keys, replies, strict=True):
        if isinstance(reply, LLMError):
            errors[key] = f"criteria: {reply}"
        else:
            criteria[key] = reply.text
    return criteria, errors


def order_record(reading: OrderReading, reply: LLMReply, shown_first: str) -> dict[str, Any]:
    top: list[list[Any]] = []
    if reading.position is not None and reply.logprobs:
        top = [list(pair) for pair in reply.logprobs[reading.position].top]
    return {
        "shown_first": shown_first,
        "letter": reading.letter,
        "position": reading.position,
        "probabilities": reading.probabilities,
        "top_logprobs": top,
        "text": reply.text,
    }


def require_logprobs(reply: LLMReply, setup: JudgeSetup, item: PairItem) -> None:
    if reply.logprobs is None or (reply.logprobs and not any(t.top for t in reply.logprobs)):
        raise PfgenError(
            f"{setup.base_url}: model {setup.model} returned no log-probabilities (item "
            f"{item.id!r}); the proposed method needs a server that honours logprobs and "
            f"top_logprobs={TOP_LOGPROBS}"
        )


def base_record(item: PairItem) -> dict[str, Any]:
    """What names the item: id, task and models when given."""
    record: dict[str, Any] = {"id": item.id}
    if item.task is not None:
        record["task"] = item.task
    if item.model_a is not None or item.model_b is not None:
        record["model_a"], record["model_b"] = item.model_a, item.model_b
    return record


def item_record(
    item: PairItem, replies: tuple[LLMReply | LLMError, LLMReply | LLMError], setup: JudgeSetup
) -> dict[str, Any]:
    record = base_record(item)
    first, second = replies
    if isinstance(first, LLMError) or isinstance(second, LLMError):
        record["error"] = str(first if isinstance(first, LLMError) else second)
        return record
    for reply in (first, second):
        require_logprobs(reply, setup, item)
    reading1 = read_order(first.logprobs or (), setup.prompt.reasoning)
    reading2 = read_order(second.logprobs or (), setup.prompt.reasoning)
    verdict = combine(reading1, reading2)
    if verdict.proposed is None:
        record["error"] = "no A, B or C among the top log-probabilities at the verdict position"
    record["verdict"] = {"proposed": verdict.proposed, "bs1": verdict.bs1, "bs2": verdict.bs2}
    record["consistent"] = verdict.consistent
    record["tie_broken"] = verdict.tie_broken
    record["averages"] = verdict.averages
    record["orders"] = [order_record(reading1, first, "A"), order_record(reading2, second, "B")]
    if item.labels is not None:
        record["labels"] = list(item.labels)
    return record


def judge_pairs(
    client: LLMClient,
    items: Sequence[PairItem],
    setup: JudgeSetup,
    progress: Progress | None = None,
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """One record per item: both orders' letters and probabilities, the three verdicts,
    whether the orders agree, the replies' text; `error` when a call failed or no verdict
    could be read. Also the tokens of all replies."""
    criteria: dict[tuple[str, str | None], str] = {}
    criteria_errors: dict[tuple[str, str | None], str] = {}
    tokens: Counter[str] = Counter()
    if setup.prompt.with_criteria:
        criteria, criteria_errors = generate_criteria(client, items, progress, tokens)
    judged = [item for item in items if (item.question, item.reference) not in criteria_errors]
    requests = []
    for item in judged:
        text = criteria.get((item.question, item.reference))
        requests.append(judge_request(setup.prompt, item, swapped=False, criteria=text))
        requests.append(judge_request(setup.prompt, item, swapped=True, criteria=text))
    judged_replies = client.run(requests, progress, label="verdicts")
    tokens.update(reply_tokens(judged_replies))
    replies = iter(judged_replies)
    records = []
    for item in items:
        key = (item.question, item.reference)
        if key in criteria_errors:
            records.append({**base_record(item), "error": criteria_errors[key]})
            continue
        record = item_record(item, (next(replies), next(replies)), setup)
        if setup.prompt.with_criteria:
            record["criteria"] = criteria[key]
        records.append(record)
    return records, tokens


def summarise(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The measures of all items, and of each task when items name one (the paper's per-task
    columns)."""
    summary = measures(records)
    tasks = list(dict.fromkeys(r["task"] for r in records if "task" in r))
    if tasks:
        summary["by_task"] = {
            task: measures([r for r in records if r.get("task") == task]) for task in tasks
        }
    return summary


def measures(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Concordance of each method with the annotators (items with labels), Fleiss' kappa
    among them, robustness, verdict counts, tie-breaks; over the items without errors."""
    judged = [r for r in records if "error" not in r]
    labelled = [r for r in judged if "labels" in r]
    labels = [r["labels"] for r in labelled]
    summary: dict[str, Any] = {
        "items": len(records),
        "errors": len(records) - len(judged),
        "labelled": len(labelled),
    }
    for method in METHODS:
        summary[method] = concordance([r["verdict"][method] for r in labelled], labels)
    summary["robustness"] = robustness([r["consistent"] for r in judged])
    summary["fleiss_kappa"] = fleiss_kappa(labels)
    summary["tie_breaks"] = sum(r["tie_broken"] for r in judged)
    summary["verdicts"] = {}
    for method in METHODS:
        counts = Counter(r["verdict"][method] for r in judged)
        summary["verdicts"][method] = {**{x: counts[x] for x in LETTERS}, "none": counts[None]}
    return summary
