"""`lctg generate` against a 127.0.0.1 server: the stored prompts sent as they are, with the
benchmark's system prompt, generation n with seed + n, the generator's file format, and a
re-run that makes no call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lctg_support import benchmark_system_prompt, lctg_dir, run_cli

from pfgen_fast.lctg.data import CONSTRAINTS, load_prompts
from pfgen_fast.lctg.generations import load_generations
from pfgen_fast.testing import Reply, serve


def answer(path: str, request: dict[str, Any]) -> Reply:
    prompt = request["messages"][-1]["content"]
    return Reply(text=f"生成{request['seed']}:{len(prompt)}")


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
