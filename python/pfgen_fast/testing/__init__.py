"""A deterministic OpenAI-compatible server on 127.0.0.1 to test pipelines against.

    from pfgen_fast.testing import Reply, serve

    with serve(lambda path, body: Reply(text="はい")) as server:
        ...  # point the client at server.base_url
    assert server.requests_count == 1 and server.received[0].text == "..."

`serve` runs the stand-in while the block runs; a responder `(path, body) -> Reply` decides
each reply (text, log-probabilities with top alternatives, reasoning in `<think>` or its own
field, any status with Retry-After, malformed, cut or dropped replies, delays), after the
server's own checks (API key, model, images refused). The default responder answers
`answer_for(prompt)`; `failing(mode)` fails in one of `FAILURE_MODES`; `Flaky` fails every n-th
request. The server records every `Request` (path, body, decoded images) and the most it
served at once. `fast_server_process` runs a fixed reply on one asyncio loop in a process of its
own, so that a benchmark measures its client.

Only the standard library is imported; Pillow only when a request carries an image."""

from pfgen_fast.testing.replies import (
    FAILURE_MODES,
    FAST_CLIENT,
    TIMEOUT_DELAY,
    Flaky,
    Reply,
    Responder,
    Token,
    answer,
    answer_for,
    cut_to_max_tokens,
    failing,
    prompt_text,
)
from pfgen_fast.testing.server import (
    REFUSAL,
    Request,
    StandInServer,
    fast_server_process,
    serve,
    serve_fast,
)

__all__ = [
    "FAILURE_MODES",
    "FAST_CLIENT",
    "REFUSAL",
    "TIMEOUT_DELAY",
    "Flaky",
    "Reply",
    "Request",
    "Responder",
    "StandInServer",
    "Token",
    "answer",
    "answer_for",
    "cut_to_max_tokens",
    "failing",
    "fast_server_process",
    "prompt_text",
    "serve",
    "serve_fast",
]
