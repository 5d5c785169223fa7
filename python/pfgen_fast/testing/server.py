"""The stand-in server: an OpenAI-compatible server on 127.0.0.1 (`/chat/completions`,
`/completions`, `GET /models`) whose every reply a responder decides, recording each request
(its body, and the decoded size and type of each image it carries) and how many it served at
once. `serve` runs it on threads for a test; `serve_fast` runs one fixed reply on one asyncio
loop (no threads, nothing recorded), so that a benchmark measures its client, and
`python -m pfgen_fast.testing` runs that in a process of its own."""

from __future__ import annotations

import asyncio
import base64
import binascii
import io
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pfgen_fast.testing.replies import (
    Reply,
    Responder,
    answer,
    cut_to_max_tokens,
    prompt_text,
    reply_bytes,
)

# Media type, width and height of one decoded image.
Image = tuple[str, int, int]
# The error a text-only server gives a request with an image (`refuse_images`).
REFUSAL = "this model does not take image input"


@dataclass(frozen=True)
class Request:
    """One request as the stand-in received it (`body` is {} for a GET)."""

    path: str
    body: dict[str, Any]
    images: list[Image]  # every image of a chat request, in order

    @property
    def model(self) -> str | None:
        return self.body.get("model")

    @property
    def text(self) -> str:
        """The text parts of the last message, or a completion's prompt."""
        return prompt_text(self.body)

    @property
    def params(self) -> dict[str, Any]:
        """Everything but the model and the prompt."""
        return {k: v for k, v in self.body.items() if k not in ("model", "messages", "prompt")}

    @property
    def detail(self) -> list[str | None]:
        """Each image part's `detail`, in order."""
        return [part["image_url"].get("detail") for part in image_parts(self.body)]


def image_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    parts = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            parts += [part for part in content if part.get("type") == "image_url"]
    return parts


def decode_image(url: str) -> Image:
    """The media type and decoded size of a data URL's image (ValueError when it is none)."""
    from PIL import Image as PillowImage
    from PIL import UnidentifiedImageError

    head, _, data = url.partition(";base64,")
    try:
        with PillowImage.open(io.BytesIO(base64.b64decode(data, validate=True))) as image:
            image.load()
            return head.removeprefix("data:"), image.width, image.height
    except (binascii.Error, UnidentifiedImageError, OSError) as error:
        raise ValueError(f"not an image: {error}") from error


@dataclass
class StandInServer:
    """The server's state and settings. `responder(path, body)` decides every reply (after
    the checks below and `delay`); `api_key`, when set, is required (HTTP 401 otherwise);
    `model`, when set, is the only model served (HTTP 404); `refuse_images` answers a request
    with an image HTTP 400 as a text-only server does; `honour_max_tokens` cuts replies at the
    request's `max_tokens` (`cut_to_max_tokens`). `base_url` is set while it serves."""

    responder: Responder = answer
    api_key: str = ""
    model: str = ""
    delay: float = 0.0
    refuse_images: bool = False
    honour_max_tokens: bool = False
    base_url: str = ""
    received: list[Request] = field(default_factory=list)
    most_at_once: int = 0
    at_once: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def requests_count(self) -> int:
        return len(self.received)

    def bodies(self) -> list[dict[str, Any]]:
        """The body of every request received, in order."""
        return [request.body for request in self.received]

    def record(self, request: Request) -> None:
        with self.lock:
            self.received.append(request)

    def serving(self, change: int) -> None:
        with self.lock:
            self.at_once += change
            self.most_at_once = max(self.most_at_once, self.at_once)

    def decide(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        """The reply to one request, images decoded and the request recorded first."""
        try:
            images = [decode_image(part["image_url"]["url"]) for part in image_parts(body)]
        except (ValueError, KeyError, TypeError) as error:  # as a server refuses a bad image
            self.record(Request(path, body, []))
            return Reply(status=400, error=f"bad image: {error}")
        self.record(Request(path, body, images))
        if self.api_key and headers.get("authorization") != f"Bearer {self.api_key}":
            return Reply(status=401, error="Incorrect API key provided")
        if self.model and body and body.get("model") != self.model:
            return Reply(status=404, error=f"The model `{body.get('model')}` does not exist.")
        time.sleep(self.delay)
        if self.refuse_images and images:
            return Reply(status=400, error=REFUSAL)
        try:
            reply = self.responder(path, body)
        except Exception as error:  # a test's responder failed: say so to the client
            return Reply(status=500, error=f"the responder failed: {error!r}")
        limit = body.get("max_tokens") or body.get("max_completion_tokens")
        if self.honour_max_tokens and isinstance(limit, int):
            reply = cut_to_max_tokens(reply, limit)
        return reply


def make_handler(stand_in: StandInServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real servers

        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.handle_request({})

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length)
            if len(data) < length:  # the client went away while sending: no request
                self.close_connection = True
                return
            try:
                body = json.loads(data)
            except ValueError:
                body = None
            if not isinstance(body, dict):
                self.send(Reply(status=400, error="the body is not a JSON object"))
                return
            self.handle_request(body)

        def handle_request(self, body: dict[str, Any]) -> None:
            stand_in.serving(1)
            try:
                headers = {name.lower(): value for name, value in self.headers.items()}
                reply = stand_in.decide(self.path, body, headers)
                time.sleep(reply.delay)
                self.send(reply)
            finally:
                stand_in.serving(-1)

        def send(self, reply: Reply) -> None:
            if reply.drop:
                self.close_connection = True  # no status line at all
                return
            status, headers, data = reply_bytes(self.path, reply, stand_in.model or "stand-in")
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            if reply.cut:
                data = data[: len(data) // 2]
                self.close_connection = True
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                self.close_connection = True

    return Handler


class Server(ThreadingHTTPServer):
    """A threaded server that can also close the connections it keeps alive, so that a
    stopped stand-in answers nothing more."""

    # Room for every connection a client opens at once: with socketserver's 5, connections
    # beyond it wait for the client to send their SYN again (a second later).
    request_queue_size = 128
    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # not just a client gone
            super().handle_error(request, client_address)

    def close_connections(self) -> None:
        with self.connections_lock:
            for connection in self.connections:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:  # the client closed it already
                    pass


@contextmanager
def serve(
    responder: Responder = answer,
    *,
    api_key: str = "",
    model: str = "",
    delay: float = 0.0,
    refuse_images: bool = False,
    honour_max_tokens: bool = False,
) -> Iterator[StandInServer]:
    """The stand-in (settings as `StandInServer` says), serving while the block runs."""
    stand_in = StandInServer(responder, api_key, model, delay, refuse_images, honour_max_tokens)
    server = Server(make_handler(stand_in))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    stand_in.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield stand_in
    finally:
        server.shutdown()
        server.server_close()
        server.close_connections()


# The fast mode's one reply, on every path.
FAST_REPLY = Reply(
    text="写真です。", usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
)


def fast_response(reply: Reply) -> bytes:
    """The whole HTTP response the fast mode sends to every request."""
    status, headers, body = reply_bytes("/v1/chat/completions", reply, "stand-in")
    lines = [f"HTTP/1.1 {status} OK", *(f"{name}: {value}" for name, value in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def answer_connection(
    response: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Reads each request of one connection and answers it at once, until the client closes."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            await reader.readexactly(length)
            writer.write(response)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve_fast(reply: Reply = FAST_REPLY) -> None:
    """The fast mode: prints its base URL, then answers every request with `reply` until
    standard input closes."""
    response = fast_response(reply)

    async def answer_one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await answer_connection(response, reader, writer)

    server = await asyncio.start_server(answer_one, "127.0.0.1", 0, limit=1 << 24)
    port = server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    server.close()


@contextmanager
def fast_server_process() -> Iterator[str]:
    """The base URL of the fast mode, run in a process of its own while the block runs."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pfgen_fast.testing"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        yield process.stdout.readline().strip()
    finally:
        process.stdin.close()
        process.wait(timeout=10)
        process.stdout.close()
