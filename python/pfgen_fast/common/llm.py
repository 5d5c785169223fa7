"""The one client every benchmark room asks a model through: OpenAI-compatible chat
(`/chat/completions`) and completions (`/completions`) under a base URL (…/v1).

* Requests run concurrently (asyncio, at most `concurrency` at once per server). 429 (its
  Retry-After honoured, seconds or HTTP date), 408/409/425, 5xx, timeouts, dropped connections
  and malformed replies (not JSON, no choices) are retried up to `max_retries` times, with an
  exponential backoff with jitter (`common.retries`).
* What fails is that request's failure: an LLMError in its slot of the results, with a short
  `reason` (what a command records for the item): a request the server refuses for itself
  alone (HTTP 400, 413, 422; "prompt longer than the server's context (N tokens)" when the
  server says so, in vLLM's, SGLang's, llama.cpp's or OpenAI's words), or one still failing
  after its retries ("HTTP 500: <the server's message>", "timed out after 120 s", ...). A client
  that accepts 400 as an answer gets a 400 reply instead (LCTG's remover).
* The run stops (`run` raises an LLMError) only when no request can succeed or too many fail:
  at once on a refusal that holds for every request (401/403: authentication, 404: unknown
  model or path, other 4xx); when every server is down (`max(concurrency, 3)` requests in a row
  failing after their retries: "the server looks down" when it did not answer at all, else the
  status and the server's message); when more than 10% of the requests failed
  (`too_many_failures`, the rule `mm run` applies to a task's items; a run of unknown length
  counts at least 20 requests). The requests in flight are then cancelled.
* Every reply (200, or 400 when accepted) goes to a SQLite response cache, committed by a
  thread of its own (`common.llm_cache`): a reply is handed to the command only once it is
  committed, so a killed run loses no reply it reported and a re-run makes no call for it
  (several processes may share the cache). The key is the SHA-256 of the canonical JSON of the
  endpoint's full URL and the whole request body (model and parameters included). The base URL
  is part of the key because the model name alone does not say which model answers: local
  servers answer under whatever name they are given and different providers reuse names, and a
  wrong hit would silently give wrong results, while a server moved to a new address only
  costs calls. The API key, timeouts and concurrency are not part of it.
* Single flight: with the cache, a request identical to one in flight (the same key) is not
  sent; it takes that one's result, the reply marked cached. Requests meant as separate
  samples differ in their body (a seed), so they stay separate. Without the cache every
  request is sent.
* Every reply, cached or not, and every failure is appended to `log_path` as one JSON line.
* Several servers (replicas of one model): each runs `concurrency` requests at once, taking the
  next request as soon as it is free, so faster servers take more. A request that fails after
  its retries on one server is tried on each other server not yet down; a down server takes no
  more, and the run stops once every server is down. The cache key then holds the sorted list
  of the servers' endpoint URLs (the replica set names the model), so the same servers in any
  order share replies.
* Requests may come from an iterator: each is built when a server is free to take it, so a
  long run of large requests (images) never holds them all. Data URLs (`data:...;base64,...`)
  are stored in the cache's request column and the log by their length, not in full.
* With a `progress` (`common.progress`), each run shows a bar: requests done, rate, time left,
  cached and failed counts.

The modules: `llm_replies` (requests, replies, parsing), `llm_calls` (one request with its
retries and what its failure means), `llm_dispatch` (the workers of a run, failover, stop
rules, log), `llm_cache` (the cache and its writer), `llm_options` (command-line options).

httpx is the HTTP library: asynchronous with connection pooling and per-phase timeouts, well
kept, and small. The openai SDK would bring its own retry policy and reply models (pydantic),
which hide the raw body we cache and log, and would need bypassing for 400-as-answer; the
standard library has no asynchronous HTTP client. This module imports neither numpy nor the
compiled core, so commands that only ask a model stay light.
"""

from __future__ import annotations

import asyncio
import enum
import os
import sys
import urllib.parse
from collections.abc import Callable, Iterable, Sized
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.llm_cache import CacheWriter, ResponseCache, default_cache_path
from pfgen_fast.common.llm_dispatch import (
    FAILURE_SHARE,
    Dispatcher,
    ReplyLog,
    Reporting,
    Settings,
    too_many_failures,
)
from pfgen_fast.common.llm_replies import (
    ChatRequest,
    CompletionRequest,
    LLMError,
    LLMReply,
    LLMStats,
    TokenLogprob,
    parse_logprobs,
    parse_reply,
)

if TYPE_CHECKING:
    from pfgen_fast.common.progress import Progress

__all__ = [
    "DEFAULT",
    "FAILURE_SHARE",
    "ChatRequest",
    "CompletionRequest",
    "LLMClient",
    "LLMError",
    "LLMReply",
    "LLMStats",
    "TokenLogprob",
    "parse_logprobs",
    "parse_reply",
    "cut_warning",
    "too_many_failures",
    "warn_if_cut",
]


# What a server's base URL is.
SERVER_URL = "an http:// or https:// URL with a host"


def is_server_url(url: str) -> bool:
    """Whether `url` can be a server's base URL (SERVER_URL)."""
    try:
        parts = urllib.parse.urlsplit(url)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # a malformed address (an unclosed IPv6 bracket)
        return False


def cut_warning(count: int, whose: str = "", option: str = "--max-tokens") -> str | None:
    """What a command says of the replies cut at max_tokens (`LLMStats.cut`, summed over its
    clients), with the option that raises the limit; None when none was. `whose` names the
    replies ("judge ") where a command asks more than one model."""
    if not count:
        return None
    replies = "reply was" if count == 1 else "replies were"
    return f"{count} {whose}{replies} cut at max_tokens (raise {option})"


def warn_if_cut(stats: LLMStats, whose: str = "", option: str = "--max-tokens") -> None:
    """Prints `cut_warning` of a client's counts on standard error, if there is one."""
    warning = cut_warning(stats.cut, whose, option)
    if warning is not None:
        print(f"warning: {warning}", file=sys.stderr)


class _Default(enum.Enum):
    DEFAULT = enum.auto()


DEFAULT = _Default.DEFAULT


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
        progress: Progress | None = None,
    ) -> None:
        base_urls = [base_url] if isinstance(base_url, str) else list(base_url)
        if not base_urls:
            raise PfgenError("the LLM client needs a server (--base-url)")
        for url in base_urls:
            if not is_server_url(url):
                raise PfgenError(f"--base-url {url!r}: expected {SERVER_URL}")
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
        self.cache_path = cache_path if isinstance(cache_path, Path) else None
        self.cache = ResponseCache(cache_path) if isinstance(cache_path, Path) else None
        self.stats = LLMStats()
        self.progress = progress

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
        *,
        on_result: Callable[[int, LLMReply | LLMError], None] | None = None,
        label: str = "requests",
        total: int | None = None,
    ) -> list[LLMReply | LLMError]:
        """The replies in request order (an LLMError where a request failed, see the module's
        docstring). As each request is done, `on_result(index, result)` is called (an
        exception it raises stops the run). An iterator is read only as servers are free;
        `total` says how many requests it gives at most (the count is corrected when it ends;
        without it, and without a length, `total` is 0). `label` names the run's progress
        bar. Not callable from a running event loop."""
        if total is None:
            total = len(requests) if isinstance(requests, Sized) else 0
        settings = Settings(
            tuple(self.base_urls),
            self.model,
            self.api_key,
            self.concurrency,
            self.timeout,
            self.max_retries,
            self.accept_400,
            self.extra_body,
        )
        log = None if self.log_path is None else ReplyLog(self.log_path)
        writer = None if self.cache_path is None else CacheWriter(self.cache_path)
        bar = None if self.progress is None else self.progress.task(label, total or None)
        try:
            reporting = Reporting(
                on_result, bar.advance if bar else None, bar.set_total if bar else None, log
            )
            dispatcher = Dispatcher(
                settings, self.cache, self.stats, iter(requests), total, reporting, writer
            )
            return asyncio.run(dispatcher.run())
        finally:
            if bar is not None:
                bar.close()
            if writer is not None:
                writer.close()
            if log is not None:
                log.close()
