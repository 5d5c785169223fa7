"""`pfgen_fast.testing`, the stand-in server, spoken to over real HTTP: what each kind of reply
looks like on the wire, what it records, and that importing it costs only the standard library."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
import threading
import time
from typing import Any

import httpx
import pytest
from PIL import Image

from pfgen_fast.testing import (
    FAILURE_MODES,
    REFUSAL,
    Flaky,
    Reply,
    answer_for,
    failing,
    fast_server_process,
    serve,
)

CHAT = {"model": "m", "messages": [{"role": "user", "content": "こんにちは"}]}
COMPLETION = {"model": "m", "prompt": "むかしむかし"}


def post(url: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(url, json=body, headers=headers, timeout=5)


def test_default_answers_are_deterministic_per_prompt_on_both_endpoints() -> None:
    with serve() as server:
        chat = post(f"{server.base_url}/chat/completions", CHAT).json()
        completion = post(f"{server.base_url}/completions", COMPLETION).json()
        models = httpx.get(f"{server.base_url}/models").json()
    assert chat["choices"][0]["message"] == {
        "role": "assistant",
        "content": answer_for("こんにちは"),
    }
    assert chat["object"] == "chat.completion" and chat["usage"]["total_tokens"] == 15
    assert completion["choices"][0]["text"] == answer_for("むかしむかし")
    assert [model["id"] for model in models["data"]] == ["stand-in"]
    assert [request.path for request in server.received] == [
        "/v1/chat/completions",
        "/v1/completions",
        "/v1/models",
    ]
    assert server.requests_count == 3 and server.received[0].text == "こんにちは"
    assert server.bodies()[1] == COMPLETION and server.received[1].params == {}


def test_log_probabilities_in_both_forms_with_fewer_alternatives_than_asked() -> None:
    top = [(f"t{i}", -float(i)) for i in range(12)]  # 12 where the client asked for 20
    tokens = [("は", -0.1, top), ("い", -0.2, top[:3])]
    with serve(lambda path, body: Reply(text="はい", logprobs=tokens)) as server:
        chat = post(f"{server.base_url}/chat/completions", {**CHAT, "top_logprobs": 20}).json()
        completion = post(f"{server.base_url}/completions", {**COMPLETION, "logprobs": 20}).json()
    content = chat["choices"][0]["logprobs"]["content"]
    assert [entry["token"] for entry in content] == ["は", "い"]
    assert len(content[0]["top_logprobs"]) == 12
    assert content[1]["top_logprobs"][2] == {"token": "t2", "logprob": -2.0}
    logprobs = completion["choices"][0]["logprobs"]
    assert logprobs["tokens"] == ["は", "い"] and logprobs["token_logprobs"] == [-0.1, -0.2]
    assert len(logprobs["top_logprobs"][0]) == 12


def test_empty_log_probabilities() -> None:
    with serve(lambda path, body: Reply(text="はい", logprobs=[])) as server:
        chat = post(f"{server.base_url}/chat/completions", CHAT).json()
    assert chat["choices"][0]["logprobs"] == {"content": []}


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (
            Reply(text="答え", reasoning="考える", reasoning_in="think"),
            {"role": "assistant", "content": "<think>考える</think>答え"},
        ),
        (
            Reply(text="答え", reasoning="考える"),
            {"role": "assistant", "content": "答え", "reasoning_content": "考える"},
        ),
        (
            Reply(text="答え", reasoning="考える", reasoning_in="reasoning"),
            {"role": "assistant", "content": "答え", "reasoning": "考える"},
        ),
        (
            Reply(text=None, reasoning="考え", finish_reason="length"),
            {"role": "assistant", "content": None, "reasoning_content": "考え"},
        ),
    ],
)
def test_reasoning_goes_where_the_reply_says(reply: Reply, message: dict[str, Any]) -> None:
    with serve(lambda path, body: reply) as server:
        chat = post(f"{server.base_url}/chat/completions", CHAT).json()
    assert chat["choices"][0]["message"] == message


def test_max_tokens_cut_the_reasoning_then_the_text_when_honoured() -> None:
    reasoning = Reply(text="答えです", reasoning="よく考える", reasoning_in="think")
    with serve(lambda path, body: reasoning, honour_max_tokens=True) as server:
        url = f"{server.base_url}/chat/completions"
        inside = post(url, {**CHAT, "max_tokens": 3}).json()["choices"][0]
        after = post(url, {**CHAT, "max_tokens": 7}).json()["choices"][0]
        whole = post(url, {**CHAT, "max_tokens": 100}).json()["choices"][0]
    assert inside["message"]["content"] == "<think>よく考"
    assert inside["finish_reason"] == "length"
    assert after["message"]["content"] == "<think>よく考える</think>答え"
    assert after["finish_reason"] == "length"
    assert whole["message"]["content"] == "<think>よく考える</think>答えです"
    assert whole["finish_reason"] == "stop"
    with serve(lambda path, body: reasoning) as server:
        ignored = post(f"{server.base_url}/chat/completions", {**CHAT, "max_tokens": 3}).json()
    assert ignored["choices"][0]["message"]["content"] == "<think>よく考える</think>答えです"


def test_errors_with_their_bodies_and_retry_after() -> None:
    context = "maximum context length is 2048 tokens"
    vllm_error = json.dumps({"object": "error", "message": context, "code": 400}).encode()
    replies = {
        "a": Reply(status=400, error=context),
        "b": Reply(status=500, error="internal", retry_after="2"),
        "c": Reply(status=400, raw=vllm_error),
    }
    with serve(lambda path, body: replies[body["messages"][-1]["content"]]) as server:
        url = f"{server.base_url}/chat/completions"
        first, second, third = (
            post(url, {**CHAT, "messages": [{"role": "user", "content": key}]}) for key in "abc"
        )
    assert first.status_code == 400 and first.json() == {"error": {"message": context}}
    assert second.status_code == 500 and second.headers["Retry-After"] == "2"
    assert third.status_code == 400 and third.json()["message"] == context


def test_broken_replies() -> None:
    replies = {
        "malformed": Reply(malformed=True),
        "cut": Reply(text="長い答え" * 50, cut=True),
    }
    with serve(lambda path, body: replies[body["messages"][-1]["content"]]) as server:
        url = f"{server.base_url}/chat/completions"

        def ask(key: str) -> httpx.Response:
            return post(url, {**CHAT, "messages": [{"role": "user", "content": key}]})

        with pytest.raises(json.JSONDecodeError):
            ask("malformed").json()
        with pytest.raises(httpx.RemoteProtocolError):
            ask("cut")


def test_a_body_that_is_not_a_json_object_is_refused_and_not_recorded() -> None:
    with serve() as server:
        url = f"{server.base_url}/chat/completions"
        refused = [httpx.post(url, content=body) for body in (b"{", b"[1]")]
    assert [response.status_code for response in refused] == [400, 400]
    assert server.requests_count == 0


@pytest.mark.parametrize("mode", FAILURE_MODES)
def test_every_failure_mode_gives_no_usable_answer(mode: str) -> None:
    with serve(failing(mode)) as server:
        try:
            response = httpx.post(f"{server.base_url}/chat/completions", json=CHAT, timeout=0.5)
        except httpx.HTTPError:
            return  # dropped, or no reply within the client's timeout
    assert mode not in ("dropped", "timeout")
    usable = response.status_code == 200 and "choices" in response.text
    assert not usable or mode == "bad-json"
    if mode == "bad-json":
        with pytest.raises(json.JSONDecodeError):
            response.json()


def test_key_and_model_checks_and_flaky_periods() -> None:
    with serve(Flaky(fail_every=2, empty_every=3), api_key="k", model="m") as server:
        url = f"{server.base_url}/chat/completions"
        assert post(url, CHAT).status_code == 401
        assert post(url, {**CHAT, "model": "x"}, Authorization="Bearer k").status_code == 404
        statuses = [post(url, CHAT, Authorization="Bearer k") for _ in range(4)]
    assert [response.status_code for response in statuses] == [200, 500, 200, 500]
    assert statuses[2].json()["choices"][0]["message"]["content"] == "   "
    assert server.requests_count == 6


def png_url(size: tuple[int, int]) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", size).save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def test_images_are_decoded_in_order_or_refused() -> None:
    content = [
        {"type": "text", "text": "比べて"},
        {"type": "image_url", "image_url": {"url": png_url((4, 3))}},
        {"type": "image_url", "image_url": {"url": png_url((5, 2)), "detail": "auto"}},
    ]
    body = {"model": "m", "messages": [{"role": "user", "content": content}]}
    with serve() as server:
        answered = post(f"{server.base_url}/chat/completions", body)
    assert answered.json()["choices"][0]["message"]["content"] == answer_for("比べて")
    (request,) = server.received
    assert request.images == [("image/png", 4, 3), ("image/png", 5, 2)]
    assert request.detail == [None, "auto"] and request.model == "m"
    with serve(refuse_images=True) as server:
        refused = post(f"{server.base_url}/chat/completions", body)
        text_only = post(f"{server.base_url}/chat/completions", CHAT)
    assert refused.status_code == 400 and REFUSAL in refused.text
    assert text_only.status_code == 200 and server.requests_count == 2


def test_most_served_at_once_and_a_failing_responder() -> None:
    all_in = threading.Barrier(3, timeout=30)

    def together(path: str, body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["content"] == "boom":
            raise KeyError("boom")
        all_in.wait()  # the three requests are being served at once
        return Reply(text="x")

    with serve(together) as server:
        url = f"{server.base_url}/chat/completions"
        threads = [threading.Thread(target=post, args=(url, CHAT)) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        failed = post(url, {**CHAT, "messages": [{"role": "user", "content": "boom"}]})
    assert server.most_at_once == 3
    assert failed.status_code == 500 and "the responder failed" in failed.text


def test_a_stopped_server_answers_nothing_more() -> None:
    with httpx.Client() as client:
        with serve() as server:
            url = f"{server.base_url}/chat/completions"
            assert client.post(url, json=CHAT).status_code == 200  # kept alive
        with pytest.raises(httpx.HTTPError):
            client.post(url, json=CHAT)


def test_the_fast_mode_answers_at_once_in_its_own_process() -> None:
    with fast_server_process() as url, httpx.Client() as client:
        started = time.monotonic()
        replies = [client.post(f"{url}/chat/completions", json=CHAT).json() for _ in range(20)]
        assert time.monotonic() - started < 5
    assert {reply["choices"][0]["message"]["content"] for reply in replies} == {"写真です。"}


def test_importing_it_takes_only_the_standard_library() -> None:
    code = (
        "import sys; before = set(sys.modules); import pfgen_fast.testing; "
        "added = {m.split('.')[0] for m in set(sys.modules) - before}; "
        "print(*sorted(added - set(sys.stdlib_module_names)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["pfgen_fast"]
