"""`generate` with reasoning models and server options: reasoning returned apart is never the
answer, `<think>` blocks kept as the official runner keeps them unless --strip-reasoning,
replies cut at max_tokens inside their reasoning asked again and counted with the hint, null
content asked again, and --extra-body sent, recorded in config.json, or refused before any
request."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_generate import UNREACHABLE, run_dir_of, run_generate
from test_prompt import read_examples, reference_task

from pfgen_fast.testing import Reply, answer_for, serve

CUT_HINT = "cut at max_tokens before an answer (raise --max-tokens)"


@pytest.fixture(autouse=True)
def own_response_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PFGEN_FAST_CACHE", str(tmp_path / "cache"))


def prompt_of(request: dict[str, Any]) -> str:
    return request["messages"][-1]["content"] if "messages" in request else request["prompt"]


class FirstAskThen:
    """`first(prompt)` for the first ask of each prompt, the plain answer afterwards."""

    def __init__(self, first: Reply) -> None:
        self.first = first
        self.asked: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, path: str, request: dict[str, Any]) -> Reply:
        prompt = prompt_of(request)
        with self.lock:
            self.asked[prompt] += 1
            again = self.asked[prompt] > 1
        return Reply(text=f"A: {answer_for(prompt)}") if again else self.first


def records(run: Path, trial: int = 1) -> list[dict[str, Any]]:
    path = run / f"trial_{trial:03d}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def config_of(run: Path) -> dict[str, Any]:
    return json.loads((run / "config.json").read_bytes())


def test_reasoning_returned_apart_is_never_the_answer(data_dir: Path, tmp_path: Path) -> None:
    def reasoner(path: str, request: dict[str, Any]) -> Reply:
        prompt = prompt_of(request)
        return Reply(text=f"A: {answer_for(prompt)}", reasoning="A: 考えた末の答え")

    with serve(reasoner) as server:
        result = run_generate(server.base_url, tmp_path, data_dir, mode="qa", trials=1)
    assert result.returncode == 0, result.stderr
    answers = [record["answer"] for record in records(run_dir_of(tmp_path))]
    assert all(answer.startswith("回答") for answer in answers)


def test_think_blocks_are_kept_without_strip_reasoning(data_dir: Path, tmp_path: Path) -> None:
    def thinker(path: str, request: dict[str, Any]) -> Reply:
        return Reply(text=f"<think>考える</think>{answer_for(prompt_of(request))}")

    with serve(thinker) as server:
        kept = run_generate(
            server.base_url, tmp_path / "kept", data_dir, mode="completion", trials=1
        )
        stripped = run_generate(
            server.base_url,
            tmp_path / "stripped",
            data_dir,
            "--strip-reasoning",
            mode="completion",
            trials=1,
        )
    assert kept.returncode == 0 and stripped.returncode == 0, kept.stderr + stripped.stderr
    kept_run, stripped_run = run_dir_of(tmp_path / "kept"), run_dir_of(tmp_path / "stripped")
    assert kept_run.name != stripped_run.name  # runs of their own
    assert "strip_reasoning" not in config_of(kept_run)
    assert config_of(stripped_run)["strip_reasoning"] is True
    for kept_record, stripped_record in zip(records(kept_run), records(stripped_run), strict=True):
        assert kept_record["answer"] == "<think>考える</think>" + stripped_record["answer"]


@pytest.mark.parametrize(
    "cut",
    [
        Reply(text=None, reasoning="考え" * 10, finish_reason="length"),
        Reply(text="<think>考え考え", finish_reason="length"),
    ],
    ids=["reasoning_content", "think-in-content"],
)
def test_a_reply_cut_inside_its_reasoning_is_asked_again_and_counted(
    data_dir: Path, tmp_path: Path, cut: Reply
) -> None:
    responder = FirstAskThen(cut)
    with serve(responder) as server:
        result = run_generate(
            server.base_url, tmp_path, data_dir, "--strip-reasoning", mode="qa", trials=1
        )
    assert result.returncode == 0, result.stderr
    assert "warning: 50 replies were cut at max_tokens (raise --max-tokens)" in result.stderr
    assert all(record["answer"].startswith("回答") for record in records(run_dir_of(tmp_path)))


@pytest.mark.slow
def test_replies_always_cut_give_the_trial_up_with_the_hint(data_dir: Path, tmp_path: Path) -> None:
    cut = Reply(text=None, reasoning="考え" * 10, finish_reason="length")
    with serve(lambda path, request: cut) as server:
        result = run_generate(server.base_url, tmp_path, data_dir, mode="chat", trials=2)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert server.requests_count == 2 * 50 * 10  # every question asked ten times
    # Every cut reply counted, those that came after their trial was given up too.
    assert "warning: 1000 replies were cut at max_tokens (raise --max-tokens)" in result.stderr
    assert f"after 10 asks (last: {CUT_HINT})" in result.stderr
    assert "error: 2 trials given up; 0 of 2 trials finished" in result.stderr
    assert not list(run_dir_of(tmp_path).glob("trial_*"))


def test_null_content_is_asked_again(data_dir: Path, tmp_path: Path) -> None:
    responder = FirstAskThen(Reply(text=None))
    with serve(responder) as server:
        result = run_generate(server.base_url, tmp_path, data_dir, mode="chat", trials=1)
    assert result.returncode == 0, result.stderr
    assert "cut at max_tokens" not in result.stderr
    assert all(record["answer"].startswith("回答") for record in records(run_dir_of(tmp_path)))
    assert sum(responder.asked.values()) == 100


def test_one_trial_given_up_leaves_the_others_written(data_dir: Path, tmp_path: Path) -> None:
    """A question that never gets an answer in trial 2 only: trials 1 and 3 are written."""
    asked_in_trial_2: set[str] = set()

    def responder(path: str, request: dict[str, Any]) -> Reply:
        prompt = prompt_of(request)
        if prompt.endswith("Q: つるかめ算について教えて。") and prompt in asked_in_trial_2:
            return Reply(text="A:")
        return Reply(text=f"A: {answer_for(prompt)}")

    task = reference_task(read_examples(data_dir), "つるかめ算について教えて。", "qa", 2)
    asked_in_trial_2.add(task["prompt"])
    with serve(responder) as server:
        result = run_generate(server.base_url, tmp_path, data_dir, mode="qa", trials=3)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (
        "warning: trial 2: no answer to 'つるかめ算について教えて。' after 10 asks" in result.stderr
    )
    assert "error: 1 trial given up; 2 of 3 trials finished" in result.stderr
    run = run_dir_of(tmp_path)
    assert sorted(p.name for p in run.glob("trial_*")) == ["trial_001.jsonl", "trial_003.jsonl"]
    assert not (run / "trials.jsonl.xz").exists()


def test_extra_body_is_sent_and_recorded(data_dir: Path, tmp_path: Path) -> None:
    extra_body = {"top_k": 20, "chat_template_kwargs": {"enable_thinking": False}}
    with serve() as server:
        result = run_generate(
            server.base_url,
            tmp_path,
            data_dir,
            "--extra-body",
            json.dumps(extra_body),
            mode="qa",
            trials=1,
        )
    assert result.returncode == 0, result.stderr
    assert all(
        body["top_k"] == 20 and body["chat_template_kwargs"] == {"enable_thinking": False}
        for body in server.bodies()
    )
    run = run_dir_of(tmp_path)
    text = (run / "config.json").read_text(encoding="utf-8")
    assert text == (
        '{"chat_template_kwargs": {"enable_thinking": false}, "enable_thinking": true, '
        '"engine": "openai-api", "max_tokens": 300, "mode": "qa", "model": "test/model", '
        '"num_examples": 20, "stop": ["Q:"], "temperature": 0.7, "top_k": 20, "top_p": 0.98}\n'
    )


@pytest.mark.parametrize(
    ("extra_body", "message"),
    [
        ("{top_k: 20}", "not JSON"),
        ("[1]", "expected a JSON object, got"),
        ('{"temperature": 1.0}', "'temperature': set by this command itself"),
        ('{"stop": ["x"]}', "'stop': set by this command itself"),
        ('{"enable_thinking": false}', "'enable_thinking': set by this command itself"),
        ('{"messages": []}', "'messages': set by this command itself"),
    ],
)
def test_bad_extra_body_is_refused_before_any_request(
    data_dir: Path, tmp_path: Path, extra_body: str, message: str
) -> None:
    with serve() as server:
        result = run_generate(
            server.base_url, tmp_path / "out", data_dir, "--extra-body", extra_body
        )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") and len(result.stderr.splitlines()) == 1
    assert message in result.stderr
    assert not server.received and not (tmp_path / "out").exists()


def test_options_are_checked_before_anything_is_written(data_dir: Path, tmp_path: Path) -> None:
    result = run_generate(UNREACHABLE, tmp_path / "out", data_dir, "--extra-eos-tokens")
    assert result.returncode == 2 and "--extra-eos-tokens" in result.stderr
    assert not (tmp_path / "out").exists()
