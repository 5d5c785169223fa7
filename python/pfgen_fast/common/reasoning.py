"""What a reasoning model's reply holds besides its answer.

Servers give the reasoning in one of two ways: inside the content, as `<think>…</think>` blocks
before the answer, or apart (vLLM's and SGLang's reasoning parsers put it in the message's
`reasoning_content`, some servers in `reasoning`; the client reads it into `LLMReply.reasoning`
and never takes it as the answer). These functions deal with the first way.

* `strip_reasoning` is the `--strip-reasoning` option of the commands that record a model's
  answer: complete blocks removed (any case, across lines), then, as llm-jp-eval-mm's
  `strip_reasoning` (its dev-2026-05 branch) says it does, an opening tag left without its
  closing one means the reply never reached its answer, so the answer is empty. Unlike that
  code, a lone opening tag gives the empty answer too (its code keeps what follows the tag,
  which is reasoning cut short), and a closing tag with no opening one before it (chat
  templates that open the block in the prompt) ends reasoning that began with the reply.
* `after_reasoning` is what a judge's verdict or score is read from: the same rules, so a
  letter or a number inside the reasoning is never taken for the verdict.
"""

from __future__ import annotations

import re

# A whole block, shortest match, across lines, tags in any case.
THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
OPENING = re.compile(r"<think>", re.IGNORECASE)
CLOSING = re.compile(r"</think>", re.IGNORECASE)


def strip_reasoning(text: str) -> str:
    """The answer of a reply with its `<think>` blocks removed, stripped of surrounding
    white space; "" when reasoning is left open (the reply was cut before its answer)."""
    closing = CLOSING.search(text)
    opening = OPENING.search(text)
    if closing is not None and (opening is None or closing.start() < opening.start()):
        text = text[closing.end() :]
    text = THINK_BLOCK.sub("", text)
    if OPENING.search(text) is not None:
        return ""
    return text.strip()


def has_reasoning(text: str) -> bool:
    """Whether the text holds a `<think>` tag, opening or closing."""
    return OPENING.search(text) is not None or CLOSING.search(text) is not None


def after_reasoning(text: str) -> str:
    """The part of a judge's reply to read a verdict or score from: the reply itself when it
    holds no `<think>` tag (so replies without reasoning are read exactly as before), else
    what `strip_reasoning` leaves."""
    return strip_reasoning(text) if has_reasoning(text) else text


def unanswered(text: str, finish_reason: str | None) -> str | None:
    """Why a reply gives no answer, in the words every command reports per item: None when
    `text` (the answer as the command takes it) is not empty."""
    if text.strip():
        return None
    if finish_reason == "length":
        return "cut at max_tokens before an answer (raise --max-tokens)"
    return "empty reply"
