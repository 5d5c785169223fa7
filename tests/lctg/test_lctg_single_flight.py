"""Identical requests are sent once (single flight): `lctg eval` of a model whose three
generations are identical (as temperature-0 models make them) sends each distinct remover and
judge request once, and every generation gets its reply; `lctg generate`'s samples (seed +
n) stay separate requests even when the server answers them alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lctg_support import StandIn, benchmark_prompt_module, benchmark_system_prompt

from cli_runner import run_cli
from pfgen_fast.lctg.data import CONSTRAINTS, load_prompts
from pfgen_fast.testing import Reply, serve
from published import lctg_dir

TASK = "ad_text"
PROMPTS = 5


def identical_generations(stand_in: StandIn) -> list[dict[str, Any]]:
    """Per prompt and constraint, one text three times; the remover keeps it, the judge says
    適切."""
    rows = []
    for index, row in enumerate(list(load_prompts(lctg_dir(), TASK).values())[:PROMPTS]):
        record: dict[str, Any] = {"generated_text_id": index, "model": "demo/model-7b"}
        record.update(prompt_id=row.prompt_id, base_text=row.base_text)
        for constraint in CONSTRAINTS:
            text = f"{row.keyword}で始める{constraint}の毎日"
            stand_in.add(text, text, row.base_text, "適切", "True")
            record[f"{constraint}_result"] = [text] * 3
        rows.append(record)
    return rows


def test_eval_sends_each_distinct_request_once(tmp_path: Path) -> None:
    stand_in = StandIn(TASK, benchmark_prompt_module(), benchmark_system_prompt())
    rows = identical_generations(stand_in)
    generations = tmp_path / "generated_result_v1.jsonl"
    generations.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    with serve(stand_in.responder()) as server:
        result = run_cli(
            "lctg", "eval", "--task", TASK, "--data", lctg_dir(), "--base-url", server.base_url,
            "--judge-model", "judge-1", "--concurrency", "16", "--quiet", generations,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    bodies = [json.dumps(body, sort_keys=True) for body in server.bodies()]
    # One remover and one judge request per distinct text: a third of the generations.
    assert len(bodies) == len(set(bodies)) == 2 * PROMPTS * len(CONSTRAINTS)
    lines = (tmp_path / f"lctg-{TASK}-analysis.jsonl").read_text("utf-8").splitlines()
    items = [json.loads(line) for line in lines]
    assert len(items) == 3 * PROMPTS * len(CONSTRAINTS)
    assert all(item["quality"] is True and item["cleaned"] == item["raw"] for item in items)
    log = (tmp_path / f"lctg-{TASK}-replies.jsonl").read_text("utf-8").splitlines()
    logged = [json.loads(line) for line in log]
    assert len(logged) == 2 * len(items)  # every generation's two replies
    assert sum(not entry["cached"] for entry in logged) == len(bodies)
    assert f"{len(bodies)} calls, {len(logged) - len(bodies)} replies from the cache" in (
        result.stderr
    )


def test_generate_keeps_its_samples_apart(tmp_path: Path) -> None:
    with serve(lambda path, request: Reply(text="同じ答え")) as server:
        result = run_cli(
            "lctg", "generate", "--task", TASK, "--data", lctg_dir(), "--base-url",
            server.base_url, "--model", "demo-7b", "--out", tmp_path, "--quiet",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    # Each distinct prompt of the task three times, with seeds 0, 1, 2 (the task has prompts
    # that are the same text: those are one request per seed).
    texts = {row.prompts[c] for row in load_prompts(lctg_dir(), TASK).values() for c in CONSTRAINTS}
    sent = sorted((body["messages"][-1]["content"], body["seed"]) for body in server.bodies())
    assert sent == sorted((text, seed) for text in texts for seed in (0, 1, 2))
