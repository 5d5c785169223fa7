"""What the LLM client makes of failures: a request refused for itself is its item's error
with a reason in the server's terms (a prompt longer than the context, in vLLM's, SGLang's and
llama.cpp's words), a server error keeps the server's own message, a run stops only when no
request can succeed or too many fail, and "looks down" is said only of a server that does not
answer at all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pfgen_fast.common.llm import CompletionRequest, LLMClient, LLMError, LLMReply
from pfgen_fast.common.llm_calls import refusal_reason
from pfgen_fast.testing import Reply, serve

VLLM = (
    "This model's maximum context length is 2048 tokens. However, you requested 2100 tokens "
    "(2000 in the messages, 100 in the completion). Please reduce the length of the messages "
    "or completion."
)
SGLANG = "The input (3000 tokens) is longer than the model's context length (2048 tokens)."
LLAMA_CPP = "the request exceeds the available context size, try increasing it"
LLAMA_CPP_PYTHON = "Requested tokens (2100) exceed context window of 2048"


def client(url: str | list[str], **options: Any) -> LLMClient:
    options.setdefault("timeout", 5.0)
    return LLMClient(url, "test/model", api_key="", cache_path=None, **options)


def requests(count: int) -> list[CompletionRequest]:
    return [CompletionRequest(f"p{i}") for i in range(count)]


@pytest.mark.parametrize(
    ("message", "body", "reason"),
    [
        (VLLM, {}, "prompt longer than the server's context (2048 tokens)"),
        (SGLANG, {}, "prompt longer than the server's context (2048 tokens)"),
        (LLAMA_CPP_PYTHON, {}, "prompt longer than the server's context (2048 tokens)"),
        (
            LLAMA_CPP,
            {"error": {"code": 400, "message": LLAMA_CPP, "n_ctx": 4096}},
            "prompt longer than the server's context (4096 tokens)",
        ),
        (LLAMA_CPP, {}, "prompt longer than the server's context"),
        ("unsupported image type", {}, "HTTP 400: unsupported image type"),
    ],
)
def test_refusal_reasons(message: str, body: dict[str, Any], reason: str) -> None:
    assert refusal_reason(400, message, body) == reason


def test_a_long_prompt_is_its_items_error_and_the_others_are_answered() -> None:
    def respond(path: str, request: dict[str, Any]) -> Reply:
        if request["prompt"] == "p5":
            return Reply(status=400, error=VLLM)
        return Reply(text=request["prompt"])

    responder = respond
    with serve(responder) as server:
        results = client(server.base_url).run(requests(16))
    errors = {i: r for i, r in enumerate(results) if isinstance(r, LLMError)}
    assert list(errors) == [5] and server.requests_count == 16
    assert errors[5].reason == "prompt longer than the server's context (2048 tokens)"
    assert errors[5].status == 400 and "HTTP 400: This model's maximum" in str(errors[5])
    assert [r.text for r in results if isinstance(r, LLMReply)] == [
        f"p{i}" for i in range(16) if i != 5
    ]


def test_a_server_error_after_retries_keeps_the_servers_message() -> None:
    def respond(path: str, request: dict[str, Any]) -> Reply:
        if request["prompt"] == "p2":
            return Reply(status=500, error="llama_decode returned 1")
        return Reply(text="ok")

    with serve(respond) as server:
        results = client(server.base_url, max_retries=1).run(requests(8))
    error = results[2]
    assert isinstance(error, LLMError) and error.reason == "HTTP 500: llama_decode returned 1"
    assert "no answer after 2 tries (HTTP 500: llama_decode returned 1)" in str(error)


def test_a_server_answering_500_to_everything_is_not_called_down() -> None:
    with (
        serve(lambda p, r: Reply(status=500, error="CUDA out of memory")) as server,
        pytest.raises(LLMError) as raised,
    ):
        client(server.base_url, max_retries=0, concurrency=2).run(requests(50))
    message = str(raised.value)
    assert "looks down" not in message and raised.value.status == 500
    assert "the server answers, but 3 requests in a row failed" in message
    assert "HTTP 500: CUDA out of memory" in message
    assert server.requests_count < 10


def test_a_server_that_does_not_answer_looks_down() -> None:
    with pytest.raises(LLMError, match=r"127.0.0.1:9/v1: the server looks down \(3 calls in a row"):
        client("http://127.0.0.1:9/v1", max_retries=0, concurrency=1).run(requests(50))


def test_too_many_refused_requests_stop_the_run() -> None:
    def respond(path: str, request: dict[str, Any]) -> Reply:
        if int(request["prompt"][1:]) % 3 == 0:
            return Reply(status=422, error="bad input")
        return Reply(text="ok")

    responder = respond
    with serve(responder) as server, pytest.raises(LLMError) as raised:
        client(server.base_url, concurrency=1).run(requests(100))
    assert str(raised.value).startswith("11 of 100 requests failed, more than 10%: stopped")
    assert "HTTP 422: bad input" in str(raised.value)
    assert server.requests_count < 40


def test_a_few_failures_of_a_small_run_do_not_stop_it() -> None:
    refuse = Reply(status=400, error="no")
    with serve(lambda p, r: refuse if r["prompt"] < "p2" else Reply()) as server:
        results = client(server.base_url).run(requests(5))
    assert [isinstance(r, LLMError) for r in results] == [True, True, False, False, False]


def test_a_refused_request_is_logged_with_its_reason(tmp_path: Path) -> None:
    log = tmp_path / "replies.jsonl"
    refuse = Reply(status=413, error="request entity too large")
    with serve(lambda p, r: refuse) as server:
        [result] = client(server.base_url, log_path=log).run(requests(1))
    assert isinstance(result, LLMError) and result.reason == "HTTP 413: request entity too large"
    [entry] = [json.loads(line) for line in log.read_text().splitlines()]
    assert entry["status"] == 413 and "request entity too large" in entry["error"]
