"""A model or judge server on 127.0.0.1 that never gives a usable answer, in one of seven ways:
HTTP 500, no reply within the client's timeout, a body that is not JSON, an HTML page, JSON
without `choices`, the connection dropped before any reply, and HTTP 429 every time (past any
number of retries)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler

from openai_server import serve_handler

FAILURE_MODES = ("http-500", "timeout", "bad-json", "html", "no-choices", "dropped", "429")
# How long the "timeout" mode waits before answering: longer than the client's --timeout.
TIMEOUT_DELAY = 3.0
# Client options that make each failure final quickly: short timeout, few retries.
FAST_CLIENT = ["--timeout", "0.5", "--max-retries", "1"]


def make_handler(mode: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def send(self, status: int, body: bytes, content_type: str, extra: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                pass

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            json_type = "application/json"
            if mode == "http-500":
                self.send(500, b'{"error": {"message": "boom"}}', json_type, {})
            elif mode == "timeout":
                time.sleep(TIMEOUT_DELAY)
                self.send(500, b'{"error": {"message": "too late"}}', json_type, {})
            elif mode == "bad-json":
                self.send(200, b'{"choices": [', json_type, {})
            elif mode == "html":
                page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
                self.send(200, page, "text/html", {})
            elif mode == "no-choices":
                self.send(200, b'{"object": "chat.completion", "usage": {}}', json_type, {})
            elif mode == "dropped":
                self.close_connection = True  # no status line at all
            elif mode == "429":
                body = b'{"error": {"message": "rate limited"}}'
                self.send(429, body, json_type, {"Retry-After": "0"})
            else:
                raise ValueError(f"unknown failure mode {mode!r}")

        do_GET = do_POST

    return Handler


@contextmanager
def serve_failing(mode: str) -> Iterator[str]:
    """The base URL (…/v1) of a server failing in `mode` while the block runs."""
    with serve_handler(make_handler(mode)) as url:
        yield url
