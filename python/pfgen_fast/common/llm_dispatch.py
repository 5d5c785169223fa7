"""One run of `LLMClient.run`: requests handed to workers (`concurrency` per server), each
request's reply or failure recorded, the failover between servers, and the rules that stop
a run (see `common.llm`).

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import httpx

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.llm_cache import CacheRow, CacheWriter, canonical_json
from pfgen_fast.common.llm_calls import Caller, Failure, FailureKind
from pfgen_fast.common.llm_replies import (
    ChatRequest,
    CompletionRequest,
    LLMError,
    LLMReply,
    request_for_record,
)

if TYPE_CHECKING:
    from pfgen_fast.common.llm import LLMClient

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
    the canonical JSON of `[where, body]`, written here without serialising the body twice."""
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
    key.update(b"]")
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
    """Where a run tells what it did: `on_result(index, result)` then `progress(done,
    total)` as each request is done, `advance(cached=, failed=)` and `set_total(count)` for a
    progress bar, and the log."""

    on_result: Callable[[int, Result], None] | None = None
    progress: Callable[[int, int], None] | None = None
    advance: Callable[..., None] | None = None
    set_total: Callable[[int], None] | None = None
    log: ReplyLog | None = None


class Dispatcher:
    """Runs the requests of one `LLMClient.run` on the client's servers."""

    def __init__(
        self,
        client: LLMClient,
        requests: Iterator[ChatRequest | CompletionRequest],
        total: int,
        reporting: Reporting,
        writer: CacheWriter | None,
    ) -> None:
        self.client = client
        self.requests = requests
        self.total = total
        self.reporting = reporting
        self.writer = writer
        self.caller = Caller(
            timeout=client.timeout, max_retries=client.max_retries, accept_400=client.accept_400
        )
        self.servers = [Server(url) for url in client.base_urls]
        self.down_after = max(client.concurrency, MIN_FAILURES_FOR_DOWN)
        self.results: list[Result | None] = []
        self.exhausted = False
        self.done = 0
        self.failed: list[LLMError] = []
        # Keys stored by this run: the same request again in it is asked again, as when every
        # request looked in the cache before the first reply came.
        self.stored_now: set[str] = set()
        self.changed = asyncio.Event()
        self.stopped: BaseException | None = None
        self.workers: list[asyncio.Task[None]] = []

    # The run and its workers.

    async def run(self) -> list[Result]:
        headers = {"Content-Type": "application/json"}
        if self.client.api_key:
            headers["Authorization"] = f"Bearer {self.client.api_key}"
        size = self.client.concurrency
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
        self.client.stats.calls += self.caller.calls
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
        client = self.client
        return make_job(
            len(self.results) - 1, request, client.model, client.base_urls, client.extra_body
        )

    # One request.

    async def do(self, job: Job, number: int, http: httpx.AsyncClient) -> None:
        """Asks for one request (the cache first) and records its result."""
        server = self.servers[number]
        result: Result | None = None
        if job.key not in self.stored_now:
            result = self.client.from_cache(job.key, job.request)
        if result is None:
            url = server.base_url + job.request.endpoint
            outcome = await self.caller.call(
                http, url, job.payload, isinstance(job.request, ChatRequest)
            )
            if isinstance(outcome, Failure):
                if outcome.kind is FailureKind.FATAL:
                    error = self.client.refused(url, outcome)
                    self.log(job, server.base_url, error)
                    raise error
                result = self.client.failed(url, outcome)
                if outcome.kind is FailureKind.ITEM:
                    server.failures_in_a_row = 0  # the server answers
                elif self.fail_over(job, number, result, outcome.answered):
                    self.wake()
                    return
                self.client.stats.failed += 1
            else:
                server.failures_in_a_row = 0
                await self.store(job, url, outcome)
                result = outcome
        self.finish(job, result, server.base_url)
        self.wake()

    async def store(self, job: Job, url: str, reply: LLMReply) -> None:
        """Counts the reply's tokens and commits it to the cache (off the event loop)."""
        stats = self.client.stats
        stats.prompt_tokens += reply.usage.get("prompt_tokens", 0)
        stats.completion_tokens += reply.usage.get("completion_tokens", 0)
        self.stored_now.add(job.key)
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
        self.log(job, base_url, result)
        self.results[job.index] = result
        self.done += 1
        reporting = self.reporting
        if reporting.advance is not None:
            cached = isinstance(result, LLMReply) and result.cached
            reporting.advance(cached=cached, failed=isinstance(result, LLMError))
        if reporting.on_result is not None:
            reporting.on_result(job.index, result)
        if reporting.progress is not None:
            reporting.progress(self.done, self.total)
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
            raise self.client.all_down(self.servers)
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
