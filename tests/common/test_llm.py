"""The shared LLM client against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.llm import (
    ChatRequest,
    CompletionRequest,
    LLMClient,
    LLMError,
    LLMReply,
    TokenLogprob,
    parse_logprobs,
)
from pfgen_fast.common.llm_cache import CacheRow, CacheWriter, ResponseCache
from pfgen_fast.common.llm_options import add_llm_arguments, client_from_args
from pfgen_fast.testing import Reply, failing, serve

CHAT = [{"role": "user", "content": "こんにちは"}]


def echo(path: str, request: dict[str, Any]) -> Reply:
    """Answers with the prompt (the last message of a chat), reversed."""
    text = request["messages"][-1]["content"] if "messages" in request else request["prompt"]
    return Reply(text=text[::-1])


def scripted(*replies: Reply) -> Any:
    """A responder giving these replies in turn, then the echo's."""
    queue = list(replies)
    lock = threading.Lock()

    def respond(path: str, request: dict[str, Any]) -> Reply:
        with lock:
            if queue:
                return queue.pop(0)
        return echo(path, request)

    return respond


def client(url: str, tmp_path: Path, **options: Any) -> LLMClient:
    options.setdefault("cache_path", tmp_path / "cache.sqlite3")
    options.setdefault("timeout", 5.0)
    return LLMClient(url, "test/model", api_key="", **options)


def only(results: list[LLMReply | LLMError]) -> LLMReply:
    [reply] = results
    assert isinstance(reply, LLMReply), reply
    return reply


def test_chat_and_completion_replies_and_parameters(tmp_path):
    requests = [
        ChatRequest(CHAT, {"temperature": 0.0, "seed": 7, "top_p": None, "stop": ["Q:"]}),
        CompletionRequest("abc", {"max_tokens": 3}),
    ]
    with serve(echo) as server, client(server.base_url, tmp_path) as llm:
        chat, completion = llm.run(requests)
    assert isinstance(chat, LLMReply) and isinstance(completion, LLMReply)
    assert (chat.text, chat.status, chat.cached, chat.finish_reason) == (
        "はちにんこ",
        200,
        False,
        "stop",
    )
    assert chat.logprobs is None and chat.usage["completion_tokens"] == 5
    assert chat.raw["choices"][0]["message"]["content"] == "はちにんこ"
    assert completion.text == "cba"
    bodies = {request.path: request.body for request in server.received}
    assert bodies["/v1/chat/completions"] == {
        "model": "test/model",
        "messages": CHAT,
        "temperature": 0.0,
        "seed": 7,
        "stop": ["Q:"],
    }
    assert bodies["/v1/completions"] == {"model": "test/model", "prompt": "abc", "max_tokens": 3}


def test_null_content_is_empty_text(tmp_path):
    with serve(lambda p, r: Reply(text=None)) as server:
        assert only(client(server.base_url, tmp_path).run([ChatRequest(CHAT)])).text == ""


@pytest.mark.parametrize("chat", [True, False])
def test_logprobs_with_top_alternatives(tmp_path, chat):
    tokens = [("は", -0.25, [("は", -0.25), ("が", -1.5)]), ("い", -0.5, [("い", -0.5)])]
    request = ChatRequest(CHAT) if chat else CompletionRequest("Q")
    with serve(lambda p, r: Reply(text="はい", logprobs=tokens)) as server:
        reply = only(client(server.base_url, tmp_path).run([request]))
    assert reply.logprobs == (
        TokenLogprob("は", -0.25, (("は", -0.25), ("が", -1.5))),
        TokenLogprob("い", -0.5, (("い", -0.5),)),
    )


def test_500_is_retried_then_answered(tmp_path):
    with serve(scripted(Reply(status=500), Reply(status=503))) as server:
        llm = client(server.base_url, tmp_path)
        assert only(llm.run([ChatRequest(CHAT)])).text == "はちにんこ"
    assert server.requests_count == 3 and llm.stats.calls == 3 and llm.stats.failed == 0


def test_429_waits_as_retry_after_says(tmp_path):
    with serve(scripted(Reply(status=429, retry_after="1.2"))) as server:
        started = time.monotonic()
        only(client(server.base_url, tmp_path).run([ChatRequest(CHAT)]))
        waited = time.monotonic() - started
    assert server.requests_count == 2 and 1.2 <= waited < 4


def test_slow_reply_times_out_and_is_retried(tmp_path):
    with serve(scripted(Reply(text="late", delay=2.0))) as server:
        started = time.monotonic()
        reply = only(client(server.base_url, tmp_path, timeout=0.3).run([ChatRequest(CHAT)]))
        took = time.monotonic() - started
    assert reply.text == "はちにんこ" and server.requests_count == 2 and took < 1.8


def test_malformed_bodies_are_retried_then_an_error_in_their_slot(tmp_path):
    with serve(scripted(Reply(malformed=True))) as server:
        assert only(client(server.base_url, tmp_path).run([ChatRequest(CHAT)])).text == "はちにんこ"
    with serve(lambda p, r: Reply(malformed=True)) as no_choices:
        llm = client(no_choices.base_url, tmp_path, max_retries=1)
        [result] = llm.run([ChatRequest([{"role": "user", "content": "x"}])])
    assert isinstance(result, LLMError)
    assert "chat/completions: no answer after 2 tries (malformed reply" in str(result)
    assert "test/model" in str(result) and llm.stats.failed == 1


@pytest.mark.parametrize(
    ("settings", "status", "message"),
    [
        ({"api_key": "secret"}, 401, "authentication failed (HTTP 401: Incorrect API key"),
        ({"model": "other"}, 404, "HTTP 404: The model `test/model` does not exist."),
        ({"responder": lambda p, r: Reply(status=403, error="no")}, 403, "HTTP 403: no"),
    ],
)
def test_refusals_are_immediate_clear_errors(tmp_path, settings, status, message):
    with serve(**settings) as server, pytest.raises(LLMError) as raised:
        client(server.base_url, tmp_path).run([ChatRequest(CHAT)] * 3)
    assert raised.value.status == status and message in str(raised.value)
    assert server.base_url + "/chat/completions" in str(raised.value)
    assert "test/model" in str(raised.value)
    assert server.requests_count <= 3  # each request once at most, no retries


@pytest.mark.parametrize("url", ["notaurl", "ftp://example.org/v1", "http://", "http:///v1"])
def test_a_base_url_must_be_http_with_a_host(url):
    with pytest.raises(PfgenError, match="--base-url .*: expected an http:// or https:// URL"):
        LLMClient(url, "m", cache_path=None)


def test_api_key_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "secret")
    with serve(api_key="secret", responder=echo) as server:
        llm = LLMClient(server.base_url, "test/model", cache_path=None)
        assert only(llm.run([ChatRequest(CHAT)])).text == "はちにんこ"


def test_400_is_the_items_error_unless_accepted_and_then_cached(tmp_path):
    with serve(lambda p, r: Reply(status=400, error="content filter")) as server:
        [refused] = client(server.base_url, tmp_path).run([ChatRequest(CHAT)])
        assert isinstance(refused, LLMError) and refused.status == 400
        assert "HTTP 400: content filter" in str(refused) and "test/model" in str(refused)
        assert refused.reason == "HTTP 400: content filter"
        first = only(client(server.base_url, tmp_path, accept_400=True).run([ChatRequest(CHAT)]))
        again = only(client(server.base_url, tmp_path, accept_400=True).run([ChatRequest(CHAT)]))
    assert (first.status, first.text, first.cached) == (400, "", False)
    assert first.raw == {"error": {"message": "content filter"}}
    assert (again.status, again.cached, again.raw) == (400, True, first.raw)
    assert server.requests_count == 2  # a refusal is neither retried nor cached


def test_concurrency_limit_is_respected(tmp_path):
    requests = [CompletionRequest(f"prompt {i}") for i in range(24)]
    with serve(delay=0.05, responder=echo) as server:
        seen: list[int] = []
        results = client(server.base_url, tmp_path, concurrency=3).run(
            requests, on_result=lambda index, result: seen.append(index)
        )
    assert [r.text for r in results if isinstance(r, LLMReply)] == [
        f"prompt {i}"[::-1] for i in range(24)
    ]
    assert server.most_at_once == 3
    assert sorted(seen) == list(range(24))


def test_results_are_handed_over_as_they_come(tmp_path):
    seen: list[tuple[int, str]] = []
    with serve(
        lambda p, r: Reply(text=r["prompt"], delay=0.3 * (r["prompt"] == "0"))
    ) as slow_first:
        results = client(slow_first.base_url, tmp_path).run(
            [CompletionRequest(str(i)) for i in range(3)],
            on_result=lambda index, result: seen.append((index, result.text)),
        )
    assert [r.text for r in results] == ["0", "1", "2"]
    assert sorted(seen[:2]) == [(1, "1"), (2, "2")] and seen[2] == (0, "0")


def test_an_exception_from_a_callback_stops_the_run(tmp_path):

    def stop(index: int, result: Any) -> None:
        raise PfgenError("enough")

    with (
        serve(lambda p, r: Reply(text="x", delay=0.2)) as server,
        pytest.raises(PfgenError, match="enough"),
    ):
        client(server.base_url, tmp_path, concurrency=2).run(
            [CompletionRequest(str(i)) for i in range(20)], on_result=stop
        )
    assert server.requests_count <= 4


def test_second_run_makes_no_call_even_in_a_new_process(tmp_path):
    requests = [ChatRequest(CHAT, {"seed": 1}), CompletionRequest("abc")]
    with serve(echo) as server:
        first = client(server.base_url, tmp_path).run(requests)
        second_client = client(server.base_url, tmp_path)
        second = second_client.run(requests)
        script = (
            "import sys; from pathlib import Path; from pfgen_fast.common.llm import *\n"
            f"c = LLMClient({server.base_url!r}, 'test/model', cache_path=Path(sys.argv[1]))\n"
            "r = c.run([ChatRequest([{'role': 'user', 'content': 'こんにちは'}], {'seed': 1})])\n"
            "print(r[0].text, r[0].cached, c.stats.calls)"
        )
        child = subprocess.run(
            [sys.executable, "-c", script, str(tmp_path / "cache.sqlite3")],
            capture_output=True,
            text=True,
            timeout=60,
        )
        # Another parameter, another server address: another request.
        client(server.base_url, tmp_path).run([ChatRequest(CHAT, {"seed": 2})])
    with serve(echo) as other:
        moved = client(other.base_url, tmp_path).run(requests[:1])
    assert server.requests_count == 3
    assert [r.text for r in second] == [r.text for r in first]
    assert all(isinstance(r, LLMReply) and r.cached for r in second)
    assert second_client.stats.calls == 0 and second_client.stats.cached == 2
    assert child.returncode == 0 and child.stdout.split() == ["はちにんこ", "True", "0"]
    assert not only(moved).cached


INTERRUPTED_RUN = """
import sys
from pathlib import Path
from pfgen_fast.common.llm import CompletionRequest, LLMClient
url, cache, log = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
client = LLMClient(url, "test/model", concurrency=2, cache_path=cache, log_path=log)
try:
    client.run([CompletionRequest(str(i)) for i in range(40)])
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_an_interrupted_run_keeps_its_replies(tmp_path, sig):
    cache, log = tmp_path / "cache.sqlite3", tmp_path / "replies.jsonl"
    with serve(lambda p, r: Reply(text=r["prompt"], delay=0.1)) as server:
        child = subprocess.Popen(
            [sys.executable, "-c", INTERRUPTED_RUN, server.base_url, str(cache), str(log)],
            stdout=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (
            not log.exists() or len(log.read_bytes().splitlines()) < 4
        ):
            time.sleep(0.02)
        child.send_signal(sig)
        out, _ = child.communicate(timeout=60)
        answered = len(log.read_bytes().splitlines())
        asked = server.requests_count
        llm = client(server.base_url, tmp_path, cache_path=cache)
        results = llm.run([CompletionRequest(str(i)) for i in range(40)])
    assert 4 <= answered < 40
    assert [r.text for r in results if isinstance(r, LLMReply)] == [str(i) for i in range(40)]
    # Every reply logged before the signal was stored: none is asked again.
    assert llm.stats.cached >= answered and llm.stats.calls == 40 - llm.stats.cached
    assert server.requests_count == asked + llm.stats.calls
    if sig == signal.SIGINT:
        assert child.returncode == 130 and out == "interrupted\n"


def test_no_cache_option_and_default_cache_place(tmp_path, monkeypatch):
    monkeypatch.setenv("PFGEN_FAST_CACHE", str(tmp_path / "home"))
    parser = argparse.ArgumentParser()
    add_llm_arguments(
        parser, request_fields=(), model_flag="--remover-model", model_help="the remover"
    )
    with serve(echo) as server:
        base = ["--base-url", server.base_url, "--remover-model", "test/model"]
        for _ in range(2):
            args = parser.parse_args([*base, "--no-cache", "--timeout", "5"])
            with client_from_args(args, log_path=None) as llm:
                assert not only(llm.run([ChatRequest(CHAT)])).cached
        assert not (tmp_path / "home").exists() and server.requests_count == 2
        args = parser.parse_args(base)
        assert (args.remover_model, args.concurrency, args.timeout, args.max_retries) == (
            "test/model",
            8,
            120.0,
            5,
        )
        for cached in (False, True):
            with client_from_args(args, log_path=None) as llm:
                assert only(llm.run([ChatRequest(CHAT)])).cached is cached
    assert (tmp_path / "home" / "llm" / "responses.sqlite3").is_file()


@pytest.mark.parametrize(
    "bad", [["--concurrency", "0"], ["--timeout", "-1"], ["--max-retries", "x"]]
)
def test_bad_options_are_refused(bad, capsys):
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser, request_fields=())
    with pytest.raises(SystemExit):
        parser.parse_args(["--base-url", "http://x/v1", "--judge-model", "m", *bad])
    assert bad[0] in capsys.readouterr().err


def test_raw_replies_and_failures_are_logged(tmp_path):
    log = tmp_path / "out" / "responses.jsonl"
    fail = Reply(status=500, error="boom")
    requests = [CompletionRequest("ok"), CompletionRequest("bad")]
    with serve(lambda p, r: fail if r["prompt"] == "bad" else echo(p, r)) as server:
        first = client(server.base_url, tmp_path, max_retries=1, log_path=log).run(requests)
        client(server.base_url, tmp_path, max_retries=0, log_path=log).run(requests[:1])
    assert isinstance(first[0], LLMReply) and isinstance(first[1], LLMError)
    assert first[1].status == 500 and "HTTP 500: boom" in str(first[1])
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    by_prompt = sorted(lines, key=lambda line: (line["request"]["prompt"], line.get("cached", 0)))
    assert [(line["request"]["prompt"], line.get("cached")) for line in by_prompt] == [
        ("bad", None),
        ("ok", False),
        ("ok", True),
    ]
    bad, ok, ok_cached = by_prompt
    assert bad["status"] == 500 and "no answer after 2 tries" in bad["error"]
    assert "response" not in bad  # a failure is never recorded as a reply
    assert ok["url"] == server.base_url + "/completions" and ok["status"] == 200
    assert ok["response"]["choices"][0]["text"] == "ko" and ok_cached["response"] == ok["response"]


def test_stats_count_calls_cache_hits_failures_and_tokens(tmp_path):
    fail = Reply(status=502)
    with serve(lambda p, r: fail if r["prompt"] == "bad" else echo(p, r)) as server:
        client(server.base_url, tmp_path).run([CompletionRequest("a")])
        llm = client(server.base_url, tmp_path, max_retries=1)
        llm.run([CompletionRequest(p) for p in ("a", "b", "c", "bad")])
    stats = llm.stats
    assert (stats.calls, stats.cached, stats.failed) == (4, 1, 1)
    assert (stats.prompt_tokens, stats.completion_tokens) == (20, 10)


def test_a_server_that_is_down_stops_the_run(tmp_path):
    requests = [CompletionRequest(str(i)) for i in range(100)]
    started = time.monotonic()
    with pytest.raises(LLMError, match="the server looks down"):
        client("http://127.0.0.1:9/v1", tmp_path, concurrency=2, max_retries=1).run(requests)
    assert time.monotonic() - started < 10


def test_missing_logprob_is_nan_and_malformed_logprobs_are_refused():
    value = {"tokens": ["a", "b"], "token_logprobs": [None, -1.0], "top_logprobs": None}
    first, second = parse_logprobs(value) or ()
    assert math.isnan(first.logprob) and second == TokenLogprob("b", -1.0, ())
    assert parse_logprobs({"content": None}) is None
    for bad in ({"content": [{"token": "a"}]}, {**value, "token_logprobs": [-1.0]}):
        with pytest.raises(ValueError, match="logprobs"):
            parse_logprobs(bad)


def test_import_loads_neither_numpy_nor_the_core():
    code = (
        "import sys, pfgen_fast.common.llm; "
        "assert 'numpy' not in sys.modules and 'pfgen_fast._core' not in sys.modules"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ
    )
    assert result.returncode == 0, result.stderr


def test_several_servers_share_requests_and_retry_a_failing_ones_on_the_others(tmp_path):
    requests = [CompletionRequest(f"p{i}") for i in range(30)]
    with serve(echo, delay=0.02) as slow, serve(echo) as quick, serve(failing("http-500")) as bad:
        one, two = slow.base_url, quick.base_url
        results = client([one, two], tmp_path, concurrency=2).run(requests)
        assert [r.text for r in results] == [f"p{i}"[::-1] for i in range(30)]
        assert slow.received and quick.received
        assert slow.requests_count + quick.requests_count == 30
        again = client([two, one], tmp_path, concurrency=2)
        again.run(requests)  # the same servers in another order: the same cache keys
        assert again.stats.cached == 30
        failover = client(
            [bad.base_url, two], tmp_path, concurrency=2, max_retries=0, cache_path=None
        )
        assert all(isinstance(r, LLMReply) for r in failover.run(requests))
    assert failover.stats.failed == 0


def test_base_url_may_repeat():
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser, request_fields=())
    args = parser.parse_args(
        ["--base-url", "http://a:1/v1", "--base-url", "http://b:2/v1", "--judge-model", "j"]
    )
    assert (args.base_url, args.base_urls) == ("http://a:1/v1", ["http://a:1/v1", "http://b:2/v1"])
    assert client_from_args(args, log_path=None).base_urls == ["http://a:1/v1", "http://b:2/v1"]


def test_the_cache_writer_commits_each_row_before_its_store_returns(tmp_path):
    path = tmp_path / "cache.sqlite3"
    reader = ResponseCache(path)
    writer = CacheWriter(path)
    seen: list[bool] = []

    async def store(number: int) -> None:
        await writer.store(CacheRow(f"k{number}", "u", "{}", 200, {"n": number}))
        seen.append(reader.get(f"k{number}") == (200, {"n": number}))

    async def store_all() -> None:
        await asyncio.gather(*(store(number) for number in range(50)))

    try:
        asyncio.run(store_all())
    finally:
        writer.close()
    assert seen == [True] * 50
    reader.close()


def test_identical_requests_in_flight_are_sent_once(tmp_path):
    samples = [ChatRequest(CHAT, {"seed": n}) for n in range(3)]
    requests = [ChatRequest(CHAT)] * 5 + samples + [ChatRequest(CHAT)]
    log = tmp_path / "log.jsonl"
    with serve(delay=0.2, responder=echo) as server:
        llm = client(server.base_url, tmp_path, concurrency=4, log_path=log)
        results = llm.run(requests)
    assert server.requests_count == 4  # the repeated request once, each sample once
    assert all(isinstance(r, LLMReply) and r.text == "はちにんこ" for r in results)
    assert sum(r.cached for r in results) == 5  # the repeats, as from the cache
    assert (llm.stats.calls, llm.stats.cached) == (4, 5)
    logged = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    assert len(logged) == 9 and sum(not entry["cached"] for entry in logged) == 4


def test_without_the_cache_identical_requests_are_each_sent(tmp_path):
    with serve(delay=0.1, responder=echo) as server:
        results = client(server.base_url, tmp_path, cache_path=None).run([ChatRequest(CHAT)] * 3)
    assert server.requests_count == 3 and not any(r.cached for r in results)


def test_identical_requests_share_a_refusal(tmp_path):
    refusing = lambda p, r: Reply(status=400, error="context length exceeded", delay=0.2)  # noqa: E731
    with serve(refusing) as server:
        llm = client(server.base_url, tmp_path)
        results = llm.run([ChatRequest(CHAT)] * 2)
    assert server.requests_count == 1
    assert all(isinstance(r, LLMError) and r.status == 400 for r in results)
    assert llm.stats.failed == 2


def test_replies_cut_at_max_tokens_are_counted_cached_or_not(tmp_path):
    with serve(lambda p, r: Reply(text="長い", finish_reason="length")) as server:
        first = client(server.base_url, tmp_path)
        first.run([ChatRequest(CHAT)] * 2 + [CompletionRequest("x")])
        again = client(server.base_url, tmp_path)
        again.run([ChatRequest(CHAT)])
    assert (first.stats.cut, again.stats.cut, again.stats.cached) == (3, 1, 1)
