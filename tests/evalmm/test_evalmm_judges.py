"""The judge scorers against a local OpenAI-compatible stand-in that judges deterministically:
prompts from llm-jp-eval-mm's own files (../shared/llm-jp-eval-mm), its parameters, its reply
parsing, failed calls excluded and counted (or scored as the original with --judge-errors zero),
raw replies logged, and heron-bench's aggregate (evalmm-spec.md §2 cases)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_cli
from pfgen_fast.common.llm import LLMClient
from pfgen_fast.evalmm.metrics.base import Batch, Judged, JudgeErrors, Options
from pfgen_fast.evalmm.metrics.judges import heron_aggregate, last_boxed, parse_heron
from pfgen_fast.evalmm.metrics.scorers import get_scorer
from pfgen_fast.evalmm.metrics.scoring import score_items
from pfgen_fast.evalmm.prompts import system_message
from pfgen_fast.testing import Reply, StandInServer, serve
from published import evalmm_dir

PREDICTION = re.compile(r"(?:Prediction|\"model_answer\"|モデルの回答\])\s*:\s*(\S*)")

# What the stand-in judge replies to each prediction.
REPLIES = {
    "good": Reply("5"),
    "fair": Reply("スコアは３です"),
    "ten": Reply("10"),
    "none": Reply("評価: 二"),
    "fail": Reply(status=500),
    "json": Reply('```json\n{"score_gpt": 8, "score": "6"}\n```'),
    "braces": Reply('score: {"score": 7.9, "score_gpt": 9}'),
    "nested": Reply('{"a": {"score": 1, "score_gpt": 2}}'),
    "yes": Reply("理由...\ncorrect: YES"),
    "no": Reply("correct: no"),
    # Reasoning before the verdict: what is inside it is never the verdict.
    "think-json": Reply('<think>{"score": 1, "score_gpt": 1}</think>{"score": 4, "score_gpt": 5}'),
    "think-yes": Reply("<think>correct: no?</think>correct: yes"),
    "think-cut": Reply("<think>correct: yes かも", finish_reason="length"),
}


def judge(path: str, request: dict[str, Any]) -> Reply:
    content = request["messages"][-1]["content"]
    found = PREDICTION.findall(content)
    return REPLIES.get(found[-1] if found else "", Reply("?"))


@pytest.fixture()
def server() -> Iterator[StandInServer]:
    with serve(judge) as stand_in:
        yield stand_in


def run_metric(
    name: str, url: str, refs: list[str], preds: list[str], docs: list[dict[str, Any]], **kw: Any
) -> tuple[list[Any], dict[str, Any]]:
    client = LLMClient(url, "judge-model", cache_path=None, max_retries=0)
    try:
        options = Options(judge=client, data_dir=evalmm_dir(), **kw)
        scorer = get_scorer(name)
        wheres = [f"item {n}" for n in range(1, len(refs) + 1)]
        scored = score_items(scorer, refs, preds, docs, options, wheres)
        return scored.scores, scored.aggregate
    finally:
        client.close()


def test_llm_as_a_judge(server: StandInServer) -> None:
    url = server.base_url
    preds = ["good", "fair", "ten", "none", "", "fail"]
    docs = [{"input_text": f"質問{i}"} for i in range(len(preds))]
    scores, aggregate = run_metric("llm-as-a-judge", url, ["正解"] * 6, preds, docs)
    assert scores == [5, 3, 1, 0, 0, None]
    assert aggregate == {
        "overall_score": 9 / 5,
        "details": {"llm_as_a_judge": 9 / 5, "judge_errors": 1},
    }
    asked = server.bodies()
    assert len(asked) == 5  # the empty prediction is not sent
    system = {
        "role": "system",
        "content": system_message(
            evalmm_dir() / "src" / "eval_mm" / "metrics" / "llm_as_a_judge_scorer.py"
        ),
    }
    for body in asked:  # sent concurrently: in any order
        assert body["temperature"] == 0.0 and body["seed"] == 0 and body["max_tokens"] == 1024
        assert body["messages"][0] == system
    first = next(body for body in asked if "Question: 質問0\n" in body["messages"][1]["content"])
    assert "Answer: 正解\nPrediction: good" in first["messages"][1]["content"]
    scores, aggregate = run_metric(
        "llm-as-a-judge", url, ["正解"] * 6, preds, docs, judge_errors=JudgeErrors.ZERO
    )
    assert scores[-1] == 0 and aggregate["details"] == {"llm_as_a_judge": 9 / 6}


def test_heron_parsing_and_failures(server: StandInServer) -> None:
    url = server.base_url
    preds = ["json", "braces", "nested", "fail"]
    docs = [{"context": "c", "input_text": "q", "category": "conv"} for _ in preds]
    scores, aggregate = run_metric("heron-bench", url, ["ref"] * 4, preds, docs)
    assert scores == [
        {"score": 6, "score_gpt": 8},
        {"score": 7, "score_gpt": 9},
        {"score": -1, "score_gpt": -1},
        None,
    ]
    assert aggregate["details"]["judge_errors"] == 1
    assert aggregate["details"]["parse_error_count"] == 1
    scores, _ = run_metric(
        "heron-bench", url, ["ref"] * 4, preds, docs, judge_errors=JudgeErrors.ZERO
    )
    assert scores[-1] == {"score": -1, "score_gpt": -1}


def test_verdicts_after_reasoning_and_a_reply_cut_in_it(server: StandInServer) -> None:
    url = server.base_url
    docs = [{"context": "c", "input_text": "q", "category": "conv"}] * 2
    scores, _ = run_metric("heron-bench", url, ["ref"] * 2, ["think-json", "json"], docs)
    assert scores == [{"score": 4, "score_gpt": 5}, {"score": 6, "score_gpt": 8}]
    client = LLMClient(url, "judge-model", cache_path=None, max_retries=0)
    try:
        options = Options(judge=client, data_dir=evalmm_dir(), judge_max_tokens=64)
        scorer = get_scorer("jawildtext-board-vqa")
        preds = ["think-yes", "think-cut", "no"]
        batch = Batch(["a"] * 3, preds, [{"input_text": "q"}] * 3, options)
        assert scorer.score(batch) == Judged(
            [1.0, None, 0.0], {1: "cut at max_tokens before an answer (raise --max-tokens)"}
        )
    finally:
        client.close()


def test_heron_aggregate_spec_cases() -> None:
    failed = {"score": -1, "score_gpt": -1}
    result = heron_aggregate([parse_heron("no json here")], [{"category": "conv"}])
    assert result == {
        "overall_score": 0.0,
        "details": {
            "parse_error_count": 1,
            "overall": -1.0,
            "conv_rel": 0.0,
            "detail_rel": 0.0,
            "complex_rel": 0.0,
            "overall_rel": 0.0,
        },
    }
    scores = [
        {"score": 6, "score_gpt": 8}, failed,
        {"score": 9, "score_gpt": 9}, {"score": 5, "score_gpt": 10},
        {"score": 7, "score_gpt": 7}, {"score": 3, "score_gpt": 6},
    ]  # fmt: skip
    docs = [{"category": c} for c in ("conv", "conv", "detail", "detail", "complex", "complex")]
    details = heron_aggregate(scores, docs)["details"]
    assert details["conv"] == 2.5
    assert details["conv_rel"] == pytest.approx(71.43, abs=0.005)
    assert details["detail_rel"] == pytest.approx(73.68, abs=0.005)
    assert details["complex_rel"] == pytest.approx(76.92, abs=0.005)
    assert details["overall"] == pytest.approx(4.833, abs=0.0005)
    assert details["overall_rel"] == pytest.approx(74.012, abs=0.0005)


def test_board_vqa(server: StandInServer) -> None:
    url = server.base_url
    preds = ["答えは \\boxed{x} いや \\boxed{ yes }", "no", "\\boxed{}", "fail"]
    docs = [{"input_text": "q"} for _ in preds]
    scores, aggregate = run_metric("jawildtext-board-vqa", url, ["a"] * 4, preds, docs)
    assert scores == [1.0, 0.0, 0.0, None]
    assert aggregate == {"overall_score": 1 / 3, "details": {"accuracy": 1 / 3, "judge_errors": 1}}
    assert server.requests_count == 3
    assert server.received[0].body["max_tokens"] == 256
    assert last_boxed("\\boxed{a{b}c} and \\boxed{d") == "a{b}c"


def test_cli_judge_with_log_and_missing_flags(server: StandInServer, tmp_path: Path) -> None:
    url = server.base_url
    source = tmp_path / "in.jsonl"
    lines = [{"ref": "r", "pred": p, "input_text": "q"} for p in ("good", "fair")]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    args = ["mm", "score", "--metric", "llm-as-a-judge", "--evalmm-dir", str(evalmm_dir())]
    result = run_cli(*args, "--json", str(source), cwd=tmp_path)
    assert result.returncode == 2 and "give --base-url and --judge-model" in result.stderr
    judged = [*args, "--base-url", url, "--judge-model", "j", "--json", str(source)]
    result = run_cli(*judged, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["overall_score"] == 4.0
    log = (tmp_path / "in.judge-replies.jsonl").read_text().splitlines()
    assert len(log) == 2
    result = run_cli("mm", "score", "--metric", "rougel", "--json", str(source), cwd=tmp_path)
    assert result.returncode == 0  # no judge, no key


def test_changed_prompt_file_refused(tmp_path: Path) -> None:
    from pfgen_fast.common.errors import DataError

    copy = tmp_path / "src" / "eval_mm" / "metrics"
    copy.mkdir(parents=True)
    text = (evalmm_dir() / "src" / "eval_mm" / "metrics" / "llm_as_a_judge_scorer.py").read_text(
        encoding="utf-8"
    )
    (copy / "llm_as_a_judge_scorer.py").write_text(text.replace("1 to 5", "1 to 6"), "utf-8")
    client = LLMClient("http://127.0.0.1:9/v1", "j", cache_path=None)
    batch = Batch(["a"], ["b"], [{"input_text": "q"}], Options(judge=client, data_dir=tmp_path))
    with pytest.raises(DataError, match="does not match llm-jp-eval-mm at the pinned commit"):
        get_scorer("llm-as-a-judge").score(batch)
    client.close()
