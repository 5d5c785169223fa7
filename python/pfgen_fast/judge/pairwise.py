"""Judging pairs in both presentation orders through the shared LLM client, and the per-item
records and summary of the paper's method and its baselines."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.llm import ChatRequest, LLMClient, LLMError, LLMReply, cut_warning
from pfgen_fast.common.reasoning import after_reasoning
from pfgen_fast.judge.items import PairItem
from pfgen_fast.judge.metrics import concordance, fleiss_kappa, robustness
from pfgen_fast.judge.outputs import OrderRecord, PairRecord
from pfgen_fast.judge.prompts import PairwisePrompt, criteria_prompt
from pfgen_fast.judge.replies import CUT, answer_failure, reply_tokens
from pfgen_fast.judge.verdicts import LETTERS, METHODS, OrderReading, combine, read_order

# The paper's settings (temperature 0, seed 1) and the top-20 log-probabilities it reads.
SAMPLING = {"temperature": 0, "seed": 1}
TOP_LOGPROBS = 20
# A reply's new tokens at most, unless --max-tokens says: one letter for the result-only
# prompts (the verdict is that token); for a reason then the verdict, and for criteria,
# MT-Bench's judge limit (FastChat's llm_judge asks for at most 2048).
RESULT_ONLY_MAX_TOKENS = 1
REASONED_MAX_TOKENS = 2048

CriteriaKey = tuple[str, str | None]


@dataclass(frozen=True)
class JudgeSetup:
    prompt: PairwisePrompt
    base_url: str
    model: str
    max_tokens: int | None = None  # --max-tokens, the bound of every reply; None: defaults

    @property
    def verdict_max_tokens(self) -> int:
        if self.max_tokens is not None:
            return self.max_tokens
        return REASONED_MAX_TOKENS if self.prompt.reasoning else RESULT_ONLY_MAX_TOKENS

    @property
    def criteria_max_tokens(self) -> int:
        return REASONED_MAX_TOKENS if self.max_tokens is None else self.max_tokens

    def settings(self) -> dict[str, Any]:
        """The request settings, as the outputs record them."""
        settings: dict[str, Any] = {
            **SAMPLING,
            "logprobs": True,
            "top_logprobs": TOP_LOGPROBS,
            "max_tokens": self.verdict_max_tokens,
        }
        if self.prompt.with_criteria:
            settings["criteria_max_tokens"] = self.criteria_max_tokens
        return settings


def criteria_request(question: str, reference: str | None, max_tokens: int) -> ChatRequest:
    return ChatRequest(
        [{"role": "user", "content": criteria_prompt(question, reference)}],
        {**SAMPLING, "max_tokens": max_tokens},
    )


def judge_request(
    setup: JudgeSetup, item: PairItem, swapped: bool, criteria: str | None
) -> ChatRequest:
    """Order 1 shows LLM A's answer first, order 2 (swapped) LLM B's."""
    first, second = (item.answer_b, item.answer_a) if swapped else (item.answer_a, item.answer_b)
    text = setup.prompt.render(item.question, item.reference, first, second, criteria)
    params: dict[str, Any] = {
        **SAMPLING,
        "logprobs": True,
        "top_logprobs": TOP_LOGPROBS,
        "max_tokens": setup.verdict_max_tokens,
    }
    return ChatRequest([{"role": "user", "content": text}], params)


@dataclass
class Criteria:
    """The criteria of each (question, reference) judged, the failures of the others, how
    many replies held none (used as an empty text, with a warning) and how many were cut at
    max_tokens."""

    texts: dict[CriteriaKey, str] = field(default_factory=dict)
    errors: dict[CriteriaKey, str] = field(default_factory=dict)
    empty: int = 0
    cut: int = 0


def generate_criteria(
    client: LLMClient,
    items: Sequence[PairItem],
    setup: JudgeSetup,
    tokens: Counter[str],
) -> Criteria:
    """The criteria of every distinct (question, reference), one call each, read after the
    judge's reasoning. The replies' tokens are added to `tokens`."""
    keys = list(dict.fromkeys((item.question, item.reference) for item in items))
    requests = [criteria_request(q, r, setup.criteria_max_tokens) for q, r in keys]
    replies = client.run(requests, label="criteria")
    tokens.update(reply_tokens(replies))
    criteria = Criteria(cut=cut_replies(replies))
    for key, reply in zip(keys, replies, strict=True):
        if isinstance(reply, LLMReply) and reply.finish_reason != "length":
            text = after_reasoning(reply.text)
            criteria.texts[key] = text
            criteria.empty += not text.strip()
            continue
        criteria.errors[key] = f"criteria: {answer_failure(reply, 'criteria')}"
    return criteria


def order_record(reading: OrderReading, reply: LLMReply, shown_first: str) -> OrderRecord:
    top: list[tuple[str, float]] = []
    if reading.position is not None and reply.logprobs:
        top = list(reply.logprobs[reading.position].top)
    return OrderRecord(
        shown_first=shown_first,
        letter=reading.letter,
        position=reading.position,
        probabilities=reading.probabilities,
        top_logprobs=top,
        alternatives=len(top),
        text=reply.text,
    )


def require_logprobs(reply: LLMReply, setup: JudgeSetup, item: PairItem) -> None:
    if reply.logprobs is None or (reply.logprobs and not any(t.top for t in reply.logprobs)):
        raise PfgenError(
            f"{setup.base_url}: model {setup.model} returned no log-probabilities (item "
            f"{item.id!r}); the proposed method needs a server that honours logprobs and "
            f"top_logprobs={TOP_LOGPROBS}"
        )


def base_record(item: PairItem) -> PairRecord:
    """What names the item (id, task and models when given) and what was judged: the question,
    its reference when given, and both answers."""
    record = PairRecord(item.id, item.question, item.answer_a, item.answer_b, item.task)
    record.model_a, record.model_b, record.reference = item.model_a, item.model_b, item.reference
    return record


def missing_verdict(reply: LLMReply, reasoning: bool) -> str:
    """Why no verdict token was found in a reply that has an answer."""
    if reply.finish_reason == "length":
        return CUT.format(what="verdict")
    if reasoning:
        return "no A, B or C token after the reason"
    return "no generated token in the log-probabilities"


def reading_failure(reply: LLMReply, reading: OrderReading, reasoning: bool) -> str | None:
    """Why an order's reading gives no verdict: no verdict token, or a letter among the top
    alternatives there that the server gave no log-probability (null)."""
    if reading.position is None:
        return missing_verdict(reply, reasoning)
    unknown = [x for x, p in reading.probabilities.items() if math.isnan(p)]
    if unknown:
        return f"no log-probability for {', '.join(unknown)} at the verdict token"
    return None


def item_record(
    item: PairItem, replies: tuple[LLMReply | LLMError, LLMReply | LLMError], setup: JudgeSetup
) -> PairRecord:
    """Both orders read into the three verdicts; `error` (each failed order's reason) when an
    order gives no verdict token or a letter there without a log-probability, or no letter
    has any probability in either order."""
    record = base_record(item)
    reasoning = setup.prompt.reasoning
    failures = [
        f"order {n}: {why}"
        for n, reply in enumerate(replies, start=1)
        if (why := answer_failure(reply, "verdict", last=reasoning)) is not None
    ]
    if failures:
        record.error = "; ".join(failures)
        return record
    first, second = (reply for reply in replies if isinstance(reply, LLMReply))
    for reply in (first, second):
        require_logprobs(reply, setup, item)
    reading1 = read_order(first.logprobs or (), reasoning)
    reading2 = read_order(second.logprobs or (), reasoning)
    failures = [
        f"order {n}: {why}"
        for n, (reply, reading) in enumerate(((first, reading1), (second, reading2)), start=1)
        if (why := reading_failure(reply, reading, reasoning)) is not None
    ]
    if failures:
        record.error = "; ".join(failures)
        return record
    record.verdict = combine(reading1, reading2)
    if record.verdict.proposed is None:
        record.error = "no A, B or C among the top log-probabilities at the verdict token"
    record.orders = [order_record(reading1, first, "A"), order_record(reading2, second, "B")]
    record.labels = item.labels
    return record


@dataclass
class PairwiseRun:
    """The records of a run, the tokens of all its replies, and what to warn about."""

    records: list[PairRecord]
    tokens: Counter[str]
    warnings: list[str]


def judge_pairs(
    client: LLMClient,
    items: Sequence[PairItem],
    setup: JudgeSetup,
) -> PairwiseRun:
    """One record per item: both orders' letters and probabilities, the three verdicts,
    whether the orders agree, the replies' text; `error` when a call failed or no verdict
    could be read. Also the tokens of all replies, and the warnings."""
    criteria = Criteria()
    tokens: Counter[str] = Counter()
    if setup.prompt.with_criteria:
        criteria = generate_criteria(client, items, setup, tokens)
    judged = [item for item in items if (item.question, item.reference) not in criteria.errors]
    requests = []
    for item in judged:
        text = criteria.texts.get((item.question, item.reference))
        requests.append(judge_request(setup, item, swapped=False, criteria=text))
        requests.append(judge_request(setup, item, swapped=True, criteria=text))
    judged_replies = client.run(requests, label="verdicts")
    tokens.update(reply_tokens(judged_replies))
    replies = iter(judged_replies)
    records = []
    for item in items:
        key = (item.question, item.reference)
        if key in criteria.errors:
            records.append(replace(base_record(item), error=criteria.errors[key]))
            continue
        record = item_record(item, (next(replies), next(replies)), setup)
        if setup.prompt.with_criteria:
            record.criteria = criteria.texts[key]
        records.append(record)
    # A result-only verdict is one token: its reply ends at max_tokens by design.
    cut = criteria.cut + (cut_replies(judged_replies) if setup.prompt.reasoning else 0)
    return PairwiseRun(records, tokens, run_warnings(records, criteria.empty, cut))


def cut_replies(replies: Sequence[LLMReply | LLMError]) -> int:
    """How many of the replies were cut at max_tokens."""
    return sum(isinstance(r, LLMReply) and r.finish_reason == "length" for r in replies)


def fewest_alternatives(record: PairRecord) -> int | None:
    """The fewest top log-probabilities that came at the verdict token of either order."""
    return min(order.alternatives for order in record.orders) if record.orders else None


def run_warnings(records: Sequence[PairRecord], empty_criteria: int, cut: int) -> list[str]:
    """Fewer alternatives than asked for, criteria replies without criteria, and replies cut
    at max_tokens."""
    warnings = []
    counts = [n for n in map(fewest_alternatives, records) if n is not None and n < TOP_LOGPROBS]
    if counts:
        warnings.append(
            f"{len(counts)} items got fewer than the {TOP_LOGPROBS} top log-probabilities "
            f"asked for at a verdict token (as few as {min(counts)}); a letter missing among "
            "them counts as probability 0 (docs/judge.md)"
        )
    if empty_criteria:
        warnings.append(
            f"{empty_criteria} criteria replies were empty; their questions were judged with "
            "empty criteria"
        )
    cut_line = cut_warning(cut)
    if cut_line is not None:
        warnings.append(cut_line)
    return warnings


def summarise(records: Sequence[PairRecord]) -> dict[str, Any]:
    """The measures of all items, and of each task when items name one (the paper's per-task
    columns)."""
    summary = measures(records)
    tasks = list(dict.fromkeys(r.task for r in records if r.task is not None))
    if tasks:
        summary["by_task"] = {
            task: measures([r for r in records if r.task == task]) for task in tasks
        }
    return summary


def measures(records: Sequence[PairRecord]) -> dict[str, Any]:
    """Concordance of each method with the annotators (items with labels), Fleiss' kappa
    among them, robustness, verdict counts, tie-breaks; over the items without errors (their
    number: `judged`). `fewer_alternatives`: the judged items with fewer top
    log-probabilities than asked for at a verdict token."""
    judged = [(r, v) for r in records if (v := r.judged_verdict()) is not None]
    labelled = [(v, r.labels) for r, v in judged if r.labels is not None]
    labels = [item_labels for _, item_labels in labelled]
    summary: dict[str, Any] = {
        "items": len(records),
        "judged": len(judged),
        "errors": len(records) - len(judged),
        "labelled": len(labelled),
        "fewer_alternatives": sum(
            1 for r, _ in judged if (fewest_alternatives(r) or TOP_LOGPROBS) < TOP_LOGPROBS
        ),
    }
    for method in METHODS:
        summary[method] = concordance([v.by_method()[method] for v, _ in labelled], labels)
    summary["robustness"] = robustness([v.consistent for _, v in judged])
    summary["fleiss_kappa"] = fleiss_kappa(labels)
    summary["tie_breaks"] = sum(v.tie_broken for _, v in judged)
    summary["verdicts"] = {}
    for method in METHODS:
        counts = Counter(v.by_method()[method] for _, v in judged)
        summary["verdicts"][method] = {**{x: counts[x] for x in LETTERS}, "none": counts[None]}
    return summary
