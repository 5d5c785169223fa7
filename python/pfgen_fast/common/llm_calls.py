"""One request to one server with its retries, and what its failure means.

A request ends in a reply or in a `Failure` of one of three kinds:
* `ITEM`: the server refused this request alone (HTTP 400, 413, 422: a prompt longer than the
  context, an image too large, a field the server rejects for this input); never retried;
* `RETRIED`: no usable reply after every try (5xx, 408/409/425/429, timeouts, dropped or
  refused connections, malformed bodies);
* `FATAL`: a refusal no request of the run can get past (401/403 authentication, 404 unknown
  model or path, any other 4xx): the run stops.
The reason of a failure names what happened in the words every command reports per item.
"""

from __future__ import annotations

import asyncio
import enum
import re
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from pfgen_fast.common.llm_replies import LLMReply, parse_reply
from pfgen_fast.common.retries import backoffs, retry_after, retryable

T = TypeVar("T")

# Statuses a server gives for one request it will not take, whatever the other requests are.
ITEM_STATUSES = frozenset({400, 413, 422})

# How servers say a prompt does not fit the model's context, with the context's size when
# they give it (group 1): vLLM and OpenAI ("This model's maximum context length is 2048
# tokens"), vLLM's engine ("longer than the maximum model length of 2048"), SGLang ("longer
# than the model's context length (2048 tokens)"), llama-cpp-python ("exceed context window of
# 2048"), llama.cpp's server ("the request exceeds the available context size", its size in
# the body's `n_ctx`).
CONTEXT_SIZES = (
    re.compile(r"maximum context length (?:is|of) (\d+)", re.IGNORECASE),
    re.compile(r"maximum model length (?:is|of) (\d+)", re.IGNORECASE),
    re.compile(r"context length \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"context window of (\d+)", re.IGNORECASE),
    re.compile(r"exceeds? (?:the )?(?:limit|context size) of (\d+)", re.IGNORECASE),
)
CONTEXT_WORDS = re.compile(
    r"context (?:length|size|window)|context_length_exceeded|prompt is too long|"
    r"input is too long|too many tokens",
    re.IGNORECASE,
)


class FailureKind(enum.Enum):
    ITEM = "refused for this request"
    RETRIED = "no usable reply after every try"
    FATAL = "refused for every request"


@dataclass(frozen=True)
class Failure:
    """Why a request got no reply. `answered`: the server answered (a status, a body), as
    opposed to not at all (refused connection, timeout); `message`: the server's own words,
    when it answered with an error."""

    kind: FailureKind
    reason: str
    status: int | None
    answered: bool
    tries: int
    message: str = ""


def server_message(response: httpx.Response) -> str:
    """What an error reply says: its `error.message` (or `message`/`detail`), else the start
    of its body on one line."""
    body = error_body(response)
    error = body.get("error")
    for found in (
        error.get("message") if isinstance(error, dict) else error,
        body.get("message"),
        body.get("detail"),
    ):
        if isinstance(found, str) and found:
            return found
    return " ".join(response.text[:300].split()) or "(empty body)"


def error_body(response: httpx.Response) -> dict[str, Any]:
    """An error reply's body as an object (its text under error.message when not JSON)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    return body if isinstance(body, dict) else {"error": {"message": response.text}}


def context_size(message: str, body: dict[str, Any]) -> int | None:
    """The context size a refusal names, from its message or llama.cpp's `n_ctx`."""
    for pattern in CONTEXT_SIZES:
        found = pattern.search(message)
        if found:
            return int(found.group(1))
    error = body.get("error")
    size = error.get("n_ctx") if isinstance(error, dict) else None
    return size if type(size) is int else None


def refusal_reason(status: int, message: str, body: dict[str, Any]) -> str:
    """An item's reason for a refused request: the context's size when the prompt did not fit,
    else the status and the server's message."""
    size = context_size(message, body)
    if size is not None:
        return f"prompt longer than the server's context ({size} tokens)"
    if CONTEXT_WORDS.search(message):
        return "prompt longer than the server's context"
    return f"HTTP {status}: {message}"


async def within(seconds: float, awaitable: Awaitable[T]) -> T:
    """The awaitable's result, or asyncio.TimeoutError after `seconds`. Unlike
    `asyncio.wait_for` of Python < 3.12, a cancellation of the caller is never lost when the
    awaitable finishes at the same moment."""
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
    except BaseException:  # cancelled: the request goes with the caller
        task.cancel()
        await asyncio.wait({task})
        raise
    if not done:
        task.cancel()
        await asyncio.wait({task})
        if not task.cancelled():
            task.exception()  # taken, so that asyncio does not report it
        raise asyncio.TimeoutError
    return task.result()


class Caller:
    """Sends one request (its JSON body) to one URL with retries, per the module's rules."""

    def __init__(self, *, timeout: float, max_retries: int, accept_400: bool) -> None:
        self.timeout = timeout
        self.max_retries = max_retries
        self.accept_400 = accept_400
        self.calls = 0  # HTTP requests sent, retries included

    async def call(
        self, http: httpx.AsyncClient, url: str, content: bytes, chat: bool
    ) -> LLMReply | Failure:
        """The reply, or the failure once the tries are used up (at once for a refusal)."""
        waits = backoffs()
        tries = 0
        while True:
            tries += 1
            outcome = await self.try_once(http, url, content, chat, tries)
            if not isinstance(outcome, tuple):
                return outcome
            failure, wait = outcome
            if tries > self.max_retries:
                return failure
            await asyncio.sleep(next(waits) if wait is None else wait)

    async def try_once(
        self, http: httpx.AsyncClient, url: str, content: bytes, chat: bool, tries: int
    ) -> LLMReply | Failure | tuple[Failure, float | None]:
        """One try: a reply, a final failure, or a failure worth another try with the wait the
        server asked for (None: the backoff's)."""
        self.calls += 1
        post = http.post(url, content=content, timeout=self.timeout)
        try:
            response = await within(self.timeout, post)
        except (httpx.TimeoutException, asyncio.TimeoutError):
            reason = f"timed out after {self.timeout:g} s"
            return Failure(FailureKind.RETRIED, reason, None, False, tries), None
        except httpx.HTTPError as error:  # refused, reset, protocol errors
            reason = f"connection failed ({str(error) or type(error).__name__})"
            return Failure(FailureKind.RETRIED, reason, None, False, tries), None
        return self.judge(response, chat, tries)

    def judge(
        self, response: httpx.Response, chat: bool, tries: int
    ) -> LLMReply | Failure | tuple[Failure, float | None]:
        """What a response is: a reply, a final failure, or one worth another try."""
        status = response.status_code
        if 200 <= status < 300:
            try:
                return parse_reply(response.json(), chat, status, cached=False)
            except ValueError as error:  # not JSON, or MalformedReply
                reason = f"malformed reply ({error})"
                return Failure(FailureKind.RETRIED, reason, status, True, tries), None
        if status == 400 and self.accept_400:
            return LLMReply("", None, None, {}, 400, False, error_body(response))
        message = server_message(response)
        if retryable(status):
            failure = Failure(
                FailureKind.RETRIED, f"HTTP {status}: {message}", status, True, tries, message
            )
            wait = retry_after(response.headers.get("Retry-After")) if status == 429 else None
            return failure, wait
        if status in ITEM_STATUSES:
            reason = refusal_reason(status, message, error_body(response))
            return Failure(FailureKind.ITEM, reason, status, True, tries, message)
        return Failure(FailureKind.FATAL, f"HTTP {status}: {message}", status, True, tries, message)
