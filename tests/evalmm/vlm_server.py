"""A vision-language model stand-in on 127.0.0.1: an OpenAI-compatible `/chat/completions`
that records each request (its text, the decoded size and type of each image, the order, the
parameters) and answers deterministically. On demand it fails every request (HTTP 500) or
refuses images (HTTP 400, as a text-only model's server does)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from openai_server import serve_handler

REFUSAL = "this model does not take image input"


@dataclass
class Seen:
    """One request as the stand-in received it."""

    number: int  # from 1, in order of arrival
    model: str
    text: str
    images: list[tuple[str, int, int]]  # (media type, width, height)
    params: dict[str, Any]  # everything but model and messages
    detail: list[str | None]  # each image_url part's "detail"


@dataclass
class VLM:
    """What the stand-in does: `fail` answers HTTP 500, `refuse_images` HTTP 400 to a request
    with an image; `answer(text)` decides the reply (default: a digest of the text and the
    image sizes), `choice(text)` the whole choice when given."""

    fail: bool = False
    refuse_images: bool = False
    answer: Callable[[str], str] | None = None
    # The whole reply's choice for a text (reasoning fields, finish_reason); over `answer`.
    choice: Callable[[str], dict[str, Any]] | None = None
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def texts(self) -> list[str]:
        return [request.text for request in self.seen]


def default_answer(text: str, images: list[tuple[str, int, int]]) -> str:
    digest = hashlib.sha1(f"{text}|{images}".encode()).hexdigest()
    return f"答え{int(digest[:6], 16) % 1000}"


def image_of(url: str) -> tuple[str, int, int]:
    """The media type and decoded size of a data URL's image."""
    from PIL import Image

    head, _, data = url.partition(";base64,")
    kind = head.removeprefix("data:")
    with Image.open(io.BytesIO(base64.b64decode(data, validate=True))) as image:
        image.load()
        return kind, image.width, image.height


def make_handler(vlm: VLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real servers

        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def reply(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            data = self.rfile.read(int(self.headers["Content-Length"]))
            request = json.loads(data)
            message = request["messages"][-1]  # a judge's request may start with a system one
            content = message["content"]
            parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
            text = "".join(part["text"] for part in parts if part["type"] == "text")
            urls = [part["image_url"] for part in parts if part["type"] == "image_url"]
            images = [image_of(url["url"]) for url in urls]
            params = {k: v for k, v in request.items() if k not in ("model", "messages")}
            with vlm.lock:
                seen = Seen(
                    len(vlm.seen) + 1,
                    request["model"],
                    text,
                    images,
                    params,
                    [url.get("detail") for url in urls],
                )
                vlm.seen.append(seen)
            if vlm.fail:
                self.reply(500, {"error": {"message": "the stand-in fails on purpose"}})
                return
            if vlm.refuse_images and images:
                self.reply(400, {"error": {"message": REFUSAL}})
                return
            answer = vlm.answer(text) if vlm.answer else default_answer(text, images)
            choice = {"index": 0, "message": {"role": "assistant", "content": answer}}
            if vlm.choice is not None:
                choice = {"index": 0, **vlm.choice(text)}
            usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
            self.reply(200, {"object": "chat.completion", "choices": [choice], "usage": usage})

    return Handler


@contextmanager
def serve(vlm: VLM) -> Iterator[str]:
    """The stand-in's base URL (…/v1) while the block runs."""
    with serve_handler(make_handler(vlm)) as url:
        yield url
