"""`judge pairwise` end to end against a local judge that returns log-probabilities: verdicts
compared with the from-spec reference, requests as the paper makes them, the cache, outputs,
and one-line errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from judge_reference import spec_concordance, spec_fleiss, spec_order, spec_pair
from scripted_judge import CRITERIA_TEXT, ScriptedJudge

from cli_runner import run_cli
from pfgen_fast.cli import main
from pfgen_fast.common.jsonl import dumps_line
from pfgen_fast.judge.outputs import read_pairwise_result
from pfgen_fast.testing import serve

FIGURE_1 = ("甲の回答です。", "乙の回答です。")
C_MISSING = ("丙の回答です。", "丁の回答です。")
TIE = ("戊の回答です。", "己の回答です。")
AGREE_C = ("庚の回答です。", "辛の回答です。")
UNSCRIPTED = ("壬の回答です。", "癸の回答です。")

SCRIPT = {
    FIGURE_1: ("A", {"A": 0.7, "B": 0.1, "C": 0.06}),
    FIGURE_1[::-1]: ("A", {"A": 0.6, "B": 0.4, "C": 0.1}),
    C_MISSING: ("B", {"A": 0.1, "B": 0.8}),
    C_MISSING[::-1]: ("A", {"A": 0.85, "B": 0.05}),
    TIE: ("A", {"A": 0.5, "B": 0.25}),
    TIE[::-1]: ("A", {"A": 0.5, "B": 0.25}),
    AGREE_C: ("C", {"A": 0.2, "B": 0.1, "C": 0.6}),
    AGREE_C[::-1]: ("C", {"A": 0.1, "B": 0.3, "C": 0.5}),
}
PAIRS = {"fig1": FIGURE_1, "c-missing": C_MISSING, "tie": TIE, "agree-c": AGREE_C}
LABELS = {
    "fig1": ["A", "A", "C"],
    "c-missing": ["B", "B", "B"],
    "tie": ["C", "A", "C"],
    "agree-c": ["C", "B", "C"],
    "other": ["A", "B", "B"],
}


def write_items(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return path


def item_rows() -> list[dict[str, Any]]:
    rows = []
    for name, (a, b) in {**PAIRS, "other": UNSCRIPTED}.items():
        question = "時計の長針と短針が1日に重なる回数は？" if name != "other" else "Rubyとは？"
        rows.append(
            {
                "id": name,
                "question": question,
                "reference": "22回です。",
                "answer_a": a,
                "answer_b": b,
                "labels": LABELS[name],
                "task": "文章作成" if name in ("fig1", "c-missing") else "要約",
            }
        )
    return rows


def judge_cli(url: str, *args: str) -> tuple[int, str, str]:
    done = run_cli(
        "judge", "pairwise", *args, "--base-url", url, "--judge-model", "judge-1", "--quiet"
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    ("prompt", "criteria"), [("result-only", False), ("reason-then-result", True)]
)
def test_verdicts_match_reference(tmp_path: Path, prompt: str, criteria: bool) -> None:
    items = write_items(tmp_path / "items.jsonl", item_rows())
    judge = ScriptedJudge(SCRIPT)
    extra = ["--criteria"] if criteria else []
    with serve(judge) as server:
        code, out, err = judge_cli(
            server.base_url, str(items), "--prompt", prompt, "--json", *extra
        )
    assert (code, err) == (0, "")
    result = json.loads(out)
    reasoning = prompt == "reason-then-result"
    verdicts = {}
    for row, record in zip(item_rows(), result["items"], strict=True):
        a, b = row["answer_a"], row["answer_b"]
        expected = spec_pair(
            spec_order(judge.reference_reply(a, b, reasoning), reasoning),
            spec_order(judge.reference_reply(b, a, reasoning), reasoning),
        )
        assert record["id"] == row["id"]
        assert record["verdict"] == {m: expected[m] for m in ("proposed", "bs1", "bs2")}
        assert record["consistent"] == expected["consistent"]
        assert [order["shown_first"] for order in record["orders"]] == ["A", "B"]
        verdicts[row["id"]] = record["verdict"]
    assert verdicts["fig1"] == {"proposed": "A", "bs1": None, "bs2": "C"}
    assert verdicts["c-missing"] == {"proposed": "B", "bs1": "B", "bs2": "B"}
    assert verdicts["tie"] == {"proposed": "C", "bs1": None, "bs2": "C"}
    assert result["items"][2]["tie_broken"] is True
    assert result["items"][1]["orders"][0]["probabilities"]["C"] == 0.0
    if reasoning:  # the lone letter inside the reason is not the verdict
        assert result["items"][0]["orders"][0]["position"] == 5
    labels = [row["labels"] for row in item_rows()]
    summary = result["summary"]
    for method in ("proposed", "bs1", "bs2"):
        expected_cr = spec_concordance([verdicts[r["id"]][method] for r in item_rows()], labels)
        assert summary[method] == pytest.approx(expected_cr)
    assert summary["fleiss_kappa"] == pytest.approx(spec_fleiss(labels))
    consistent = [r["consistent"] for r in result["items"]]
    assert summary["robustness"] == pytest.approx(sum(consistent) / len(consistent))
    # two orders per item, criteria once per question, with the paper's parameters
    assert judge.judged == 2 * len(labels)
    assert judge.criteria == (2 if criteria else 0)
    bodies = [body for body in server.bodies() if "logprobs" in body]
    assert len(bodies) == 2 * len(labels)
    for body in bodies:
        assert (body["logprobs"], body["top_logprobs"], body["temperature"]) == (True, 20, 0)
        assert body["max_tokens"] == (2048 if reasoning else 1)
    assert summary["usage"]["calls"] == server.requests_count
    # the measures per task, as the paper's columns
    writing = summary["by_task"]["文章作成"]
    assert (writing["items"], summary["by_task"]["要約"]["items"]) == (2, 3)
    expected_cr = spec_concordance(
        [verdicts["fig1"]["proposed"], verdicts["c-missing"]["proposed"]],
        [LABELS["fig1"], LABELS["c-missing"]],
    )
    assert writing["proposed"] == pytest.approx(expected_cr)


def test_second_run_makes_no_call(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", item_rows())
    with serve(ScriptedJudge(SCRIPT)) as server:
        first = judge_cli(server.base_url, str(items), "--criteria", "--json")
        calls = server.requests_count
        second = judge_cli(server.base_url, str(items), "--criteria", "--json")
        assert server.requests_count == calls
    first_result, second_result = json.loads(first[1]), json.loads(second[1])
    assert second_result["items"] == first_result["items"]
    assert second_result["summary"]["usage"]["calls"] == 0
    assert second_result["summary"]["usage"]["cached"] == calls
    # the tokens of all replies are the same, cached or not: 100 in per reply (scripted_judge)
    assert second_result["summary"]["tokens"] == first_result["summary"]["tokens"]
    assert first_result["summary"]["tokens"]["prompt"] == 100 * (calls - 2) + 10 * 2


def test_out_directory_and_table(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", item_rows())
    with serve(ScriptedJudge(SCRIPT)) as server:
        code, out, _ = judge_cli(server.base_url, str(items), "--out", str(tmp_path / "out"))
    assert code == 0
    assert out.splitlines()[0].startswith("method\tconcordance %")
    assert "robustness" in out
    records = [json.loads(line) for line in (tmp_path / "out/items.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == list(LABELS)
    summary = json.loads((tmp_path / "out/summary.json").read_text())
    assert summary["items"] == len(LABELS)
    replies = (tmp_path / "out/replies.jsonl").read_text().splitlines()
    assert len(replies) == 2 * len(LABELS)


def test_the_items_file_reads_back_as_it_was_written(tmp_path: Path) -> None:
    rows = item_rows()
    rows[1]["answer_b"] = "壊れた回答"
    for row in rows[:3]:
        row["model_a"], row["model_b"] = "x", "y"
    del rows[3]["reference"]
    rows[4]["model_a"] = "z"  # and no model B
    items = write_items(tmp_path / "items.jsonl", rows)
    out = tmp_path / "out"
    judge = ScriptedJudge(SCRIPT, fail_on="壊れた回答")
    with serve(judge) as server:
        code, _, _ = judge_cli(
            server.base_url, str(items), "--criteria", "--max-retries", "0", "--out", str(out)
        )
    assert code == 1
    result = read_pairwise_result(out)
    written = (out / "items.jsonl").read_bytes()
    assert b"".join(dumps_line(record.line()) for record in result.records) == written
    assert result.models() == ["x", "y", "z"]
    fig1, failed, _, agree_c, other = result.records
    assert fig1.verdict is not None and fig1.verdict.proposed == "A"
    assert [order.shown_first for order in fig1.orders] == ["A", "B"]
    assert fig1.labels == ("A", "A", "C") and fig1.criteria == CRITERIA_TEXT
    assert failed.error is not None and failed.verdict is None and failed.labels is None
    assert (agree_c.model_a, agree_c.reference) == (None, None)
    assert (other.model_a, other.model_b) == ("z", None)


def test_failed_calls_are_errors_not_verdicts(tmp_path: Path) -> None:
    rows = item_rows()
    rows[1]["answer_b"] = "壊れた回答"
    items = write_items(tmp_path / "items.jsonl", rows)
    judge = ScriptedJudge(SCRIPT, fail_on="壊れた回答")
    with serve(judge) as server:
        code, out, err = judge_cli(server.base_url, str(items), "--json", "--max-retries", "0")
    assert code == 1
    assert err.startswith("error: item 'c-missing': ") and len(err.splitlines()) == 1
    result = json.loads(out)
    assert "error" in result["items"][1] and "verdict" not in result["items"][1]
    assert result["summary"]["errors"] == 1
    assert sum(result["summary"]["verdicts"]["proposed"].values()) == 4  # the others judged


def test_items_or_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = ["--base-url", "http://127.0.0.1:9/v1", "--judge-model", "judge-1"]
    items = str(tmp_path / "items.jsonl")
    see = "(see python -m pfgen_fast judge pairwise --help)"
    usage_errors = [
        ([], "one of the arguments ITEMS.jsonl --runs is required"),
        ([items, "--runs", "a", "b"], "argument --runs: not allowed with argument ITEMS.jsonl"),
    ]
    for args, message in usage_errors:
        with pytest.raises(SystemExit) as stopped:
            main(["judge", "pairwise", *args, *server])
        assert stopped.value.code == 2
        assert capsys.readouterr().err == f"error: {message} {see}\n"
    assert main(["judge", "pairwise", items, "--trials", "2", *server]) == 2
    expected = f"error: --trials and --data go with --runs, not with ITEMS.jsonl {see}\n"
    assert capsys.readouterr().err == expected


def test_server_without_logprobs(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", item_rows())
    with serve(ScriptedJudge(SCRIPT, logprobs=False)) as server:
        code, out, err = judge_cli(server.base_url, str(items))
    assert code == 1
    assert out == ""
    assert len(err.splitlines()) == 1
    assert "returned no log-probabilities" in err and err.startswith("error: ")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"answer_b": None}, 'items.jsonl:2: field "answer_b": missing'),
        ({"answer_a": "  "}, 'items.jsonl:2: field "answer_a": empty answer'),
        ({"id": "fig1"}, "items.jsonl:2: field \"id\": duplicate id 'fig1' (first at line 1)"),
        ({"labels": ["A", "D", "C"]}, "items.jsonl:2: field \"labels\": 'D' is not"),
        ({"labels": ["A", "B"]}, 'items.jsonl:2: field "labels": 2 labels, but line 1 has 3'),
    ],
)
def test_bad_items(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    rows = item_rows()
    rows[1].update(change)
    rows[1] = {k: v for k, v in rows[1].items() if v is not None}
    items = write_items(tmp_path / "items.jsonl", rows)
    with serve(ScriptedJudge(SCRIPT)) as server:
        code, out, err = judge_cli(server.base_url, str(items))
    assert (code, out) == (1, "")
    assert len(err.splitlines()) == 1
    assert message in err
    assert server.received == []
