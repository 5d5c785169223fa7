"""The retry policy shared by model calls and downloads: Retry-After in its two forms, and an
archive download from a real HTTP server on 127.0.0.1 that fails before it succeeds."""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import islice
from pathlib import Path

import pytest

from pfgen_fast.common.archive import download
from pfgen_fast.common.errors import DataError
from pfgen_fast.common.retries import backoff_limits, backoffs, retry_after, retryable

BODY = b"the archive's bytes"


def test_retry_after_forms() -> None:
    assert retry_after("3") == 3.0 and retry_after("0.5") == 0.5 and retry_after("-2") == 0.0
    assert retry_after(None) is None and retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 28 <= (retry_after(later) or 0) <= 30
    assert retry_after(email.utils.formatdate(time.time() - 30, usegmt=True)) == 0.0


def test_backoff_doubles_up_to_its_limit_with_jitter() -> None:
    limits = backoff_limits()
    assert [next(limits) for _ in range(8)] == [0.5, 1, 2, 4, 8, 16, 16, 16]
    waits = [list(islice(backoffs(random.Random(seed)), 8)) for seed in range(20)]
    for drawn in waits:
        assert all(
            limit / 2 <= wait <= limit for wait, limit in zip(drawn, limits_of(8), strict=True)
        )
    assert len({tuple(drawn) for drawn in waits}) == 20  # spread, not in step


def limits_of(count: int) -> list[float]:
    return list(islice(backoff_limits(), count))


def test_statuses_worth_another_try() -> None:
    assert all(retryable(s) for s in (408, 409, 425, 429, 500, 502, 503))
    assert not any(retryable(s) for s in (400, 401, 403, 404, 410))


@contextmanager
def serve(statuses: list[tuple[int, dict[str, str]]]) -> Iterator[tuple[str, list[str]]]:
    """A server answering GET with the given (status, headers) in turn, then 200 with BODY;
    yields its URL and the paths it was asked for."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            asked.append(self.path)
            status, headers = statuses.pop(0) if statuses else (200, {})
            body = BODY if status == 200 else b"not now"
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()


def test_a_download_is_retried_after_a_server_error() -> None:
    with serve([(503, {}), (502, {})]) as (url, asked):
        assert download(f"{url}/a.tar.gz") == BODY
    assert asked == ["/a.tar.gz"] * 3


def test_a_rate_limited_download_waits_as_retry_after_says() -> None:
    with serve([(429, {"Retry-After": "0"})]) as (url, asked):
        assert download(f"{url}/a.tar.gz") == BODY
    assert len(asked) == 2


def test_a_redirect_is_followed() -> None:
    with serve([(302, {"Location": "/elsewhere.tar.gz"})]) as (url, asked):
        assert download(f"{url}/a.tar.gz") == BODY
    assert asked == ["/a.tar.gz", "/elsewhere.tar.gz"]


def test_a_status_that_retrying_cannot_change_fails_at_once() -> None:
    with serve([(404, {})]) as (url, asked), pytest.raises(DataError) as error:
        download(f"{url}/missing.tar.gz")
    assert asked == ["/missing.tar.gz"]
    assert str(error.value) == f"{url}/missing.tar.gz: download failed: HTTP 404"


def test_a_url_that_is_not_http_fails_at_once() -> None:
    with pytest.raises(DataError, match="download failed: .*protocol"):
        download("ftp://127.0.0.1/a.tar.gz")


def test_a_file_url_reads_the_file(tmp_path: Path) -> None:
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(BODY)
    assert download(archive.as_uri()) == BODY
    with pytest.raises(DataError, match="download failed: No such file"):
        download((tmp_path / "missing.tar.gz").as_uri())
