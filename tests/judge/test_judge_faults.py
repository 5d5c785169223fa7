"""`judge pairwise` against servers that misbehave as real ones do, each through the command
line: replies cut by the server, a refused item, fewer top log-probabilities than asked for,
empty replies, HTTP 500 with a body, and judges that reason first (in the content or apart).
Each failure stays its item's; the others are judged and written, and the status is 1."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from judge_reference import spec_order, spec_pair
from scripted_judge import ANSWER, ScriptedJudge

from cli_runner import run_cli
from pfgen_fast.common.jsonl import dumps_line
from pfgen_fast.judge.outputs import read_pairs
from pfgen_fast.testing import Reply, Responder, StandInServer, serve

PAIRS = [
    ("甲の回答です。", "乙の回答です。"),
    ("丙の回答です。", "丁の回答です。"),
    ("戊。", "己。"),
]
FAULTY = "問題の回答です。"  # the answer of the item the server mistreats


def write_items(path: Path) -> Path:
    rows = [
        {"id": f"pair{n}", "question": "長針と短針は？", "answer_a": a, "answer_b": b}
        for n, (a, b) in enumerate([*PAIRS, (FAULTY, "庚の回答です。")], start=1)
    ]
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return path


def faulty(judge: ScriptedJudge, fault: Callable[[dict[str, Any]], Reply]) -> Responder:
    """The judge, except for the prompts that show FAULTY: those get `fault(request)`."""

    def respond(path: str, request: dict[str, Any]) -> Reply:
        if FAULTY in request["messages"][-1]["content"]:
            return fault(request)
        return judge(path, request)

    return respond


def messages(err: str) -> list[str]:
    """The error and warning lines of stderr (progress lines aside)."""
    return [line for line in err.splitlines() if line.startswith(("error: ", "warning: "))]


def run_judge(
    tmp_path: Path, responder: Responder, *args: str
) -> tuple[int, dict[str, Any], list[str], StandInServer]:
    items = write_items(tmp_path / "items.jsonl")
    out = tmp_path / "out"
    with serve(responder) as server:
        done = run_cli(
            *["judge", "pairwise", items, "--base-url", server.base_url, "--judge-model"],
            *["judge-1", "--out", out, "--json", "--max-retries", "0", *args],
        )
    result = json.loads(done.stdout)
    written = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert written == result["items"]
    records = read_pairs(out / "items.jsonl")
    assert b"".join(dumps_line(r.line()) for r in records) == (out / "items.jsonl").read_bytes()
    assert json.loads((out / "summary.json").read_text()) == result["summary"]
    return done.returncode, result, messages(done.stderr), server


def errors(result: dict[str, Any]) -> dict[str, str]:
    return {item["id"]: item["error"] for item in result["items"] if "error" in item}


def test_a_reply_the_server_cuts_is_reported_as_cut(tmp_path: Path) -> None:
    """A server that ignores max_tokens and writes until its context is full."""
    endless = [("理由を述べると", -0.1, [("理由を述べると", -0.1)])] * 300
    cut = Reply(text="理由を述べると" * 300, logprobs=endless, finish_reason="length")
    code, result, err, server = run_judge(
        tmp_path, faulty(ScriptedJudge(), lambda _: cut), "--max-tokens", "300"
    )
    assert code == 1
    cut_reason = "cut at max_tokens before its verdict (raise --max-tokens)"
    assert errors(result) == {"pair4": f"order 1: {cut_reason}; order 2: {cut_reason}"}
    assert err == [
        "warning: 2 replies were cut at max_tokens (raise --max-tokens)",
        f"error: item 'pair4': order 1: {cut_reason}; order 2: {cut_reason}",
    ]
    summary = result["summary"]
    assert (summary["items"], summary["judged"], summary["errors"]) == (4, 3, 1)
    assert summary["settings"]["max_tokens"] == 300
    assert summary["settings"]["extra_body"] == {}
    assert {body["max_tokens"] for body in server.bodies()} == {300}


def test_the_default_bound_is_sent(tmp_path: Path) -> None:
    code, result, _, server = run_judge(
        tmp_path, ScriptedJudge(), "--criteria", "--extra-body", '{"top_k": 20}'
    )
    assert code == 0
    bodies = server.bodies()
    assert {body["max_tokens"] for body in bodies} == {2048}
    assert {body["top_k"] for body in bodies} == {20}
    settings = result["summary"]["settings"]
    assert (settings["max_tokens"], settings["criteria_max_tokens"]) == (2048, 2048)
    assert settings["extra_body"] == {"top_k": 20}


def test_one_item_longer_than_the_context(tmp_path: Path) -> None:
    message = "the request exceeds the available context size (2048 tokens)"
    refused = Reply(status=400, error=message)
    code, result, err, _ = run_judge(tmp_path, faulty(ScriptedJudge(), lambda _: refused))
    assert code == 1
    assert set(errors(result)) == {"pair4"}
    assert result["summary"]["judged"] == 3
    assert len(err) == 1 and "context" in err[0]


def test_fewer_top_logprobs_than_asked(tmp_path: Path) -> None:
    judge = ScriptedJudge(alternatives=12)
    code, result, err, _ = run_judge(tmp_path, judge, "--prompt", "result-only")
    assert code == 0
    assert err == [
        "warning: 4 items got fewer than the 20 top log-probabilities asked for at a verdict "
        "token (as few as 12); a letter missing among them counts as probability 0 "
        "(docs/judge.md)"
    ]
    for item in result["items"]:
        assert [order["alternatives"] for order in item["orders"]] == [12, 12]
    assert result["summary"]["fewer_alternatives"] == 4


def test_a_letter_without_a_log_probability_is_the_items_error(tmp_path: Path) -> None:
    """A server that lists a letter among the top alternatives with `"logprob": null`."""
    unknown = Reply(text="A", logprobs=[("A", None, [("A", None), ("B", -1.2)])])  # type: ignore[list-item]
    code, result, _, _ = run_judge(
        tmp_path, faulty(ScriptedJudge(), lambda _: unknown), "--prompt", "result-only"
    )
    assert code == 1
    reason = "no log-probability for A at the verdict token"
    assert errors(result) == {"pair4": f"order 1: {reason}; order 2: {reason}"}
    assert len(result["items"]) == 4 and all("verdict" in item for item in result["items"][:3])


def test_an_empty_reply_is_named_so(tmp_path: Path) -> None:
    empty = Reply(text="", logprobs=[])  # logprobs.content: [], finish_reason: stop
    code, result, _, _ = run_judge(
        tmp_path, faulty(ScriptedJudge(), lambda _: empty), "--prompt", "result-only"
    )
    assert code == 1
    assert errors(result) == {"pair4": "order 1: empty reply; order 2: empty reply"}


def test_http_500_gives_the_servers_message(tmp_path: Path) -> None:
    crashed = Reply(status=500, error="llama_decode returned 1")
    code, result, err, _ = run_judge(tmp_path, faulty(ScriptedJudge(), lambda _: crashed))
    assert code == 1
    assert "llama_decode returned 1" in errors(result)["pair4"]
    assert result["summary"]["judged"] == 3
    assert len(err) == 1 and err[0].startswith("error: item 'pair4': ")


def reasoning_first(judge: ScriptedJudge, apart: bool) -> Responder:
    """The judge, thinking first: a block naming the other letter (a letter inside it is never
    the verdict), in the content's tokens or apart (`reasoning_content`)."""

    def respond(path: str, request: dict[str, Any]) -> Reply:
        reply = judge(path, request)
        if reply.logprobs is None or not reply.text:
            return reply
        if apart:
            return replace(reply, reasoning="AとBを比べると、Cかもしれない。")
        thought = [
            ("<think>", -0.1, [("<think>", -0.1)]),
            ("A", -0.1, [("A", -0.1), ("B", -2.0), ("C", -3.0)]),
            ("とBを比べる", -0.1, [("とBを比べる", -0.1)]),
            ("</", -0.1, [("</", -0.1)]),
            ("think>", -0.1, [("think>", -0.1)]),
            ("\n\n", -0.1, [("\n\n", -0.1)]),
        ]
        logprobs = thought + reply.logprobs
        return replace(reply, logprobs=logprobs, text="".join(t for t, _, _ in logprobs))

    return respond


@pytest.mark.parametrize("prompt", ["result-only", "reason-then-result"])
@pytest.mark.parametrize("apart", [False, True])
def test_a_judge_that_reasons_first(tmp_path: Path, prompt: str, apart: bool) -> None:
    judge = ScriptedJudge()
    responder = reasoning_first(judge, apart)
    code, result, err, _ = run_judge(tmp_path, responder, "--prompt", prompt)
    assert (code, err) == (0, [])
    reasoning = prompt == "reason-then-result"
    for (a, b), item in zip([*PAIRS, (FAULTY, "庚の回答です。")], result["items"], strict=True):
        expected = spec_pair(
            spec_order(judge.reference_reply(a, b, reasoning), reasoning),
            spec_order(judge.reference_reply(b, a, reasoning), reasoning),
        )
        assert item["verdict"] == {m: expected[m] for m in ("proposed", "bs1", "bs2")}
        position = item["orders"][0]["position"]
        offset = 0 if apart else 6
        assert position == offset + (5 if reasoning else 0)


def test_a_reply_cut_inside_its_reasoning(tmp_path: Path) -> None:
    thinking = [("<think>", -0.1, [("<think>", -0.1)]), ("まずAは", -0.1, [("まずAは", -0.1)])]
    cut = Reply(text="<think>まずAは", logprobs=thinking, finish_reason="length")
    code, result, _, _ = run_judge(
        tmp_path, faulty(ScriptedJudge(), lambda _: cut), "--prompt", "result-only"
    )
    assert code == 1
    reason = "cut at max_tokens before an answer (raise --max-tokens)"
    assert errors(result) == {"pair4": f"order 1: {reason}; order 2: {reason}"}


def test_an_empty_criteria_reply_is_warned_about(tmp_path: Path) -> None:
    judge = ScriptedJudge()

    def respond(path: str, request: dict[str, Any]) -> Reply:
        if ANSWER.search(request["messages"][-1]["content"]) is None:
            return Reply(text="")
        return judge(path, request)

    code, result, err, _ = run_judge(tmp_path, respond, "--criteria")
    assert code == 0
    assert err == [
        "warning: 1 criteria replies were empty; their questions were judged with empty criteria"
    ]
    assert {item["criteria"] for item in result["items"]} == {""}


def test_the_outputs_are_checked_before_the_first_call(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    items = write_items(tmp_path / "items.jsonl")
    with serve(ScriptedJudge()) as server:
        for out in (blocker, blocker / "out"):
            done = run_cli(
                *["judge", "pairwise", items, "--out", out, "--base-url", server.base_url],
                *["--judge-model", "judge-1"],
            )
            code, err = done.returncode, done.stderr
            assert code == 1 and err.startswith(f"error: {out}: cannot write: ")
            assert len(err.splitlines()) == 1
    assert server.received == []
