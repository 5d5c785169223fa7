"""The published prompts of pfgen-bench (generation.md): few-shot examples, instruction
and layout by mode, and the sampling seed of each task."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pfgen_fast.common.errors import DataError, InputError
from pfgen_fast.common.jsonl import iter_json_lines, require

# How a task is put to the model: the completions endpoint, the prompt as one chat message,
# or system and user chat messages.
Mode = Literal["completion", "qa", "chat"]
MODES: tuple[Mode, ...] = get_args(Mode)
INSTRUCTIONS = {
    "chat": "例と同様の文体及び文字数で、ユーザの質問に1行で答えてください。\n\n",
    "qa": "例と同様の文体及び文字数で、質問に1行で答えてください。\n\n",
    "completion": "",
}


@dataclass(frozen=True)
class Example:
    question: str
    answer: str


def load_examples(path: Path) -> list[Example]:
    """`questions.jsonl`: the 50 human-written example answers, in file order."""
    examples = [
        Example(
            require(line.value, "question", str, line.where),
            require(line.value, "answer", str, line.where),
        )
        for line in iter_json_lines(path)
    ]
    if not examples:
        raise DataError(f"{path}: no questions")
    return examples


def unescape_prefix(prefix: str) -> str:
    """A prefix as typed (`\\n`, `\\t`, ... not yet interpreted), read as the published runner
    reads it: Python backslash escapes of ASCII characters, other text kept as is."""
    try:
        return prefix.encode("utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
    except UnicodeError:
        raise InputError(
            f"prefix {prefix!r}: unusable backslash escape (the published runner reads "
            "escapes of ASCII characters only, such as \\n and \\t)"
        ) from None


def task_seed(seed: str, trial: int) -> int:
    """The sampling seed of every task of a trial."""
    return int(hashlib.sha1(f"{seed}::{trial}".encode()).hexdigest(), 16) % 2**31


def example_block(examples: list[Example], question: str, trial: int, count: int, seed: str) -> str:
    """The few-shot examples of one task: the other questions, in the order of a per-trial hash."""
    others = [e for e in examples if e.question != question]
    others.sort(key=lambda e: hashlib.sha1(f"{seed}::{trial}::{e.question}".encode()).hexdigest())
    return "".join(f"Q: {e.question}\nA: {e.answer}\n\n" for e in others[:count])


def build_task(
    examples: list[Example],
    question: str,
    mode: Mode,
    trial: int,
    num_examples: int = 20,
    prefix: str = "",
    seed: str = "",
) -> dict[str, Any]:
    """One task: `question`, then `prompt` (completion, qa) or `system_prompt` and
    `user_prompt` (chat), then `seed`. `prefix` is the text itself (escapes interpreted)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (one of {', '.join(MODES)})")
    block = example_block(examples, question, trial, num_examples, seed)
    system = INSTRUCTIONS[mode] + "## 回答例\n" + block.strip()
    user = f"Q: {question}\n" + ("A:" if mode == "completion" else "")
    task: dict[str, Any] = {"question": question}
    if mode == "chat":
        task["system_prompt"] = prefix + system.strip()
        task["user_prompt"] = user.strip()
    elif mode == "qa":
        task["prompt"] = prefix + system.strip() + "\n\n## 質問\n" + user.strip()
    else:
        task["prompt"] = prefix + system.strip() + "\n\n" + user.strip()
    task["seed"] = task_seed(seed, trial)
    return task
