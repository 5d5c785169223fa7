"""What the stand-in server answers: a `Reply` as a responder decides it, the bytes it becomes
on each endpoint, and the responders most tests start from (a deterministic answer per prompt,
the ways a server fails, failures every n-th request)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

# One generated token: (token, log-probability, top alternatives as (token, log-probability)).
Token = tuple[str, float, list[tuple[str, float]]]
Responder = Callable[[str, dict[str, Any]], "Reply"]
ReasoningPlace = Literal["think", "reasoning_content", "reasoning"]


def default_usage() -> dict[str, int]:
    return {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


@dataclass(frozen=True)
class Reply:
    """One reply as a responder decides it.

    A completed reply (`status` 200) carries `text` (None sends `content: null`), `logprobs`
    (one `Token` per generated token, in the chat or the completions form by the endpoint
    asked; `[]` sends `logprobs.content: []`; the top lists are sent as given, so a reply may
    hold fewer alternatives than asked), `finish_reason` and `usage`. `reasoning` goes where
    `reasoning_in` says: inside `<think>…</think>` before the text of `content` (left open when
    `text` is None: a reply cut inside its reasoning), or apart in `message.reasoning_content`
    (vLLM, SGLang) or `message.reasoning`.

    Failures: `status` other than 200 sends `{"error": {"message": error}}`, with Retry-After
    when `retry_after` is set; `raw` sends these bytes as the body instead (with `status` and
    `content_type`: an HTML page, JSON without `choices`, another server's error layout);
    `malformed` sends a JSON body cut short; `cut` announces the whole body but sends half of
    it and closes; `drop` closes the connection without any reply. `delay` seconds pass first.
    """

    text: str | None = ""
    logprobs: list[Token] | None = None
    finish_reason: str = "stop"
    reasoning: str | None = None
    reasoning_in: ReasoningPlace = "reasoning_content"
    usage: dict[str, int] = field(default_factory=default_usage)
    status: int = 200
    error: str = "error"
    retry_after: str = ""
    raw: bytes | None = None
    content_type: str = "application/json"
    malformed: bool = False
    cut: bool = False
    drop: bool = False
    delay: float = 0.0


def answer_for(text: str) -> str:
    """The stand-in's deterministic answer to a prompt."""
    digest = hashlib.sha1(text.encode()).hexdigest()
    return f"回答{int(digest[:6], 16) % 1000}番です。"


def prompt_text(body: dict[str, Any]) -> str:
    """A request's prompt: the text parts of a chat's last message, or a completion's prompt."""
    messages = body.get("messages")
    if not messages:
        return str(body.get("prompt", ""))
    content = messages[-1].get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if part.get("type") == "text")


def answer(path: str, body: dict[str, Any]) -> Reply:
    """The default responder: `answer_for` the prompt, on every endpoint."""
    return Reply(text=answer_for(prompt_text(body)))


def cut_to_max_tokens(reply: Reply, max_tokens: int) -> Reply:
    """The reply a server honouring `max_tokens` sends, one character a token: reasoning, then
    text, cut after `max_tokens` of them with finish_reason "length" (text None when the cut
    falls inside the reasoning); the log-probabilities are cut to the text kept."""
    reasoning, text = reply.reasoning or "", reply.text or ""
    if reply.status != 200 or len(reasoning) + len(text) <= max_tokens:
        return reply
    kept = max(0, max_tokens - len(reasoning))
    logprobs = None if reply.logprobs is None else reply.logprobs[:kept]
    if max_tokens <= len(reasoning):
        cut_reasoning = reasoning[:max_tokens]
        return replace(
            reply, reasoning=cut_reasoning, text=None, logprobs=logprobs, finish_reason="length"
        )
    return replace(reply, text=text[:kept], logprobs=logprobs, finish_reason="length")


def chat_logprobs(tokens: list[Token]) -> dict[str, Any]:
    return {
        "content": [
            {
                "token": token,
                "logprob": logprob,
                "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top],
            }
            for token, logprob, top in tokens
        ]
    }


def completion_logprobs(tokens: list[Token]) -> dict[str, Any]:
    return {
        "tokens": [token for token, _, _ in tokens],
        "token_logprobs": [logprob for _, logprob, _ in tokens],
        "top_logprobs": [dict(top) for _, _, top in tokens],
    }


def content_of(reply: Reply) -> str | None:
    """The `content` (or completion `text`) field: the text, behind the reasoning when that
    goes inside `<think>`."""
    if reply.reasoning is None or reply.reasoning_in != "think":
        return reply.text
    if reply.text is None:
        return f"<think>{reply.reasoning}"
    return f"<think>{reply.reasoning}</think>{reply.text}"


def completed_body(path: str, reply: Reply, model: str) -> dict[str, Any]:
    """The body of a completed reply on `path`: a chat completion, a text completion, or the
    model list of `GET /models`."""
    if path.endswith("/models"):
        return {"object": "list", "data": [{"id": model, "object": "model", "owned_by": "test"}]}
    chat = path.endswith("/chat/completions")
    choice: dict[str, Any] = {"index": 0, "finish_reason": reply.finish_reason}
    if chat:
        message: dict[str, Any] = {"role": "assistant", "content": content_of(reply)}
        if reply.reasoning is not None and reply.reasoning_in != "think":
            message[reply.reasoning_in] = reply.reasoning
        choice["message"] = message
    else:
        choice["text"] = content_of(reply)
    if reply.logprobs is not None:
        form = chat_logprobs if chat else completion_logprobs
        choice["logprobs"] = form(reply.logprobs)
    kind = "chat.completion" if chat else "text_completion"
    return {"object": kind, "model": model, "choices": [choice], "usage": reply.usage}


def reply_bytes(path: str, reply: Reply, model: str) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of a reply that is sent (every case but `drop`); a `cut`
    reply's body is sent only in part."""
    if reply.raw is not None:
        status, body = reply.status, reply.raw
    elif reply.malformed:
        status, body = 200, b'{"choices": ['
    elif reply.status != 200:
        error = {"error": {"message": reply.error}}
        status, body = reply.status, json.dumps(error, ensure_ascii=False).encode()
    else:
        completed = completed_body(path, reply, model)
        status, body = 200, json.dumps(completed, ensure_ascii=False).encode()
    headers = {"Content-Type": reply.content_type, "Content-Length": str(len(body))}
    if reply.retry_after:
        headers["Retry-After"] = reply.retry_after
    return status, headers, body


# The ways a server never gives a usable answer (`failing`): HTTP 500, no reply within a short
# client timeout, a body that is not JSON, an HTML page, JSON without `choices`, the connection
# dropped before any reply, and HTTP 429 every time (past any number of retries).
FAILURE_MODES = ("http-500", "timeout", "bad-json", "html", "no-choices", "dropped", "429")
# How long the "timeout" mode waits before answering: longer than `FAST_CLIENT`'s timeout.
TIMEOUT_DELAY = 3.0
# Client options that make each failure final quickly: short timeout, few retries.
FAST_CLIENT = ["--timeout", "0.5", "--max-retries", "1"]
FAILURES = {
    "http-500": Reply(status=500, error="boom"),
    "timeout": Reply(status=500, error="too late", delay=TIMEOUT_DELAY),
    "bad-json": Reply(malformed=True),
    "html": Reply(
        raw=b"<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html"
    ),
    "no-choices": Reply(raw=b'{"object": "chat.completion", "usage": {}}'),
    "dropped": Reply(drop=True),
    "429": Reply(status=429, error="rate limited", retry_after="0"),
}


def failing(mode: str) -> Responder:
    """A responder failing every request in one of `FAILURE_MODES`."""
    reply = FAILURES[mode]
    return lambda path, body: reply


@dataclass
class Flaky:
    """A responder that answers as `base` does, but fails by the request's number (from 1):
    every `fail_every`-th with HTTP 500, every `malformed_every`-th with a body that is not
    JSON, every `empty_every`-th with a blank answer; every `slow_every`-th waits
    `slow_seconds` first."""

    base: Responder = answer
    fail_every: int = 0
    malformed_every: int = 0
    empty_every: int = 0
    slow_every: int = 0
    slow_seconds: float = 0.0
    count: int = field(default=0, init=False)  # requests so far
    lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __call__(self, path: str, body: dict[str, Any]) -> Reply:
        with self.lock:
            self.count += 1
            number = self.count
        if every(self.slow_every, number):
            time.sleep(self.slow_seconds)
        if every(self.fail_every, number):
            return Reply(status=500, error="boom")
        if every(self.malformed_every, number):
            return Reply(malformed=True)
        if every(self.empty_every, number):
            return Reply(text="   ")
        return self.base(path, body)


def every(period: int, number: int) -> bool:
    return period > 0 and number % period == 0
