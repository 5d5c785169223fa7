"""The one client every benchmark room asks a model through: OpenAI-compatible chat
(`/chat/completions`) and completions (`/completions`) under a base URL (…/v1).

* Requests run concurrently (asyncio, at most `concurrency` at once) and are retried with
  exponential backoff on 429 (Retry-After honoured, seconds or HTTP date), 408/409/425, 5xx,
  timeouts, dropped connections and malformed replies (not JSON, no choices). Any other status
  (400, 401, 403, 404, ...) cannot change by retrying: `run` raises an LLMError at once naming
  URL, model, status and the server's message, unless the client accepts 400 as an answer.
* A call that still fails after its retries is an LLMError in its slot, never a reply. When
  `max(concurrency, 3)` calls in a row fail so, with no reply in between, the server is taken
  as down and `run` raises an LLMError instead of working through every request.
* Every reply (200, or 400 when accepted) is stored at once in a SQLite response cache (WAL,
  one commit per reply: a killed run loses no reply and a re-run makes no call; several
  processes may share it). The key is the SHA-256 of the canonical JSON of the endpoint's full
  URL and the whole request body (model and parameters included). The base URL is part of the
  key because the model name alone does not say which model answers: local servers answer
  under whatever name they are given and different providers reuse names, and a wrong hit
  would silently give wrong results, while a server moved to a new address only costs calls.
  The API key, timeouts and concurrency are not part of it: they do not change a reply.
* Every reply, cached or not, and every failure is appended to `log_path` as one JSON line.

httpx is the HTTP library: asynchronous with connection pooling and per-phase timeouts, well
kept, and small. The openai SDK would bring its own retry policy and reply models (pydantic),
which hide the raw body we cache and log, and would need bypassing for 400-as-answer; the
standard library has no asynchronous HTTP client. This module imports neither numpy nor the
compiled core, so commands that only ask a model stay light.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import email.utils
import enum
import hashlib
import json
import math
import os
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar

import httpx

from pfgen_fast.common.cli_args import non_negative_int, positive_float, positive_int
from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.llm_cache import ResponseCache, canonical_json, default_cache_path

# Exponential backoff between tries of a request, in seconds.
FIRST_BACKOFF = 0.5
MAX_BACKOFF = 16.0
# The longest Retry-After honoured as given, in seconds.
MAX_RETRY_AFTER = 600.0
# Statuses worth another try besides 5xx: request timeout, conflict, too early, rate limit.
RETRY_STATUSES = frozenset({408, 409, 425, 429})
# Calls failing for good in a row (with no reply in between) that mark a server as down.
MIN_FAILURES_FOR_DOWN = 3


class LLMError(PfgenError):
    """A call that failed for good; `status` is the last HTTP status, if any came."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ChatRequest:
    """A chat: messages as the API takes them; `params` passed through, None values dropped."""

    messages: list[dict[str, str]]
    params: dict[str, Any] = field(default_factory=dict)
    endpoint: ClassVar[str] = "/chat/completions"

    def body(self, model: str) -> dict[str, Any]:
        return {"model": model, "messages": self.messages, **present(self.params)}


@dataclass(frozen=True)
class CompletionRequest:
    """A plain completion of `prompt`; `params` passed through, None values dropped."""

    prompt: str
    params: dict[str, Any] = field(default_factory=dict)
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


@dataclass
class LLMStats:
    """`calls`: HTTP requests sent (retries included); `cached`: replies taken from the cache;
    `failed`: requests that failed for good; tokens as the servers counted them in the replies
    of calls made (cached replies cost nothing)."""

    calls: int = 0
    cached: int = 0
    failed: int = 0
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
    else:
        text = choice.get("text")
    if text is not None and not isinstance(text, str):
        raise MalformedReply("the generated text is not a string")
    finish = choice.get("finish_reason")
    usage = raw.get("usage") if isinstance(raw.get("usage"), dict) else {}
    return LLMReply(
        text=text or "",
        finish_reason=finish if isinstance(finish, str) else None,
        logprobs=parse_logprobs(choice.get("logprobs")),
        usage={k: v for k, v in usage.items() if type(v) is int},
        status=status,
        cached=cached,
        raw=raw,
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


class _Default(enum.Enum):
    DEFAULT = enum.auto()


DEFAULT = _Default.DEFAULT


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), if usable."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.timezone.utc)
        seconds = (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def server_message(response: httpx.Response) -> str:
    """What an error reply says: its `error.message` (or `message`/`detail`), else the start
    of its body on one line."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
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


class LLMClient:
    """Asks an OpenAI-compatible server; see the module's docstring for the policy."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        concurrency: int = 8,
        timeout: float = 120.0,
        max_retries: int = 5,
        cache_path: Path | None | _Default = DEFAULT,
        log_path: Path | None = None,
        accept_400: bool = False,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PfgenError(
                f"--base-url {base_url!r}: expected an http:// or https:// URL with a host"
            )
        if concurrency < 1 or timeout <= 0 or max_retries < 0:
            raise PfgenError("the LLM client needs concurrency >= 1, timeout > 0, retries >= 0")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = os.environ.get("OPENAI_API_KEY", "") if api_key is None else api_key
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.log_path = log_path
        self.accept_400 = accept_400
        if cache_path is DEFAULT:
            cache_path = default_cache_path()
        self.cache = ResponseCache(cache_path) if isinstance(cache_path, Path) else None
        self.stats = LLMStats()

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
            self.cache = None

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self,
        requests: Sequence[ChatRequest | CompletionRequest],
        progress: Callable[[int, int], None] | None = None,
        *,
        on_result: Callable[[int, LLMReply | LLMError], None] | None = None,
    ) -> list[LLMReply | LLMError]:
        """The replies in request order (an LLMError where a call failed for good). As each
        request is done, `on_result(index, result)` then `progress(done, total)` are called
        (an exception they raise stops the run). Not callable from a running event loop."""
        with self.opened_log() as log:
            return asyncio.run(self.run_all(list(requests), progress, on_result, log))

    @contextmanager
    def opened_log(self) -> Iterator[IO[str] | None]:
        if self.log_path is None:
            yield None
            return
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            log = self.log_path.open("a", encoding="utf-8")
        except OSError as error:
            raise PfgenError(f"{self.log_path}: cannot write: {error.strerror or error}") from None
        with log:
            yield log

    def write_log(self, log: IO[str] | None, entry: dict[str, Any]) -> None:
        """Appends the entry as one JSON line, straight to the file (nothing is left in a
        buffer to fail again when the log is closed). When the line cannot be written whole (a
        full disk), the part written is cut off again, so that the log keeps whole lines, and
        the error names the log as every writer does."""
        if log is None:
            return
        data = memoryview((json.dumps(entry, ensure_ascii=False) + "\n").encode())
        fd = log.fileno()
        try:
            start: int | None = os.lseek(fd, 0, os.SEEK_END)
        except OSError:  # a FIFO: nothing to cut
            start = None
        try:
            while data:
                data = data[os.write(fd, data) :]
        except OSError as error:
            if start is not None:
                with suppress(OSError):  # a device: nothing to cut
                    os.ftruncate(fd, start)
            raise PfgenError(f"{self.log_path}: cannot write: {error.strerror or error}") from None

    async def run_all(
        self,
        requests: list[ChatRequest | CompletionRequest],
        progress: Callable[[int, int], None] | None,
        on_result: Callable[[int, LLMReply | LLMError], None] | None,
        log: IO[str] | None,
    ) -> list[LLMReply | LLMError]:
        results: list[LLMReply | LLMError | None] = [None] * len(requests)
        semaphore = asyncio.Semaphore(self.concurrency)
        down_after = max(self.concurrency, MIN_FAILURES_FOR_DOWN)
        failures_in_a_row = 0
        done = 0
        limits = httpx.Limits(
            max_connections=self.concurrency, max_keepalive_connections=self.concurrency
        )
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"

        async def answer(index: int, http: httpx.AsyncClient) -> None:
            nonlocal failures_in_a_row, done
            request = requests[index]
            url = self.base_url + request.endpoint
            body = request.body(self.model)
            key = hashlib.sha256(canonical_json([url, body]).encode()).hexdigest()
            entry: dict[str, Any] = {"url": url, "request": body}
            result = self.from_cache(key, request)
            if result is None:
                try:
                    async with semaphore:
                        chat = isinstance(request, ChatRequest)
                        result = await self.call(http, url, body, chat)
                except LLMError as refused:
                    self.write_log(log, {**entry, "error": str(refused), "status": refused.status})
                    raise
                if isinstance(result, LLMError):
                    self.stats.failed += 1
                    failures_in_a_row += 1
                else:
                    failures_in_a_row = 0
                    self.store(key, url, body, result)
            if isinstance(result, LLMError):
                entry.update(error=str(result), status=result.status)
            else:
                entry.update(status=result.status, cached=result.cached, response=result.raw)
            self.write_log(log, entry)
            results[index] = result
            done += 1
            if on_result is not None:
                on_result(index, result)
            if progress is not None:
                progress(done, len(results))
            if isinstance(result, LLMError) and failures_in_a_row >= down_after:
                raise LLMError(
                    f"{self.base_url}: the server looks down ({failures_in_a_row} calls in a "
                    f"row failed; last: {result})",
                    result.status,
                )

        async with httpx.AsyncClient(limits=limits, headers=headers) as http:
            tasks = [asyncio.create_task(answer(i, http)) for i in range(len(requests))]
            try:
                await asyncio.gather(*tasks)
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
        return [result for result in results if result is not None]

    def from_cache(self, key: str, request: ChatRequest | CompletionRequest) -> LLMReply | None:
        """The cached reply, if any this client takes (a 400 only when it accepts 400)."""
        found = self.cache.get(key) if self.cache is not None else None
        if found is None:
            return None
        status, raw = found
        if status == 400:
            if not self.accept_400:
                return None
            reply = LLMReply("", None, None, {}, 400, True, raw)
        else:
            try:
                reply = parse_reply(raw, isinstance(request, ChatRequest), status, cached=True)
            except MalformedReply:  # stored by another version of this client: ask again
                return None
        self.stats.cached += 1
        return reply

    def store(self, key: str, url: str, body: dict[str, Any], reply: LLMReply) -> None:
        self.stats.prompt_tokens += reply.usage.get("prompt_tokens", 0)
        self.stats.completion_tokens += reply.usage.get("completion_tokens", 0)
        if self.cache is not None:
            self.cache.put(key, url, canonical_json(body), reply.status, reply.raw)

    async def call(
        self, http: httpx.AsyncClient, url: str, body: dict[str, Any], chat: bool
    ) -> LLMReply | LLMError:
        """One request with its retries: the reply, or an LLMError once the tries are used up;
        raises an LLMError for a status that retrying cannot change."""
        content = json.dumps(body, ensure_ascii=False).encode()
        backoff = FIRST_BACKOFF
        failure, status = "", None
        tries = 0
        while tries <= self.max_retries:
            tries += 1
            wait: float | None = None
            try:
                self.stats.calls += 1
                response = await asyncio.wait_for(
                    http.post(url, content=content, timeout=self.timeout), self.timeout
                )
            except (httpx.TimeoutException, asyncio.TimeoutError):
                failure, status = f"timed out after {self.timeout:g} s", None
            except httpx.HTTPError as error:  # refused, reset, protocol errors
                failure, status = str(error) or type(error).__name__, None
            else:
                status = response.status_code
                if 200 <= status < 300:
                    try:
                        return parse_reply(response.json(), chat, status, cached=False)
                    except ValueError as error:  # not JSON, or MalformedReply
                        failure = f"malformed reply ({error})"
                elif status == 400 and self.accept_400:
                    return LLMReply("", None, None, {}, 400, False, error_body(response))
                elif status in RETRY_STATUSES or status >= 500:
                    failure = f"HTTP {status}: {server_message(response)}"
                    if status == 429:
                        wait = retry_after(response.headers.get("Retry-After"))
                else:
                    raise self.refused(url, status, server_message(response))
            if tries <= self.max_retries:
                await asyncio.sleep(backoff if wait is None else wait)
                backoff = min(backoff * 2, MAX_BACKOFF)
        return LLMError(
            f"{url}: no answer after {tries} tries ({failure}); model {self.model}", status
        )

    def refused(self, url: str, status: int, message: str) -> LLMError:
        if status in (401, 403):
            hint = "check" if self.api_key else "set"
            return LLMError(
                f"{url}: authentication failed (HTTP {status}: {message}); {hint} "
                f"OPENAI_API_KEY (model {self.model})",
                status,
            )
        return LLMError(f"{url}: HTTP {status}: {message} (model {self.model})", status)


def add_llm_arguments(
    parser: argparse.ArgumentParser,
    *,
    model_flag: str = "--judge-model",
    model_help: str = "the judge model's name as the server knows it",
    base_url_default: str | None = None,
    cache: bool = True,
) -> None:
    """The server options every command that asks a model shares. With `base_url_default`,
    `--base-url` is optional: $OPENAI_BASE_URL, else that URL. `cache` adds `--no-cache`."""
    group = parser.add_argument_group("LLM server")
    key_help = "the API key comes from $OPENAI_API_KEY"
    if base_url_default is None:
        group.add_argument(
            "--base-url",
            required=True,
            help=f"OpenAI-compatible API base URL, e.g. http://127.0.0.1:8000/v1 ({key_help})",
        )
    else:
        group.add_argument(
            "--base-url",
            default=os.environ.get("OPENAI_BASE_URL") or base_url_default,
            help=f"server URL (default: $OPENAI_BASE_URL, else {base_url_default}); {key_help}",
        )
    action = group.add_argument(model_flag, required=True, help=model_help)
    parser.set_defaults(llm_model_dest=action.dest)
    group.add_argument(
        "--concurrency", type=positive_int, default=8, help="requests at once (default: 8)"
    )
    group.add_argument(
        "--timeout", type=positive_float, default=120.0, help="seconds per request (default: 120)"
    )
    group.add_argument(
        "--max-retries",
        type=non_negative_int,
        default=5,
        help="retries of a failed request, with exponential backoff (default: 5)",
    )
    if not cache:
        return
    group.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor store replies in the response cache "
        "($PFGEN_FAST_CACHE/llm/responses.sqlite3)",
    )


def client_from_args(
    args: argparse.Namespace, *, log_path: Path | None, accept_400: bool = False
) -> LLMClient:
    """A client configured by the options of `add_llm_arguments`."""
    return LLMClient(
        args.base_url,
        getattr(args, args.llm_model_dest),
        concurrency=args.concurrency,
        timeout=args.timeout,
        max_retries=args.max_retries,
        cache_path=None if args.no_cache else DEFAULT,
        log_path=log_path,
        accept_400=accept_400,
    )
