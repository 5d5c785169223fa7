"""One run of `LLMClient.run`: requests handed to workers (`concurrency` per server), each
request's reply or failure recorded, identical requests sent once, the failover between
servers, and the rules that stop a run (see `common.llm`). A run takes the client's settings,
its cache and its counts, never the client itself.

The workers share their state in one object on one event loop, never across an await in the
middle of a change. A worker with nothing to do waits for the next change (`wake`), through an
`asyncio.Event` made for each change: unlike a condition's lock, an event's waiter can be
cancelled at any moment without leaving another waiter stuck. A run stops by recording why
(`stopped`), waking every worker and cancelling those in a call; a worker checks `stopped`
before each request, so even a cancellation lost by the HTTP library ends it."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import httpx

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.llm_cache import CacheRow, CacheWriter, ResponseCache, canonical_json
from pfgen_fast.common.llm_calls import Caller, Failure, FailureKind
from pfgen_fast.common.llm_replies import (
    ChatRequest,
    CompletionRequest,
    LLMError,
    LLMReply,
    LLMStats,
    MalformedReply,
    parse_reply,
    request_for_record,
)

Result = LLMReply | LLMError
# Calls failing for good in a row (with no reply in between) that mark a server as down.
MIN_FAILURES_FOR_DOWN = 3
# The share of a run's requests that may fail before the run stops (also `mm run`'s rule for
# a task's items), and the fewest requests the share is taken of (a small run is not stopped
# by its first failures: its results say what failed).
FAILURE_SHARE = 0.1
MIN_COUNT = 20


def too_many_failures(failed: int, count: int) -> bool:
    """Whether `failed` of `count` items is more than the share a run takes (FAILURE_SHARE)."""
    return failed > count * FAILURE_SHARE


@dataclass(frozen=True)
class Settings:
    """What a client asks with: its servers' base URLs (no trailing slash), the model, the API
    key ("" for none), requests at once per server, a request's timeout and retries, whether a
    400 is an answer, and the body merged into every request."""

    base_urls: tuple[str, ...]
    model: str
    api_key: str
    concurrency: int
    timeout: float
    max_retries: int
    accept_400: bool
    extra_body: dict[str, Any]


@dataclass
class Server:
    """One server of a client, and how its calls went lately."""

    base_url: str
    failures_in_a_row: int = 0
    down: bool = False
    last_error: LLMError | None = None  # of the last request failing after its retries
    answers: bool = True  # whether that request got an answer (a status, a body) at all
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


def make_job(
    index: int,
    request: ChatRequest | CompletionRequest,
    model: str,
    urls: list[str],
    extra: dict[str, Any],
) -> Job:
    """The request's body with the extra body merged in, serialised once: sent as it is, and
    hashed with the server's URL (or the sorted URLs of several) into the key: the SHA-256 of
    the canonical JSON of `[where, body]` (`[where, body, sample]` for a request's further
    samples), written here without serialising the body twice."""
    body = request.body(model)
    clashes = sorted(extra.keys() & body.keys())
    if clashes:
        raise PfgenError(f"extra body: {', '.join(clashes)} set by the request itself")
    body.update(extra)
    payload = canonical_json(body).encode()
    endpoints = [url + request.endpoint for url in urls]
    where = canonical_json(endpoints[0] if len(endpoints) == 1 else sorted(endpoints))
    key = hashlib.sha256(f"[{where},".encode())
    key.update(payload)
    key.update(f",{request.sample}]".encode() if request.sample else b"]")
    return Job(index, request, body, payload, key.hexdigest())


class ReplyLog:
    """The log of a run: one JSON line per reply or failure, appended straight to the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.file: IO[str] = path.open("a", encoding="utf-8")
        except OSError as error:
            raise PfgenError(f"{path}: cannot write: {error.strerror or error}") from None

    def close(self) -> None:
        self.file.close()

    def write(self, entry: dict[str, Any]) -> None:
        """Appends the entry as one JSON line (nothing is left in a buffer to fail again when
        the log is closed). When the line cannot be written whole (a full disk), the part
        written is cut off again, so that the log keeps whole lines, and the error names the
        log as every writer does."""
        data = memoryview((json.dumps(entry, ensure_ascii=False) + "\n").encode())
        fd = self.file.fileno()
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
            raise PfgenError(f"{self.path}: cannot write: {error.strerror or error}") from None


@dataclass
class Reporting:
    """Where a run tells what it did: `on_result(index, result)` as each request is done,
    `advance(cached=, failed=)` and `set_total(count)` for a progress bar, and the log."""

    on_result: Callable[[int, Result], None] | None = None
    advance: Callable[..., None] | None = None
    set_total: Callable[[int], None] | None = None
    log: ReplyLog | None = None


class Dispatcher:
    """Runs the requests of one `LLMClient.run` on the client's servers. With a response
    cache (`cache` to read, `writer` to store), a request identical to one in flight (same
    key) is not sent: it waits for that one and takes its result, the reply as from the cache
    (single flight). `stats` (the client's) counts the calls, cached replies, failures, cut
    replies and tokens."""

    def __init__(
        self,
        settings: Settings,
        cache: ResponseCache | None,
        stats: LLMStats,
        requests: Iterator[ChatRequest | CompletionRequest],
        total: int,
        reporting: Reporting,
        writer: CacheWriter | None,
    ) -> None:
        self.settings = settings
        self.cache = cache
        self.stats = stats
        self.requests = requests
        self.total = total
        self.reporting = reporting
        self.writer = writer
        self.caller = Caller(
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            accept_400=settings.accept_400,
        )
        self.servers = [Server(url) for url in settings.base_urls]
        self.down_after = max(settings.concurrency, MIN_FAILURES_FOR_DOWN)
        self.results: list[Result | None] = []
        self.exhausted = False
        self.done = 0
        self.failed: list[LLMError] = []
        # By key, the request being asked and the identical ones waiting for its result.
        self.in_flight: dict[str, tuple[Job, list[Job]]] = {}
        self.changed = asyncio.Event()
        self.stopped: BaseException | None = None
        self.workers: list[asyncio.Task[None]] = []

    # The run and its workers.

    async def run(self) -> list[Result]:
        headers = {"Content-Type": "application/json"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        size = self.settings.concurrency
        limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
        async with AsyncExitStack() as stack:
            for number in range(len(self.servers)):
                http = await stack.enter_async_context(
                    httpx.AsyncClient(limits=limits, headers=headers)
                )
                self.workers += [asyncio.create_task(self.work(number, http)) for _ in range(size)]
            try:  # a worker ends on its own; one cancelled before it started has nothing to say
                await asyncio.wait(self.workers)
            finally:  # no worker outlives the connection pools (cancelled: Ctrl-C)
                for worker in self.workers:
                    worker.cancel()
                await asyncio.wait(self.workers)
        self.stats.calls += self.caller.calls
        if self.stopped is not None:
            raise self.stopped
        return [result for result in self.results if result is not None]

    async def work(self, number: int, http: httpx.AsyncClient) -> None:
        """Takes requests until none is left, the server is down or the run stops."""
        server = self.servers[number]
        try:
            while self.stopped is None:
                job = self.next_job(server)
                if job is not None:
                    await self.do(job, number, http)
                elif server.down or (self.exhausted and self.done == len(self.results)):
                    return
                else:
                    await self.changed.wait()
        except asyncio.CancelledError:
            if self.stopped is None:  # not stopped by the run: Ctrl-C
                raise
        except Exception as error:  # noqa: BLE001 (a refusal, a callback's error: the run stops)
            self.stop(error)
        finally:
            self.wake()

    def wake(self) -> None:
        """Wakes every worker waiting for a change."""
        self.changed.set()
        self.changed = asyncio.Event()

    def stop(self, error: BaseException) -> None:
        """Stops the run with `error`: every other worker ends."""
        if self.stopped is not None:
            return
        self.stopped = error
        current = asyncio.current_task()
        for worker in self.workers:
            if worker is not current:
                worker.cancel()

    def next_job(self, server: Server) -> Job | None:
        """A request moved to this server, else the next new one."""
        if server.waiting:
            return server.waiting.popleft()
        if server.down or self.exhausted:
            return None
        request = next(self.requests, None)
        if request is None:
            self.exhausted = True
            if self.total and self.total != len(self.results):  # fewer than said at most
                self.total = len(self.results)
                if self.reporting.set_total is not None:
                    self.reporting.set_total(self.total)
            return None
        self.results.append(None)
        settings = self.settings
        return make_job(
            len(self.results) - 1,
            request,
            settings.model,
            list(settings.base_urls),
            settings.extra_body,
        )

    # One request.

    async def do(self, job: Job, number: int, http: httpx.AsyncClient) -> None:
        """Asks for one request (the cache first, then the identical request in flight) and
        records its result."""
        server = self.servers[number]
        result: Result | None = self.from_cache(job)
        if result is None and self.cache is not None:
            flight = self.in_flight.setdefault(job.key, (job, []))
            if flight[0] is not job:  # the result comes with the one asked
                flight[1].append(job)
                return
        if result is None:
            url = server.base_url + job.request.endpoint
            outcome = await self.caller.call(
                http, url, job.payload, isinstance(job.request, ChatRequest)
            )
            if isinstance(outcome, Failure):
                if outcome.kind is FailureKind.FATAL:
                    error = refused(self.settings, url, outcome)
                    self.log(job, server.base_url, error)
                    raise error
                result = failed(self.settings, url, outcome)
                if outcome.kind is FailureKind.ITEM:
                    server.failures_in_a_row = 0  # the server answers
                elif self.fail_over(job, number, result, outcome.answered):
                    self.wake()
                    return
            else:
                server.failures_in_a_row = 0
                await self.store(job, url, outcome)
                result = outcome
        self.finish(job, result, server.base_url)
        self.wake()

    def from_cache(self, job: Job) -> LLMReply | None:
        """The cached reply, if any the run takes (a 400 only when it accepts 400)."""
        found = self.cache.get(job.key) if self.cache is not None else None
        if found is None:
            return None
        status, raw = found
        if status == 400:
            if not self.settings.accept_400:
                return None
            return LLMReply("", None, None, {}, 400, True, raw)
        try:
            return parse_reply(raw, isinstance(job.request, ChatRequest), status, cached=True)
        except MalformedReply:  # stored by another version of this client: ask again
            return None

    async def store(self, job: Job, url: str, reply: LLMReply) -> None:
        """Counts the reply's tokens and commits it to the cache (off the event loop)."""
        stats = self.stats
        stats.prompt_tokens += reply.usage.get("prompt_tokens", 0)
        stats.completion_tokens += reply.usage.get("completion_tokens", 0)
        if self.writer is not None:
            request = canonical_json(job.record())
            await self.writer.store(CacheRow(job.key, url, request, reply.status, reply.raw))

    def fail_over(self, job: Job, number: int, error: LLMError, answered: bool) -> bool:
        """Counts a failure after retries on a server (down after `down_after` in a row);
        True when another server takes the request."""
        server = self.servers[number]
        server.failures_in_a_row += 1
        server.last_error, server.answers = error, answered
        job.failed_on.add(number)
        if server.failures_in_a_row >= self.down_after:
            server.down = True
            for moved in server.waiting:
                moved.failed_on.add(number)
                self.move(moved)
            server.waiting.clear()
        return self.move(job)

    def move(self, job: Job) -> bool:
        """Queues the request on the server, not down, it has not failed on with the fewest
        waiting; False when there is none."""
        others = [
            other
            for i, other in enumerate(self.servers)
            if i not in job.failed_on and not other.down
        ]
        if not others:
            return False
        min(others, key=lambda other: len(other.waiting)).waiting.append(job)
        return True

    # What a result tells.

    def finish(self, job: Job, result: Result, base_url: str) -> None:
        """Records the result, then for each identical request that waited for it, the same
        result (a reply as from the cache)."""
        self.record(job, result, base_url)
        _, waiting = self.in_flight.pop(job.key, (job, []))
        shared = replace(result, cached=True) if isinstance(result, LLMReply) else result
        for follower in waiting:
            self.record(follower, shared, base_url)

    def record(self, job: Job, result: Result, base_url: str) -> None:
        """Counts the result, logs it, hands it to the command, and applies the stop rules."""
        stats = self.stats
        if isinstance(result, LLMError):
            stats.failed += 1
        else:
            if result.cached:
                stats.cached += 1
            if result.finish_reason == "length":
                stats.cut += 1
        self.log(job, base_url, result)
        self.results[job.index] = result
        self.done += 1
        reporting = self.reporting
        if reporting.advance is not None:
            cached = isinstance(result, LLMReply) and result.cached
            reporting.advance(cached=cached, failed=isinstance(result, LLMError))
        if reporting.on_result is not None:
            reporting.on_result(job.index, result)
        if isinstance(result, LLMError):
            self.failed.append(result)
            self.check_failures()

    def log(self, job: Job, base_url: str, result: Result) -> None:
        if self.reporting.log is None:
            return
        entry: dict[str, Any] = {"url": base_url + job.request.endpoint, "request": job.record()}
        if isinstance(result, LLMError):
            entry.update(error=str(result), status=result.status)
        else:
            entry.update(status=result.status, cached=result.cached, response=result.raw)
        self.reporting.log.write(entry)

    def check_failures(self) -> None:
        """Raises an LLMError when every server is down, or when too many requests failed
        while some are left to ask (at the end, the results say it all)."""
        if all(server.down for server in self.servers):
            raise all_down(self.settings, self.servers)
        asked = self.total or len(self.results)
        if not too_many_failures(len(self.failed), max(asked, MIN_COUNT)):
            return
        if self.exhausted and self.done == len(self.results):
            return
        first = self.failed[0]
        of = f"{asked} requests" if self.total else f"the {asked} requests sent so far"
        raise LLMError(
            f"{len(self.failed)} of {of} failed, more than {FAILURE_SHARE:.0%}: "
            f"stopped (the first: {first})",
            first.status,
        )


# The errors of a run, worded for the command.


def failed(settings: Settings, url: str, failure: Failure) -> LLMError:
    """The error in the slot of a request that failed (refused for itself, or after every
    try)."""
    if failure.kind is FailureKind.ITEM:
        message = f"{url}: HTTP {failure.status}: {failure.message} (model {settings.model})"
    else:
        message = (
            f"{url}: no answer after {failure.tries} tries ({failure.reason}); "
            f"model {settings.model}"
        )
    return LLMError(message, failure.status, failure.reason)


def refused(settings: Settings, url: str, failure: Failure) -> LLMError:
    """The error that stops a run: a refusal that holds for every request."""
    status, message = failure.status, failure.message
    if status in (401, 403):
        hint = "check" if settings.api_key else "set"
        return LLMError(
            f"{url}: authentication failed (HTTP {status}: {message}); {hint} "
            f"OPENAI_API_KEY (model {settings.model})",
            status,
            failure.reason,
        )
    return LLMError(
        f"{url}: HTTP {status}: {message} (model {settings.model})", status, failure.reason
    )


def all_down(settings: Settings, servers: list[Server]) -> LLMError:
    """The error that stops a run when every server failed `max(concurrency, 3)` requests in
    a row: "looks down" only when the last of them got no answer at all."""
    last = next(s.last_error for s in reversed(servers) if s.last_error is not None)
    if len(servers) > 1:
        urls = ", ".join(settings.base_urls)
        if any(server.answers for server in servers):
            return LLMError(f"every server failed its requests ({urls}); last: {last}", last.status)
        return LLMError(f"every server looks down ({urls}); last: {last}", last.status)
    base_url = settings.base_urls[0]
    count = servers[0].failures_in_a_row
    if servers[0].answers:
        return LLMError(
            f"{base_url}: the server answers, but {count} requests in a row failed (last: {last})",
            last.status,
        )
    return LLMError(
        f"{base_url}: the server looks down ({count} calls in a row failed; last: {last})",
        last.status,
    )
