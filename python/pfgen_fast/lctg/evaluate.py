"""An evaluation as the benchmark runs it: the header/footer remover on every generation of
every constraint, the quality judge on every cleaned text (適切/不適切, then once True/False),
the four checks, and the scores. Calls go through the shared LLM client (cached, logged)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pfgen_fast.common.llm import ChatRequest, LLMClient, LLMError, LLMReply
from pfgen_fast.common.reasoning import after_reasoning, strip_reasoning, unanswered
from pfgen_fast.lctg.aggregate import ITERATIONS, ConstraintScores, constraint_scores
from pfgen_fast.lctg.checks import INVALID, check, delete_blank
from pfgen_fast.lctg.data import CONSTRAINTS, PromptRow
from pfgen_fast.lctg.outputs import AnalysisRecord, GenerationRow
from pfgen_fast.lctg.templates import Templates

FIRST_LABELS = {"適切": True, "不適切": False}
RETRY_LABELS = {"True": True, "False": False}
CUT = "cut at max_tokens before the end of its reply (raise --max-tokens)"


@dataclass
class Item(AnalysisRecord):
    """One generation being evaluated: its record (a `failure` leaves the rates it would
    enter), and what the scores need besides."""

    remover_failed: bool = False
    # Why the remover's server refused the request (HTTP 400): the item is "Invalid Error".
    remover_refusal: str | None = None


@dataclass(frozen=True)
class Calls:
    """How the remover and the judge are asked: the client, the benchmark's templates and
    the request parameters."""

    client: LLMClient
    templates: Templates
    params: dict[str, Any]

    def chat(self, prompt: str) -> ChatRequest:
        messages = [
            {"role": "system", "content": self.templates.system_prompt},
            {"role": "user", "content": prompt},
        ]
        return ChatRequest(messages=messages, params=self.params)

    def run(self, requests: list[ChatRequest], stage: str) -> list[LLMReply | LLMError]:
        """The replies of one stage's requests, in order."""
        return self.client.run(requests, label=stage)


def call_failure(result: LLMReply | LLMError) -> str | None:
    """Why a remover or judge call gives no usable reply: the call failed (HTTP 400 from the
    judge included), or the reply was cut at max_tokens; None otherwise."""
    if isinstance(result, LLMError):
        reason = getattr(result, "reason", None)
        return reason if isinstance(reason, str) and reason else str(result)
    if result.status == 400:
        error = result.raw.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        return f"HTTP 400: {message or 'refused'}"
    if result.finish_reason == "length":
        return unanswered(after_reasoning(result.text), "length") or CUT
    return None


def remove_headers(calls: Calls, items: list[Item]) -> None:
    """The remover's text (after its reasoning) for every item; a refused request (HTTP 400)
    is "Invalid Error", as the benchmark's BadRequestError; any other failure is the item's."""
    requests = [calls.chat(calls.templates.remover(item.raw)) for item in items]
    for item, result in zip(items, calls.run(requests, "remover"), strict=True):
        if result.status == 400:
            item.remover_status, item.cleaned = 400, INVALID
            item.remover_refusal = call_failure(result)
        elif (failure := call_failure(result)) is not None:
            item.failure, item.remover_failed = f"remover: {failure}", True
        elif isinstance(result, LLMReply):
            item.remover_status, item.cleaned = result.status, after_reasoning(result.text)


def judge_round(
    calls: Calls, requests: list[ChatRequest], items: list[Item], stage: str
) -> list[tuple[Item, str]]:
    """Asks the judge; each item with a reply gets it appended to its `judge_replies` and
    comes back with the reply after its reasoning, blanks removed; the others get `failure`."""
    answered = []
    for item, result in zip(items, calls.run(requests, stage), strict=True):
        failure = call_failure(result)
        if failure is not None or not isinstance(result, LLMReply):
            item.failure = f"{stage}: {failure}"
            continue
        item.judge_replies.append(result.text)
        answered.append((item, delete_blank(after_reasoning(result.text))))
    return answered


def judge(calls: Calls, items: list[Item], base_texts: dict[int, str]) -> None:
    """The quality label of every item the remover cleaned: the first reply, blanks removed,
    when it is exactly 適切 or 不適切; else the retry's when exactly True or False; else the
    retry's text."""
    cleaned = [item for item in items if not item.remover_failed]
    first = [
        calls.chat(calls.templates.judge(item.cleaned, base_texts[item.prompt_id]))
        for item in cleaned
    ]
    pending = []
    for item, answer in judge_round(calls, first, cleaned, "judge"):
        label = FIRST_LABELS.get(answer)
        if label is None:
            pending.append(item)
        else:
            item.quality = label
    retry = [
        calls.chat(calls.templates.judge_retry(item.cleaned, base_texts[item.prompt_id]))
        for item in pending
    ]
    for item, answer in judge_round(calls, retry, pending, "judge retry"):
        item.quality = RETRY_LABELS.get(answer, answer)


def make_items(rows: list[GenerationRow], strip: bool) -> list[Item]:
    """The items of the rows; with `strip` (--strip-reasoning), each generation's `<think>`
    blocks removed first."""
    return [
        Item(
            row.prompt_id,
            constraint,
            iteration,
            strip_reasoning(text) if strip else text,
        )
        for row in rows
        for constraint in CONSTRAINTS
        for iteration, text in enumerate(row.texts[constraint][:ITERATIONS])
    ]


def run_evaluation(
    client: LLMClient,
    templates: Templates,
    rows: list[GenerationRow],
    prompts: dict[int, PromptRow],
    params: dict[str, Any],
    *,
    strip: bool = False,
) -> list[Item]:
    """Every generation cleaned, judged and checked (or its failure recorded)."""
    items = make_items(rows, strip)
    calls = Calls(client, templates, params)
    remove_headers(calls, items)
    # The benchmark's judge script reads the source text from the generation file.
    base_texts = {row.prompt_id: row.base_text or prompts[row.prompt_id].base_text for row in rows}
    judge(calls, items, base_texts)
    for item in items:
        if not item.remover_failed:
            item.check = check(item.constraint, item.raw, item.cleaned, prompts[item.prompt_id])
    return items


def scores_of(items: list[Item]) -> dict[str, ConstraintScores]:
    """Per constraint, from the items' checks and labels, by iteration in the rows' order;
    items the remover failed on enter neither rate, those the judge failed on no quality."""
    scores = {}
    for constraint in CONSTRAINTS:
        mine = [item for item in items if item.constraint == constraint]
        by_iteration = [[i for i in mine if i.iteration == n] for n in range(ITERATIONS)]
        scores[constraint] = constraint_scores(
            [[i.check for i in its if not i.remover_failed] for its in by_iteration],
            [[i.quality for i in its] for its in by_iteration],
        )
    return scores


def failures(items: list[Item]) -> list[str]:
    """The items' failure reasons."""
    return [item.failure for item in items if item.failure is not None]


def remover_refusals(items: list[Item]) -> list[str]:
    """Why the remover's server refused the items it refused (scored as "Invalid Error")."""
    return [item.remover_refusal for item in items if item.remover_refusal is not None]
