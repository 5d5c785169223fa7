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
* Several servers (replicas of one model): each runs `concurrency` requests at once, taking the
  next request as soon as it is free, so faster servers take more. A request that fails for
  good on one server is tried on each other server not yet down; a server with
  `max(concurrency, 3)` failures in a row is down and takes no more, and `run` raises once every
  server is down. The cache key then holds the sorted list of the servers' endpoint URLs (the
  replica set names the model), so the same servers in any order share replies.
* Requests may come from an iterator: each is built when a server is free to take it, so a
  long run of large requests (images) never holds them all. Data URLs (`data:...;base64,...`)
  are stored in the cache's request column and the log by their length, not in full.

httpx is the HTTP library: asynchronous with connection pooling and per-phase timeouts, well
kept, and small. The openai SDK would bring its own retry policy and reply models (pydantic),
which hide the raw body we cache and log, and would need bypassing for 400-as-answer; the
standard library has no asynchronous HTTP client. This module imports neither numpy nor the
compiled core, so commands that only ask a model stay light.
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import json
import math
import os
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sized
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar

import httpx

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.http import backoffs, retry_after, retryable
from pfgen_fast.common.llm_cache import ResponseCache, canonical_json, default_cache_path

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

    messages: list[dict[str, Any]]
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
    # Reasoning the server returned apart from the content (`reasoning_content` or
    # `reasoning` of the message); never part of `text`.
    reasoning: str | None = None


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


class _Default(enum.Enum):
    DEFAULT = enum.auto()


DEFAULT = _Default.DEFAULT


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


@dataclass
class Server:
    """One server of a client, and how its calls went lately."""

    base_url: str
    failures_in_a_row: int = 0
    down: bool = False
    waiting: deque[Job] = field(default_factory=deque)  # requests moved here from another


@dataclass
class Job:
    """A request on its way: its place, its body (as sent: canonical JSON), its cache key, the
    servers it failed on."""

    index: int
    request: ChatRequest | CompletionRequest
    body: dict[str, Any]
    payload: bytes
    key: str
    failed_on: set[int] = field(default_factory=set)
    kept: Any = None  # the body as the cache and the log keep it, once made

    def record(self) -> Any:
        if self.kept is None:
            self.kept = request_for_record(self.body)
        return self.kept


class LLMClient:
    """Asks OpenAI-compatible servers; see the module's docstring for the policy."""

    def __init__(
        self,
        base_url: str | list[str],
        model: str,
        *,
        api_key: str | None = None,
        concurrency: int = 8,
        timeout: float = 120.0,
        max_retries: int = 5,
        cache_path: Path | None | _Default = DEFAULT,
        log_path: Path | None = None,
        accept_400: bool = False,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        base_urls = [base_url] if isinstance(base_url, str) else list(base_url)
        if not base_urls:
            raise PfgenError("the LLM client needs a server (--base-url)")
        for url in base_urls:
            parts = urllib.parse.urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise PfgenError(
                    f"--base-url {url!r}: expected an http:// or https:// URL with a host"
                )
        if concurrency < 1 or timeout <= 0 or max_retries < 0:
            raise PfgenError("the LLM client needs concurrency >= 1, timeout > 0, retries >= 0")
        self.base_urls = list(dict.fromkeys(url.rstrip("/") for url in base_urls))
        self.base_url = self.base_urls[0]
        self.model = model
        self.api_key = os.environ.get("OPENAI_API_KEY", "") if api_key is None else api_key
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.log_path = log_path
        self.accept_400 = accept_400
        self.extra_body = dict(extra_body or {})
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
        requests: Iterable[ChatRequest | CompletionRequest],
        progress: Callable[[int, int], None] | None = None,
        *,
        on_result: Callable[[int, LLMReply | LLMError], None] | None = None,
    ) -> list[LLMReply | LLMError]:
        """The replies in request order (an LLMError where a call failed for good). As each
        request is done, `on_result(index, result)` then `progress(done, total)` are called
        (an exception they raise stops the run; `total` is 0 when `requests` has no length).
        An iterator is read only as servers are free. Not callable from a running event loop."""
        total = len(requests) if isinstance(requests, Sized) else 0
        with self.opened_log() as log:
            return asyncio.run(self.run_all(iter(requests), total, progress, on_result, log))

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

    def job(self, index: int, request: ChatRequest | CompletionRequest) -> Job:
        """The request's body with the extra body merged in, serialised once: sent as it is,
        and hashed with the server's URL (or the sorted URLs of several) into the key: the
        SHA-256 of the canonical JSON of `[where, body]`, written here without serialising the
        body a second time."""
        body = request.body(self.model)
        clashes = sorted(self.extra_body.keys() & body.keys())
        if clashes:
            raise PfgenError(f"extra body: {', '.join(clashes)} set by the request itself")
        body.update(self.extra_body)
        payload = canonical_json(body).encode()
        urls = [url + request.endpoint for url in self.base_urls]
        where = canonical_json(urls[0] if len(urls) == 1 else sorted(urls))
        key = hashlib.sha256(f"[{where},".encode())
        key.update(payload)
        key.update(b"]")
        return Job(index, request, body, payload, key.hexdigest())

    async def run_all(
        self,
        requests: Iterator[ChatRequest | CompletionRequest],
        total: int,
        progress: Callable[[int, int], None] | None,
        on_result: Callable[[int, LLMReply | LLMError], None] | None,
        log: IO[str] | None,
    ) -> list[LLMReply | LLMError]:
        results: list[LLMReply | LLMError | None] = []
        servers = [Server(url) for url in self.base_urls]
        down_after = max(self.concurrency, MIN_FAILURES_FOR_DOWN)
        changed = asyncio.Condition()
        # Keys stored by this run: the same request again in it is asked again, as when every
        # request looked in the cache before the first reply came.
        stored_now: set[str] = set()
        exhausted = False
        done = 0
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"

        def next_job(server: Server) -> Job | None:
            """A request moved to this server, else the next new one."""
            nonlocal exhausted
            if server.waiting:
                return server.waiting.popleft()
            if exhausted:
                return None
            request = next(requests, None)
            if request is None:
                exhausted = True
                return None
            results.append(None)
            return self.job(len(results) - 1, request)

        def finish(job: Job, result: LLMReply | LLMError, url: str) -> None:
            nonlocal done
            if log is not None:
                entry: dict[str, Any] = {"url": url + job.request.endpoint, "request": job.record()}
                if isinstance(result, LLMError):
                    entry.update(error=str(result), status=result.status)
                else:
                    entry.update(status=result.status, cached=result.cached, response=result.raw)
                self.write_log(log, entry)
            results[job.index] = result
            done += 1
            if on_result is not None:
                on_result(job.index, result)
            if progress is not None:
                progress(done, total)

        def failed(job: Job, number: int) -> bool:
            """Counts a failure for good on a server; False when another server takes the
            request."""
            server = servers[number]
            server.failures_in_a_row += 1
            job.failed_on.add(number)
            if server.failures_in_a_row >= down_after:
                server.down = True
                alive = [other for other in servers if not other.down]
                for moved in server.waiting:
                    moved.failed_on.add(number)
                    if alive:
                        min(alive, key=lambda other: len(other.waiting)).waiting.append(moved)
                server.waiting.clear()
            others = [
                other
                for i, other in enumerate(servers)
                if i not in job.failed_on and not other.down
            ]
            if others:
                min(others, key=lambda other: len(other.waiting)).waiting.append(job)
                return False
            return True

        def stop_if_all_down(error: LLMError) -> None:
            if not all(server.down for server in servers):
                return
            if len(servers) == 1:
                raise LLMError(
                    f"{self.base_url}: the server looks down ({servers[0].failures_in_a_row} "
                    f"calls in a row failed; last: {error})",
                    error.status,
                )
            urls = ", ".join(self.base_urls)
            raise LLMError(f"every server looks down ({urls}); last: {error}", error.status)

        async def work(number: int, http: httpx.AsyncClient) -> None:
            server = servers[number]
            while True:
                async with changed:
                    while server.down or (job := next_job(server)) is None:
                        if server.down or (exhausted and done == len(results)):
                            changed.notify_all()
                            return
                        await changed.wait()
                result: LLMReply | LLMError | None = None
                if job.key not in stored_now:
                    result = self.from_cache(job.key, job.request)
                if result is None:
                    url = server.base_url + job.request.endpoint
                    chat = isinstance(job.request, ChatRequest)
                    try:
                        result = await self.call(http, url, job.payload, chat)
                    except LLMError as refused:
                        entry = {"url": url, "request": job.record()}
                        self.write_log(
                            log, {**entry, "error": str(refused), "status": refused.status}
                        )
                        raise
                    if isinstance(result, LLMError):
                        if not failed(job, number):
                            async with changed:
                                changed.notify_all()
                            continue
                        self.stats.failed += 1
                    else:
                        server.failures_in_a_row = 0
                        self.store(job, url, result)
                        stored_now.add(job.key)
                finish(job, result, server.base_url)
                if isinstance(result, LLMError):
                    stop_if_all_down(result)
                async with changed:
                    changed.notify_all()

        async def serve(number: int) -> None:
            limits = httpx.Limits(
                max_connections=self.concurrency, max_keepalive_connections=self.concurrency
            )
            async with httpx.AsyncClient(limits=limits, headers=headers) as http:
                workers = [asyncio.create_task(work(number, http)) for _ in range(self.concurrency)]
                try:
                    await asyncio.gather(*workers)
                finally:  # no worker may outlive the connection pool
                    for worker in workers:
                        worker.cancel()
                    await asyncio.gather(*workers, return_exceptions=True)

        tasks = [asyncio.create_task(serve(number)) for number in range(len(servers))]
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

    def store(self, job: Job, url: str, reply: LLMReply) -> None:
        self.stats.prompt_tokens += reply.usage.get("prompt_tokens", 0)
        self.stats.completion_tokens += reply.usage.get("completion_tokens", 0)
        if self.cache is not None:
            self.cache.put(job.key, url, canonical_json(job.record()), reply.status, reply.raw)

    async def call(
        self, http: httpx.AsyncClient, url: str, content: bytes, chat: bool
    ) -> LLMReply | LLMError:
        """One request (its JSON body) with its retries: the reply, or an LLMError once the
        tries are used up; raises an LLMError for a status that retrying cannot change."""
        waits = backoffs()
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
                elif retryable(status):
                    failure = f"HTTP {status}: {server_message(response)}"
                    if status == 429:
                        wait = retry_after(response.headers.get("Retry-After"))
                else:
                    raise self.refused(url, status, server_message(response))
            if tries <= self.max_retries:
                backoff = next(waits)
                await asyncio.sleep(backoff if wait is None else wait)
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
