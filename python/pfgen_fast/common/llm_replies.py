"""What goes to a model and what comes back: the requests, the replies as parsed from their
bodies (text, reasoning, log-probabilities), the error of a request that failed for good, and
the counts of a client's calls."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pfgen_fast.common.errors import PfgenError


class LLMError(PfgenError):
    """A request that failed for good, or a run that stopped. `status`: the last HTTP status,
    if any came; `reason`: what happened to this one request, in a few words (what a command
    records for the item), e.g. "prompt longer than the server's context (2048 tokens)"."""

    def __init__(self, message: str, status: int | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.reason = message if reason is None else reason


@dataclass(frozen=True)
class ChatRequest:
    """A chat: messages as the API takes them; `params` passed through, None values dropped.
    `sample`: which of several samples of the same request this is (a run's trial), part of
    the cache key and never sent, so that samples are asked apart."""

    messages: list[dict[str, Any]]
    params: dict[str, Any] = field(default_factory=dict)
    sample: int = 0
    endpoint: ClassVar[str] = "/chat/completions"

    def body(self, model: str) -> dict[str, Any]:
        return {"model": model, "messages": self.messages, **present(self.params)}


@dataclass(frozen=True)
class CompletionRequest:
    """A plain completion of `prompt`; `params` passed through, None values dropped; `sample`
    as `ChatRequest`'s."""

    prompt: str
    params: dict[str, Any] = field(default_factory=dict)
    sample: int = 0
    endpoint: ClassVar[str] = "/completions"

    def body(self, model: str) -> dict[str, Any]:
        return {"model": model, "prompt": self.prompt, **present(self.params)}


def present(params: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in params.items() if value is not None}


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token, its log-probability, and the top alternatives as returned."""

    token: str
    logprob: float  # NaN when the server gave none (the first token of an echoed prompt)
    top: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class LLMReply:
    text: str  # message content / completion text ("" if null)
    finish_reason: str | None
    logprobs: tuple[TokenLogprob, ...] | None  # None when the server sent none
    usage: dict[str, int]
    status: int  # 200, or 400 when the client accepts 400 as an answer
    cached: bool  # came from the response cache (no call made)
    raw: dict[str, Any]  # the response body as received (or the 400 error body)
    # Reasoning the server returned apart from the content (`reasoning_content` or
    # `reasoning` of the message); never part of `text`.
    reasoning: str | None = None


@dataclass
class LLMStats:
    """`calls`: HTTP requests sent (retries included); `cached`: replies taken from the cache
    (or from an identical request of the run); `failed`: requests that failed for good; `cut`:
    replies cut at max_tokens (`finish_reason` "length"), cached or not; tokens as the servers
    counted them in the replies of calls made (cached replies cost nothing)."""

    calls: int = 0
    cached: int = 0
    failed: int = 0
    cut: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class MalformedReply(ValueError):
    """A 200 reply whose body is not a usable (chat) completion."""


def parse_reply(raw: Any, chat: bool, status: int, cached: bool) -> LLMReply:
    """The reply in a body; MalformedReply when it has no usable first choice."""
    if not isinstance(raw, dict):
        raise MalformedReply("the body is not a JSON object")
    choices = raw.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedReply("no choices")
    choice = choices[0]
    if chat:
        message = choice.get("message")
        if not isinstance(message, dict):
            raise MalformedReply("choices[0] has no message")
        text = message.get("content")
        reasoning = message.get("reasoning_content") or message.get("reasoning")
    else:
        text = choice.get("text")
        reasoning = None
    if text is not None and not isinstance(text, str):
        raise MalformedReply("the generated text is not a string")
    finish = choice.get("finish_reason")
    usage = raw.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    return LLMReply(
        text=text or "",
        finish_reason=finish if isinstance(finish, str) else None,
        logprobs=parse_logprobs(choice.get("logprobs")),
        usage={k: v for k, v in usage.items() if type(v) is int},
        status=status,
        cached=cached,
        raw=raw,
        reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
    )


def parse_logprobs(value: Any) -> tuple[TokenLogprob, ...] | None:
    """Chat form (`content: [{token, logprob, top_logprobs: [{token, logprob}]}]`) or
    completions form (`tokens`, `token_logprobs`, `top_logprobs: [{token: logprob}]`)."""
    if value is None:
        return None
    try:
        if "content" in value:
            if value["content"] is None:
                return None
            return tuple(
                TokenLogprob(
                    str(item["token"]),
                    number(item["logprob"]),
                    tuple(
                        (str(alt["token"]), number(alt["logprob"]))
                        for alt in item.get("top_logprobs") or ()
                    ),
                )
                for item in value["content"]
            )
        tokens, logprobs = value["tokens"], value["token_logprobs"]
        tops = value.get("top_logprobs") or [None] * len(tokens)
        if not len(tokens) == len(logprobs) == len(tops):
            raise MalformedReply("logprobs: lists of different lengths")
        return tuple(
            TokenLogprob(
                str(token),
                number(logprob),
                tuple((str(t), number(lp)) for t, lp in (top or {}).items()),
            )
            for token, logprob, top in zip(tokens, logprobs, tops, strict=True)
        )
    except (KeyError, TypeError, AttributeError) as error:
        raise MalformedReply(f"logprobs: {error!r}") from None


def number(value: Any) -> float:
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MalformedReply(f"logprobs: {value!r} is not a number")
    return float(value)


def request_for_record(value: Any) -> Any:
    """A request body as the cache and the log keep it: each data URL
    (`data:TYPE;base64,...`) as `data:TYPE;base64,(N characters)`, the rest as it is (the
    cache key covers the whole request)."""
    if isinstance(value, dict):
        return {name: request_for_record(item) for name, item in value.items()}
    if isinstance(value, list):
        return [request_for_record(item) for item in value]
    if isinstance(value, str) and value.startswith("data:"):
        kind, separator, data = value.partition(";base64,")
        if separator:
            return f"{kind};base64,({len(data)} characters)"
    return value
