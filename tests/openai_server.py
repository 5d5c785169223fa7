"""An OpenAI-compatible test server on 127.0.0.1: deterministic answers, and failures on demand
(HTTP 500, malformed replies, slow replies, empty answers, answers behind "A:", a required API
key, an unknown model). It records every request it receives and how many it served at once.
A test may decide each reply itself with a `responder` (text, log-probabilities with top
alternatives, any status with Retry-After, a delay, a malformed body)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One reply as a responder decides it. `logprobs`: (token, logprob, top alternatives) per
    generated token, sent in the chat or the completions form by the endpoint asked; `status`
    other than 200 sends `{"error": {"message": error}}`, with a Retry-After header when
    `retry_after` is set; `delay` seconds pass first; `malformed` sends a body cut short;
    `dropped` closes the connection without any reply; `reasoning`, in a chat, is sent apart as
    the message's `reasoning_content`."""

    text: str | None = ""
    reasoning: str | None = None
    logprobs: list[tuple[str, float, list[tuple[str, float]]]] | None = None
    finish_reason: str = "stop"
    status: int = 200
    error: str = "error"
    retry_after: str = ""
    delay: float = 0.0
    malformed: bool = False
    dropped: bool = False
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    )


Responder = Callable[[str, dict[str, Any]], Reply]


@dataclass
class Behaviour:
    """Every `fail_every`-th request fails with HTTP 500, every `malformed_every`-th gets a
    reply that is not JSON, every `empty_every`-th answer is blank, every `slow_every`-th reply
    waits `slow_seconds`; `delay` is added to every reply. Chat answers come as "A: ...".
    `api_key`, when set, is required; `model`, when set, is the only model served.
    `responder(path, request)`, when set, decides every reply instead (after the key and model
    checks and `delay`). `most_at_once` is the most requests being served at the same time."""

    fail_every: int = 0
    malformed_every: int = 0
    empty_every: int = 0
    slow_every: int = 0
    slow_seconds: float = 0.0
    delay: float = 0.0
    api_key: str = ""
    model: str = ""
    responder: Responder | None = None
    received: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    at_once: int = 0
    most_at_once: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, path: str, body: dict[str, Any]) -> int:
        """Keeps the request; its number, from 1."""
        with self.lock:
            self.received.append((path, body))
            return len(self.received)

    def serving(self, change: int) -> None:
        with self.lock:
            self.at_once += change
            self.most_at_once = max(self.most_at_once, self.at_once)


def answer_for(text: str) -> str:
    """The server's answer to a prompt (the last message of a chat)."""
    digest = hashlib.sha1(text.encode()).hexdigest()
    return f"回答{int(digest[:6], 16) % 1000}番です。"


def every(period: int, number: int) -> bool:
    return period > 0 and number % period == 0


def reply_body(chat: bool, reply: Reply) -> dict[str, Any]:
    """A (chat) completion body carrying the reply's text and log-probabilities."""
    choice: dict[str, Any] = {"index": 0, "finish_reason": reply.finish_reason}
    if chat:
        choice["message"] = {"role": "assistant", "content": reply.text}
        if reply.reasoning is not None:
            choice["message"]["reasoning_content"] = reply.reasoning
    else:
        choice["text"] = reply.text
    if reply.logprobs is not None and chat:
        choice["logprobs"] = {
            "content": [
                {
                    "token": token,
                    "logprob": logprob,
                    "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top],
                }
                for token, logprob, top in reply.logprobs
            ]
        }
    elif reply.logprobs is not None:
        choice["logprobs"] = {
            "tokens": [token for token, _, _ in reply.logprobs],
            "token_logprobs": [logprob for _, logprob, _ in reply.logprobs],
            "top_logprobs": [dict(top) for _, _, top in reply.logprobs],
        }
    kind = "chat.completion" if chat else "text_completion"
    return {"object": kind, "choices": [choice], "usage": reply.usage}


def make_handler(behaviour: Behaviour) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def reply(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                pass

        def reply_json(self, status: int, body: dict[str, Any]) -> None:
            self.reply(status, json.dumps(body, ensure_ascii=False).encode())

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            behaviour.serving(1)
            try:
                self.answer()
            finally:
                behaviour.serving(-1)

        def respond(self, request: dict[str, Any], responder: Responder) -> None:
            reply = responder(self.path, request)
            time.sleep(reply.delay)
            if reply.dropped:
                self.close_connection = True
            elif reply.malformed:
                self.reply(200, b'{"choices": [')
            elif reply.status != 200:
                headers = {"Retry-After": reply.retry_after} if reply.retry_after else {}
                body = json.dumps({"error": {"message": reply.error}}, ensure_ascii=False)
                self.reply(reply.status, body.encode(), headers)
            else:
                self.reply_json(200, reply_body(self.path.endswith("/chat/completions"), reply))

        def answer(self) -> None:
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
            if behaviour.responder is not None:
                self.respond(request, behaviour.responder)
                return
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


class Server(ThreadingHTTPServer):
    # Room for every connection a client opens at once: with socketserver's 5, connections
    # beyond it wait for the client to send their SYN again (a second later).
    request_queue_size = 128


@contextmanager
def serve(behaviour: Behaviour) -> Iterator[str]:
    """The server's base URL (…/v1) while the block runs."""
    with serve_handler(make_handler(behaviour)) as url:
        yield url


@contextmanager
def serve_handler(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A server on 127.0.0.1 answering with `handler`: its base URL (…/v1) while the block
    runs (the test servers of the model client, the judges and the vision models)."""
    server = Server(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
