"""`lctg generate` against a 127.0.0.1 server: the stored prompts sent as they are, with the
benchmark's system prompt, generation n with seed + n, the generator's file format, and a
re-run that makes no call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lctg_support import benchmark_system_prompt, lctg_dir

from cli_runner import run_cli
from pfgen_fast.lctg.data import CONSTRAINTS, load_prompts
from pfgen_fast.lctg.outputs import load_generations
from pfgen_fast.testing import Reply, serve


def answer(path: str, request: dict[str, Any]) -> Reply:
    prompt = request["messages"][-1]["content"]
    return Reply(text=f"生成{request['seed']}:{len(prompt)}")


@pytest.mark.slow
def test_generate_writes_the_generators_format(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with serve(answer) as server:
        args = [
            "lctg", "generate", "--task", "pros_and_cons", "--data", str(lctg_dir()),
            "--base-url", server.base_url, "--model", "demo-7b", "--out", str(out),
            "--temperature", "0.7", "--seed", "10", "--concurrency", "16",
        ]  # fmt: skip
        result = run_cli(*args)
        assert result.returncode == 0, result.stderr
        calls = server.requests_count
        assert calls == 150 * 4 * 3
        again = run_cli(*args)
        assert again.returncode == 0, again.stderr
        assert server.requests_count == calls
    prompts = load_prompts(lctg_dir(), "pros_and_cons")
    system = benchmark_system_prompt()
    for body in server.bodies():
        assert body["messages"][0] == {"role": "system", "content": system}
        assert body["temperature"] == 0.7 and body["max_tokens"] == 4096
        assert body["seed"] in (10, 11, 12)
    path = out / "generated_result_v1.jsonl"
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert list(rows[0]) == [
        "generated_text_id", "model", "prompt_id", "base_text",
        "format_result", "char_count_result", "keyword_result", "prohibited_word_result",
    ]  # fmt: skip
    for index, (row, prompt) in enumerate(zip(rows, prompts.values(), strict=True)):
        assert (row["generated_text_id"], row["model"]) == (index, "demo-7b")
        assert (row["prompt_id"], row["base_text"]) == (prompt.prompt_id, prompt.base_text)
        for constraint in CONSTRAINTS:
            length = len(prompt.prompts[constraint])
            expected = [f"生成{seed}:{length}" for seed in (10, 11, 12)]
            assert row[f"{constraint}_result"] == expected
    assert len(load_generations(path, prompts, "pros_and_cons")) == 150
    sent = {body["messages"][1]["content"] for body in server.bodies()}
    assert sent == {p.prompts[c] for p in prompts.values() for c in CONSTRAINTS}


@pytest.mark.slow
def test_reasoning_stripped_and_a_reply_cut_inside_it(tmp_path: Path) -> None:
    prompts = load_prompts(lctg_dir(), "pros_and_cons")
    first = next(iter(prompts.values()))

    def think(path: str, request: dict[str, Any]) -> Reply:
        prompt = request["messages"][-1]["content"]
        if prompt == first.prompts["format"] and request["seed"] == 1:
            return Reply(text="<think>まず考える", finish_reason="length")
        return Reply(text=f"<think>考える</think>\n生成{request['seed']}")

    out = tmp_path / "out"
    with serve(think) as server:
        result = run_cli(
            "lctg", "generate", "--task", "pros_and_cons", "--data", str(lctg_dir()),
            "--base-url", server.base_url, "--model", "demo-7b", "--out", str(out),
            "--concurrency", "16", "--strip-reasoning", "--extra-body", '{"top_k": 5}',
        )  # fmt: skip
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors[0] == (
        f"error: prompt {first.prompt_id}, format, generation 2: cut at max_tokens before an "
        "answer (raise --max-tokens)"
    )
    assert errors[1].startswith("error: 1 generations failed; their prompts are left out")
    lines = (out / "generated_result_v1.jsonl").read_text("utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert len(rows) == 149 and first.prompt_id not in {row["prompt_id"] for row in rows}
    assert rows[0]["keyword_result"] == ["生成0", "生成1", "生成2"]
    settings = json.loads((out / "generation-settings.json").read_text())
    assert (settings["strip_reasoning"], settings["extra_body"]) == (True, {"top_k": 5})
    assert (settings["max_tokens"], settings["generations"]) == (4096, 3)


def test_fewer_generations_than_the_benchmark_scores_are_refused(tmp_path: Path) -> None:
    result = run_cli(
        "lctg", "generate", "--task", "summary", "--base-url", "http://127.0.0.1:9/v1",
        "--model", "m", "--out", str(tmp_path / "out"), "--generations", "1",
    )  # fmt: skip
    assert result.returncode == 2
    assert "--generations: '1': expected a whole number of at least 3" in result.stderr
    assert not (tmp_path / "out").exists()
