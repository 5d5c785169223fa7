"""An OpenAI-compatible test server on 127.0.0.1: deterministic answers, and failures on demand
(HTTP 500, slow replies, empty answers, answers behind "A:", a required API key)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Behaviour:
    """Every `fail_every`-th request fails with HTTP 500, every `empty_every`-th answer is
    empty, every `slow_every`-th reply waits `slow_seconds`; qa/chat answers get an "A:" prefix;
    `api_key`, when set, is required; `delay` is added to every reply."""

    fail_every: int = 0
    empty_every: int = 0
    slow_every: int = 0
    slow_seconds: float = 0.0
    delay: float = 0.0
    api_key: str = ""
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_request(self) -> int:
        with self.lock:
            self.requests += 1
            return self.requests


def answer_for(text: str) -> str:
    digest = hashlib.sha1(text.encode()).hexdigest()
    return f"回答{int(digest[:6], 16) % 1000}番です。"


def make_handler(behaviour: Behaviour) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def reply(self, status: int, body: dict) -> None:
            data = json.dumps(body, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except BrokenPipeError:  # the client gave up waiting (a timeout test)
                pass

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            number = behaviour.next_request()
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if behaviour.api_key and self.headers.get("Authorization") != (
                f"Bearer {behaviour.api_key}"
            ):
                self.reply(401, {"error": "unauthorized"})
                return
            if behaviour.delay:
                time.sleep(behaviour.delay)
            if behaviour.slow_every and number % behaviour.slow_every == 0:
                time.sleep(behaviour.slow_seconds)
            if behaviour.fail_every and number % behaviour.fail_every == 0:
                self.reply(500, {"error": "boom"})
                return
            chat = self.path.endswith("/chat/completions")
            text = request["messages"][-1]["content"] if chat else request["prompt"]
            answer = answer_for(text)
            if behaviour.empty_every and number % behaviour.empty_every == 0:
                answer = "   "
            elif "A:" not in text[-3:]:  # qa and chat prompts: answer like "A: ..."
                answer = f"A: {answer}"
            choice = (
                {"message": {"role": "assistant", "content": answer}}
                if chat
                else {"text": " " + answer}
            )
            self.reply(200, {"choices": [choice]})

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
