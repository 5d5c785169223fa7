"""The response cache of `common.llm`: replies stored by request key in one SQLite file (WAL,
one commit per reply, so a killed run loses no reply and several processes may share it)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import cache_dir


class ResponseCache:
    """Replies by request key in one SQLite file, committed one by one."""

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

    def put(self, key: str, url: str, request: str, status: int, body: dict[str, Any]) -> None:
        text = json.dumps(body, ensure_ascii=False)
        try:
            self.db.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?)",
                (key, url, request, status, text, time.time()),
            )
        except sqlite3.Error as error:
            raise self.error(error) from None

    def close(self) -> None:
        self.db.close()


def default_cache_path() -> Path:
    return cache_dir() / "llm" / "responses.sqlite3"


def canonical_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
