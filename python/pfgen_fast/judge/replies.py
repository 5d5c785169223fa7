"""What the judge's commands read from any reply: why a call or a reply gives no answer (in
the words every command reports per item), the answer after the judge's reasoning, and the
tokens the replies cost."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from pfgen_fast.common.llm import LLMError, LLMReply
from pfgen_fast.common.reasoning import after_reasoning, unanswered

# What a judge's reply cut by max_tokens is reported as, once it has an answer begun.
CUT = "cut at max_tokens before its {what} (raise --max-tokens)"


def error_reason(error: LLMError) -> str:
    """A failed call's short reason (the client's per-item `reason` when it gives one)."""
    reason = getattr(error, "reason", None)
    return reason if isinstance(reason, str) and reason else str(error)


def answer_failure(result: LLMReply | LLMError, what: str, *, last: bool = True) -> str | None:
    """Why a reply gives no `what` (verdict, rating, criteria) before it is even read: the
    call failed, the reply is empty or was cut inside its reasoning, or, when the `what` comes
    `last` in the reply, it was cut at max_tokens; None when it can be read."""
    if isinstance(result, LLMError):
        return error_reason(result)
    missing = unanswered(after_reasoning(result.text), result.finish_reason)
    if missing is not None:
        return missing
    if last and result.finish_reason == "length":
        return CUT.format(what=what)
    return None


def reply_tokens(replies: Sequence[LLMReply | LLMError]) -> Counter[str]:
    """Prompt and completion tokens of the replies, cached ones included (what the evaluation
    costs from scratch)."""
    tokens: Counter[str] = Counter()
    for reply in replies:
        if isinstance(reply, LLMReply):
            tokens["prompt"] += reply.usage.get("prompt_tokens", 0)
            tokens["completion"] += reply.usage.get("completion_tokens", 0)
    return tokens


def reason_counts(reasons: Iterable[str]) -> str:
    """Failure reasons counted, most frequent first: `2 × empty reply; 1 × ...`."""
    return "; ".join(f"{n} × {reason}" for reason, n in Counter(reasons).most_common())
