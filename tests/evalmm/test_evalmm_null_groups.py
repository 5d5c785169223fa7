"""Grouping fields that are null in llm-jp-eval-mm's data are grouped as its scorers group them:
jic-vqa's domain (its preparation script gives none to a question naming none of its four
keywords) through `mm run` to prediction.jsonl, evaluation.jsonl and the leaderboard, and
mecha-ja's answer type and heron-bench's category through the registry; each aggregate equal
to the original scorer's on the same scores and documents."""

from __future__ import annotations

import importlib
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_cli
from pfgen_fast.evalmm.metrics.base import Options
from pfgen_fast.evalmm.metrics.scorers import get_scorer
from pfgen_fast.evalmm.metrics.scoring import check_item, score_items
from pfgen_fast.testing import Reply, prompt_text, serve
from published import EVALMM_SOURCE, require

pytest.importorskip("datasets")
import mm_datasets  # noqa: E402


def original_scorer(module: str, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A scorer module of llm-jp-eval-mm's `eval_mm.metrics`, imported without its package's
    __init__ (which imports every scorer) and with its judge client's module stubbed (the
    aggregates here call no judge)."""
    folder = require(EVALMM_SOURCE) / "src" / "eval_mm"
    for name, path in (("eval_mm", folder), ("eval_mm.metrics", folder / "metrics")):
        if name not in sys.modules:
            package = types.ModuleType(name)
            package.__path__ = [str(path)]
            monkeypatch.setitem(sys.modules, name, package)
    client = types.ModuleType("eval_mm.utils.azure_client")
    client.OpenAIChatAPI = object  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "eval_mm.utils", types.ModuleType("eval_mm.utils"))
    monkeypatch.setitem(sys.modules, "eval_mm.utils.azure_client", client)
    for name in list(sys.modules):
        if name.startswith("eval_mm.metrics."):
            monkeypatch.delitem(sys.modules, name)
    return importlib.import_module(f"eval_mm.metrics.{module}")


def original_aggregate(
    module: str, scorer_class: str, scores: list[Any], docs: list[dict[str, Any]], monkeypatch: Any
) -> dict[str, Any]:
    """The original's aggregate as its runner writes it to evaluation.jsonl (JSON: a None key
    becomes "null")."""
    scorer_module = original_scorer(module, monkeypatch)
    config = sys.modules["eval_mm.metrics.scorer"].ScorerConfig
    columns = {key: [doc[key] for doc in docs] for key in docs[0]}
    loaded = columns if module == "jic_vqa_scorer" else docs  # it reads docs["domain"]
    scorer = getattr(scorer_module, scorer_class)(config(docs=loaded))
    output = scorer.aggregate(scores)
    # dataclasses.asdict as its runner calls it (heron's defaultdict needs Python 3.12's)
    aggregate = {"overall_score": output.overall_score, "details": dict(output.details)}
    result: dict[str, Any] = json.loads(json.dumps(aggregate, ensure_ascii=False))
    return result


def ours(metric: str, refs: list[Any], preds: list[str], docs: list[dict[str, Any]]) -> Any:
    scorer = get_scorer(metric)
    items = [
        {**doc, "ref": ref, "pred": pred} for ref, pred, doc in zip(refs, preds, docs, strict=True)
    ]
    wheres = [f"item {n}" for n in range(1, len(items) + 1)]
    for where, item in zip(wheres, items, strict=True):
        check_item(scorer, item, where)
    scored = score_items(scorer, refs, preds, items, Options(), wheres)
    return scored.scores, scored.aggregate


def test_mm_run_scores_jic_vqa_items_without_a_domain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = mm_datasets.jic_vqa(tmp_path / "dataset")
    replies = {
        "この花の名前は？": "桜です",
        "これは何ですか？": "塔",
        "この食べ物は何ですか？": "寿司",
    }
    out = tmp_path / "out"
    with serve(lambda path, body: Reply(text=replies[prompt_text(body)])) as vlm:
        result = run_cli(
            "mm", "run", "--task", "jic-vqa", "--model", "m", "--base-url", vlm.base_url,
            "--data", f"jic-vqa={folder / 'jic_vqa.parquet'}", "--out", out, cwd=tmp_path,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = (out / "jic-vqa" / "m" / "prediction.jsonl").read_text(encoding="utf-8").splitlines()
    predictions = [json.loads(line) for line in lines]
    assert [(p["question_id"], p["jic-vqa"]) for p in predictions] == [
        ("1001", 1),
        ("1068", 0),
        ("1002", 1),
    ]
    evaluation = json.loads((out / "jic-vqa" / "m" / "evaluation.jsonl").read_text("utf-8"))
    docs = [{"domain": domain} for domain in ("jaflower30", None, "jafood101")]
    expected = original_aggregate("jic_vqa_scorer", "JICVQAScorer", [1, 0, 1], docs, monkeypatch)
    assert evaluation["jic-vqa"] == expected
    assert list(expected["details"]) == ["jaflower30", "null", "jafood101", "average"]
    board = run_cli("mm", "leaderboard", out, "--format", "json")
    assert board.returncode == 0, board.stderr
    assert "66.67" in board.stdout  # the average of 1, 0 and 1, ×100


def test_mecha_ja_without_an_answer_type_counts_as_non_factoid(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    docs = [
        {"answer_type": 0, "background_text": "背景", "question_id": "0"},
        {"answer_type": None, "background_text": None, "question_id": "1"},
        {"answer_type": 1, "background_text": "", "question_id": "2"},
    ]
    refs, preds = ["A", "B", "C"], ["A", "B", "D"]
    scores, aggregate = ours("mecha-ja", refs, preds, docs)
    expected = original_aggregate("mecha_ja_scorer", "MECHAJaScorer", scores, docs, monkeypatch)
    assert aggregate == expected
    assert aggregate["details"]["Non-Factoid"] == 0.5


def test_heron_bench_without_a_category_counts_in_overall_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The judge's scores given (no judge here): the aggregate alone."""
    from pfgen_fast.evalmm.metrics.judges import heron_aggregate

    scores = [
        {"score": 8, "score_gpt": 9},
        {"score": 3, "score_gpt": 7},
        {"score": 6, "score_gpt": 6},
    ]
    docs = [{"category": "conv"}, {"category": None}, {"category": "detail"}]
    heron = get_scorer("heron-bench")
    for number, doc in enumerate(docs, 1):
        item = {**doc, "ref": "r", "pred": "p", "context": "c", "input_text": "q"}
        check_item(heron, item, f"item {number}")
    expected = original_aggregate(
        "heron_bench_scorer", "HeronBenchScorer", scores, docs, monkeypatch
    )
    assert heron_aggregate(scores, docs) == expected
    assert expected["details"]["overall"] == 17 / 3
