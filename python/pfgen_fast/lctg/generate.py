"""Generations for a task through the shared LLM client, written in the benchmark generator's
format (`generated_result_v1.jsonl`). The stored prompt of each constraint is sent as it is;
generation n of a prompt carries seed + n, so the three samples are distinct requests (each
cached on its own: an interrupted run resumes) and a re-run with the same seed repeats them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pfgen_fast.common.llm import ChatRequest, LLMClient, LLMError, LLMReply
from pfgen_fast.common.reasoning import strip_reasoning, unanswered
from pfgen_fast.lctg.data import CONSTRAINTS, PromptRow
from pfgen_fast.lctg.outputs import GENERATIONS_NAME, generated_rows, write_generations


def generation_requests(
    prompts: list[PromptRow],
    system_prompt: str | None,
    generations: int,
    params: dict[str, Any],
    seed: int,
) -> list[ChatRequest]:
    """Requests in the order prompt, constraint, generation."""
    requests = []
    for row in prompts:
        for constraint in CONSTRAINTS:
            messages = [{"role": "user", "content": row.prompts[constraint]}]
            if system_prompt is not None:
                messages.insert(0, {"role": "system", "content": system_prompt})
            for n in range(generations):
                requests.append(ChatRequest(messages, {**params, "seed": seed + n}))
    return requests


def generation_text(result: LLMReply | LLMError, strip: bool) -> tuple[str, str | None]:
    """The generated text (its `<think>` blocks removed with `strip`), and why there is none:
    the call failed, or the reply was cut at max_tokens before an answer (inside its
    reasoning). An empty reply that ended by itself is the model's text, as the benchmark's
    generator records it."""
    if isinstance(result, LLMError):
        reason = getattr(result, "reason", None)
        return "", reason if isinstance(reason, str) and reason else str(result)
    text = strip_reasoning(result.text) if strip else result.text
    if result.finish_reason == "length":
        return text, unanswered(text, "length")
    return text, None


def generate(
    client: LLMClient,
    prompts: list[PromptRow],
    *,
    model: str,
    system_prompt: str | None,
    generations: int,
    params: dict[str, Any],
    seed: int,
    out: Path,
    strip: bool = False,
) -> tuple[Path, list[str]]:
    """Generates every prompt's texts and writes the file: the path, and the failures (one
    line each, naming prompt, constraint and generation). A prompt with a failed generation
    is left out of the file (the benchmark scores the prompts present); its replies received
    are cached, so a re-run resumes."""
    requests = generation_requests(prompts, system_prompt, generations, params, seed)
    results = client.run(requests, label="generation")
    texts, failures, failed_prompts = [], [], set()
    for index, result in enumerate(results):
        text, failure = generation_text(result, strip)
        texts.append(text)
        if failure is not None:
            row, rest = divmod(index, len(CONSTRAINTS) * generations)
            constraint, n = divmod(rest, generations)
            failed_prompts.add(row)
            failures.append(
                f"prompt {prompts[row].prompt_id}, {CONSTRAINTS[constraint]}, generation "
                f"{n + 1}: {failure}"
            )
    path = out / GENERATIONS_NAME
    rows = generated_rows(prompts, texts, model, generations)
    kept = [record for index, record in enumerate(rows) if index not in failed_prompts]
    write_generations(path, kept)
    return path, failures
