"""The response cache of `common.llm`: replies stored by request key in one SQLite file (WAL,
so several processes may share it).

A run stores its replies through a `CacheWriter`: a thread of its own, so that no commit waits
on the event loop, taking every reply queued since its last commit into the next one. A reply
counts as done (logged, handed to the command) only once its commit is over, so a killed run
loses no reply it reported: a resume repeats only the calls that were in flight."""

from __future__ import annotations

import asyncio
import json
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import cache_dir


@dataclass(frozen=True)
class CacheRow:
    """One reply as stored: its key, the endpoint's URL, the request as recorded (JSON), the
    status and the body."""

    key: str
    url: str
    request: str
    status: int
    body: dict[str, Any]


class ResponseCache:
    """Replies by request key in one SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(
                path, timeout=60, isolation_level=None, check_same_thread=False
            )
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")  # WAL: a killed process loses nothing
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, url TEXT NOT NULL,"
                " request TEXT NOT NULL, status INTEGER NOT NULL, body TEXT NOT NULL,"
                " stored REAL NOT NULL)"
            )
        except (OSError, sqlite3.Error) as error:
            raise self.error(error) from None

    def error(self, error: Exception) -> PfgenError:
        return PfgenError(
            f"{self.path}: cannot use the response cache: {error} (remove it or use --no-cache)"
        )

    def get(self, key: str) -> tuple[int, dict[str, Any]] | None:
        try:
            row = self.db.execute(
                "SELECT status, body FROM replies WHERE key = ?", (key,)
            ).fetchone()
        except sqlite3.Error as error:
            raise self.error(error) from None
        return None if row is None else (row[0], json.loads(row[1]))

    def put_many(self, rows: list[CacheRow]) -> None:
        """Stores the rows in one transaction."""
        now = time.time()
        values = [
            (
                row.key,
                row.url,
                row.request,
                row.status,
                json.dumps(row.body, ensure_ascii=False),
                now,
            )
            for row in rows
        ]
        try:
            with self.db:  # one commit; rolled back on an error
                self.db.execute("BEGIN")
                self.db.executemany(
                    "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?)", values
                )
        except sqlite3.Error as error:
            raise self.error(error) from None

    def close(self) -> None:
        self.db.close()


# What the writer's thread tells a waiting store: None when the row is committed.
Settle = Callable[[Exception | None], None]


class CacheWriter:
    """Commits rows to a response cache from a thread of its own, in batches: each commit takes
    every row queued meanwhile. `store` waits (without holding the event loop) until its row is
    committed. `close` commits what is queued and ends the thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.queue: queue.SimpleQueue[tuple[CacheRow, Settle] | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self.write_all, name="response-cache", daemon=True)
        self.thread.start()

    async def store(self, row: CacheRow) -> None:
        """Returns once the row is committed; a PfgenError naming the cache if it cannot be."""
        loop = asyncio.get_running_loop()
        committed: asyncio.Future[None] = loop.create_future()

        def settle(error: Exception | None) -> None:
            try:
                loop.call_soon_threadsafe(resolve, committed, error)
            except RuntimeError:  # the loop is closed: nobody waits any more
                pass

        self.queue.put((row, settle))
        await committed

    def write_all(self) -> None:
        cache: ResponseCache | None = None
        opening_error: Exception | None = None
        while True:
            batch = [self.queue.get()]
            while not self.queue.empty():
                batch.append(self.queue.get())
            entries = [entry for entry in batch if entry is not None]
            error: Exception | None = opening_error
            if entries and cache is None and error is None:
                try:
                    cache = ResponseCache(self.path)
                except PfgenError as failed:
                    error = opening_error = failed
            if entries and cache is not None:
                try:
                    cache.put_many([row for row, _ in entries])
                except PfgenError as failed:
                    error = failed
                except Exception as failed:  # noqa: BLE001 (every waiting store must hear back)
                    error = PfgenError(f"{self.path}: cannot store a reply: {failed!r}")
            for _, settle in entries:
                settle(error)
            if len(entries) < len(batch):  # closed
                break
        if cache is not None:
            cache.close()

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join()


def resolve(future: asyncio.Future[None], error: Exception | None) -> None:
    if future.done():  # the store was cancelled
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)


def default_cache_path() -> Path:
    return cache_dir() / "llm" / "responses.sqlite3"


def canonical_json(value: Any) -> str:
    """The JSON of a request (its cache key, its body as sent); NaN and infinities, which
    JSON has not, are a ValueError."""
    return json.dumps(
        value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
    )
