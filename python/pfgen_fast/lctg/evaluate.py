"""An evaluation as the benchmark runs it: the header/footer remover on every generation of
every constraint, the quality judge on every cleaned text (適切/不適切, then once True/False),
the four checks, and the scores. Calls go through the shared LLM client (cached, logged)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.llm import ChatRequest, LLMClient, LLMError, LLMReply
from pfgen_fast.lctg.aggregate import ITERATIONS, ConstraintScores, constraint_scores
from pfgen_fast.lctg.checks import INVALID, check, delete_blank
from pfgen_fast.lctg.data import CONSTRAINTS, PromptRow
from pfgen_fast.lctg.generations import GenerationRow
from pfgen_fast.lctg.templates import Templates

# Told (stage, requests done, requests) as replies come in.
Progress = Callable[[str, int, int], None]
FIRST_LABELS = {"適切": True, "不適切": False}
RETRY_LABELS = {"True": True, "False": False}


@dataclass
class Item:
    """One generation: the texts, the check of its constraint and the judge's verdict."""

    prompt_id: int
    constraint: str
    iteration: int
    raw: str
    cleaned: str = ""
    remover_status: int = 200
    check: bool | None = None
    judge_replies: list[str] = field(default_factory=list)  # as received; a retry second
    quality: bool | str = ""  # True/False, or the unparseable reply (blanks removed)

    def record(self) -> dict[str, Any]:
        return {
            "prompt_id": self.prompt_id,
            "constraint": self.constraint,
            "iteration": self.iteration,
            "raw": self.raw,
            "cleaned": self.cleaned,
            "remover_status": self.remover_status,
            "check": self.check,
            "judge_replies": self.judge_replies,
            "quality": self.quality,
        }


def chat(templates: Templates, prompt: str, params: dict[str, Any]) -> ChatRequest:
    messages = [
        {"role": "system", "content": templates.system_prompt},
        {"role": "user", "content": prompt},
    ]
    return ChatRequest(messages=messages, params=params)


def replies(
    client: LLMClient, requests: Sequence[ChatRequest], role: str, progress: Progress | None
) -> list[LLMReply]:
    """The replies in order; a PfgenError when a call failed for good (the replies received are
    cached, so running again resumes)."""
    callback = None if progress is None else partial(progress, role)
    results = client.run(requests, callback, label=role)
    failed = [result for result in results if isinstance(result, LLMError)]
    if failed:
        raise PfgenError(
            f"{len(failed)} of {len(results)} {role} calls failed (first: {failed[0]}); the "
            "replies received are cached: run the command again to resume"
        )
    return [result for result in results if isinstance(result, LLMReply)]


def remove_headers(
    client: LLMClient,
    templates: Templates,
    items: list[Item],
    params: dict[str, Any],
    progress: Progress | None,
) -> None:
    """The remover's text for every item; a refused request (HTTP 400) is "Invalid Error"."""
    requests = [chat(templates, templates.remover(item.raw), params) for item in items]
    for item, reply in zip(items, replies(client, requests, "remover", progress), strict=True):
        item.remover_status = reply.status
        item.cleaned = INVALID if reply.status == 400 else reply.text


def judge(
    client: LLMClient,
    templates: Templates,
    items: list[Item],
    base_texts: dict[int, str],
    params: dict[str, Any],
    progress: Progress | None,
) -> None:
    """The quality label of every item: the first reply, blanks removed, when it is exactly
    適切 or 不適切; else the retry's when exactly True or False; else the retry's text."""
    first = [
        chat(templates, templates.judge(item.cleaned, base_texts[item.prompt_id]), params)
        for item in items
    ]
    pending = []
    for item, reply in zip(items, judged(client, first, "judge", progress), strict=True):
        item.judge_replies = [reply.text]
        label = FIRST_LABELS.get(delete_blank(reply.text))
        if label is None:
            pending.append(item)
        else:
            item.quality = label
    retry = [
        chat(templates, templates.judge_retry(item.cleaned, base_texts[item.prompt_id]), params)
        for item in pending
    ]
    for item, reply in zip(pending, judged(client, retry, "judge retry", progress), strict=True):
        item.judge_replies.append(reply.text)
        answer = delete_blank(reply.text)
        item.quality = RETRY_LABELS.get(answer, answer)


def judged(
    client: LLMClient, requests: list[ChatRequest], stage: str, progress: Progress | None
) -> list[LLMReply]:
    """The judge's replies; one the server refused (HTTP 400) is an error, as in the
    benchmark, whose judge script stops there."""
    results = replies(client, requests, stage, progress)
    for reply in results:
        if reply.status == 400:
            raise PfgenError(f"the judge's server refused a request (HTTP 400): {reply.raw}")
    return results


def make_items(rows: list[GenerationRow]) -> list[Item]:
    return [
        Item(row.prompt_id, constraint, iteration, row.texts[constraint][iteration])
        for row in rows
        for constraint in CONSTRAINTS
        for iteration in range(ITERATIONS)
    ]


def run_evaluation(
    client: LLMClient,
    templates: Templates,
    rows: list[GenerationRow],
    prompts: dict[int, PromptRow],
    params: dict[str, Any],
    progress: Progress | None = None,
) -> list[Item]:
    """Every generation cleaned, judged and checked."""
    items = make_items(rows)
    remove_headers(client, templates, items, params, progress)
    # The benchmark's judge script reads the source text from the generation file.
    base_texts = {row.prompt_id: row.base_text or prompts[row.prompt_id].base_text for row in rows}
    judge(client, templates, items, base_texts, params, progress)
    for item in items:
        item.check = check(item.constraint, item.raw, item.cleaned, prompts[item.prompt_id])
    return items


def scores_of(items: list[Item]) -> dict[str, ConstraintScores]:
    """Per constraint, from the items' checks and labels, by iteration in the rows' order."""
    scores = {}
    for constraint in CONSTRAINTS:
        mine = [item for item in items if item.constraint == constraint]
        by_iteration = [[i for i in mine if i.iteration == n] for n in range(ITERATIONS)]
        scores[constraint] = constraint_scores(
            [[i.check for i in its] for its in by_iteration],
            [[i.quality for i in its] for its in by_iteration],
        )
    return scores
