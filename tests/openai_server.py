"""An OpenAI-compatible test server on 127.0.0.1: deterministic answers, and failures on demand
(HTTP 500, malformed replies, slow replies, empty answers, answers behind "A:", a required API
key, an unknown model). It records every request it receives."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Behaviour:
    """Every `fail_every`-th request fails with HTTP 500, every `malformed_every`-th gets a
    reply that is not JSON, every `empty_every`-th answer is blank, every `slow_every`-th reply
    waits `slow_seconds`; `delay` is added to every reply. Chat answers come as "A: ...".
    `api_key`, when set, is required; `model`, when set, is the only model served."""

    fail_every: int = 0
    malformed_every: int = 0
    empty_every: int = 0
    slow_every: int = 0
    slow_seconds: float = 0.0
    delay: float = 0.0
    api_key: str = ""
    model: str = ""
    received: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, path: str, body: dict[str, Any]) -> int:
        """Keeps the request; its number, from 1."""
        with self.lock:
            self.received.append((path, body))
            return len(self.received)


def answer_for(text: str) -> str:
    """The server's answer to a prompt (the last message of a chat)."""
    digest = hashlib.sha1(text.encode()).hexdigest()
    return f"回答{int(digest[:6], 16) % 1000}番です。"


def every(period: int, number: int) -> bool:
    return period > 0 and number % period == 0


def make_handler(behaviour: Behaviour) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def reply(self, status: int, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                pass

        def reply_json(self, status: int, body: dict[str, Any]) -> None:
            self.reply(status, json.dumps(body, ensure_ascii=False).encode())

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            number = behaviour.record(self.path, request)
            if behaviour.api_key and self.headers.get("Authorization") != (
                f"Bearer {behaviour.api_key}"
            ):
                self.reply_json(401, {"error": {"message": "Incorrect API key provided"}})
                return
            if behaviour.model and request["model"] != behaviour.model:
                message = f"The model `{request['model']}` does not exist."
                self.reply_json(404, {"error": {"message": message}})
                return
            time.sleep(behaviour.delay)
            if every(behaviour.slow_every, number):
                time.sleep(behaviour.slow_seconds)
            if every(behaviour.fail_every, number):
                self.reply_json(500, {"error": {"message": "boom"}})
                return
            if every(behaviour.malformed_every, number):
                self.reply(200, b'{"choices": [')
                return
            chat = self.path.endswith("/chat/completions")
            text = request["messages"][-1]["content"] if chat else request["prompt"]
            answer = answer_for(text)
            if every(behaviour.empty_every, number):
                answer = "   "
            elif chat:  # chat models often answer in the examples' "A: ..." form
                answer = f"A: {answer}"
            choice = (
                {"index": 0, "message": {"role": "assistant", "content": answer}}
                if chat
                else {"index": 0, "text": " " + answer}
            )
            self.reply_json(200, {"object": "completion", "choices": [choice]})

    return Handler


@contextmanager
def serve(behaviour: Behaviour) -> Iterator[str]:
    """The server's base URL (…/v1) while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(behaviour))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
