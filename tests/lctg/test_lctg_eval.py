"""`lctg eval` end to end: the command line in a subprocess against a real HTTP server on
127.0.0.1 playing the remover and the judge from tables keyed by the benchmark's own prompts.
Synthetic generations cover the spec's quirks; the table must equal what the spec says the
benchmark's scripts produce for the same stand-in answers; a second run makes no call."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lctg_reference import (
    reference_table,
    spec_char_count,
    spec_format,
    spec_keyword,
    spec_prohibited,
)
from lctg_support import (
    StandIn,
    benchmark_prompt_module,
    benchmark_system_prompt,
    lctg_dir,
)

from cli_runner import run_cli
from pfgen_fast.common.jsonl import dumps_line
from pfgen_fast.lctg.data import CONSTRAINTS, PromptRow, load_prompts
from pfgen_fast.lctg.outputs import read_analysis
from pfgen_fast.testing import Reply, StandInServer, serve

TASK = "ad_text"
PROMPTS = 10
MISMATCH = 100312


@dataclass(frozen=True)
class Case:
    """One generation: the raw text, the remover's text (None: HTTP 400), the judge's first
    reply and its reply to the True/False retry."""

    raw: str
    cleaned: str | None
    first: str
    second: str = "わかりません"


def body(row: PromptRow, tag: str) -> str:
    return f"{row.keyword}で始める新しい毎日キャンペーン{tag}実施中"


# Each case builder covers a quirk of the spec's list (§8) or a parsing rule of the judge.
CASES: list[Callable[[PromptRow, str], Case]] = [
    lambda r, t: Case(body(r, t), body(r, t), "適切"),  # kept as is
    lambda r, t: Case(f"広告文：{body(r, t)}\n以上が広告文です。", body(r, t), "不適切"),  # header
    lambda r, t: Case(f"短い{t}", f"短い{t}", " 適切\n"),  # quirk 2: None; judge blanks
    lambda r, t: Case(f"拒否{t}{body(r, t)}", None, "不適切"),  # quirk 5: Invalid Error
    lambda r, t: Case(f"説明のみ{t}", "", "適切です。", "True"),  # quirk 6, 7: retry True
    lambda r, t: Case(body(r, t), body(r, t) + " ", "**適切**"),  # quirk 7: excluded
    lambda r, t: Case(  # quirk 4: case and blanks inside the keyword
        body(r, t).upper(),
        body(r, t).upper().replace(r.keyword[:1], " " + r.keyword[:1]),
        "不適切。",
        " False\n",
    ),
    lambda r, t: Case(  # quirk 3: newlines count toward the length
        body(r, t), "\n".join(body(r, t) + "。" * max(0, r.char_range[1] - 30)), "適切"
    ),
    lambda r, t: Case(f"{r.prohibited_word}の話：{body(r, t)}", body(r, t), "適切"),  # NG removed
    lambda r, t: Case(body(r, t) + r.prohibited_word, body(r, t) + r.prohibited_word, "適切"),
    lambda r, t: Case(f"短文{t}", body(r, t), "適切"),  # short raw, long cleaned
    lambda r, t: Case("Invalid Error", "Invalid Error", "不適切"),  # quirk 7 of §4: sentinel
    lambda r, t: Case(  # quirk 1: only the 6th-10th characters differ (a 5-window passes)
        body(r, t)[:5] + "特別" + body(r, t)[5:], body(r, t), "適切"
    ),
    lambda r, t: Case(  # exact length at the upper bound
        body(r, t), (body(r, t) * 9)[: r.char_range[1]], " 不適切 "
    ),
]


@dataclass
class Setup:
    prompts: dict[int, PromptRow]
    rows: list[dict[str, Any]]
    cases: dict[tuple[int, str, int], Case]
    stand_in: StandIn


def build_setup() -> Setup:
    prompts = load_prompts(lctg_dir(), TASK)
    # Prompt 100312's sentence asks for 40-40 characters, its answer is [40, 45] (quirk 11).
    chosen = [*list(prompts.values())[: PROMPTS - 1], prompts[MISMATCH]]
    stand_in = StandIn(TASK, benchmark_prompt_module(), benchmark_system_prompt())
    rows, cases, n = [], {}, 0
    for index, row in enumerate(chosen):
        record: dict[str, Any] = {"generated_text_id": index, "model": "demo/model-7b"}
        record.update(prompt_id=row.prompt_id, base_text=row.base_text)
        for constraint in CONSTRAINTS:
            texts = []
            for iteration in range(3):
                case = CASES[n % len(CASES)](row, f"{n:03d}")
                if (row.prompt_id, constraint, iteration) == (MISMATCH, "char_count", 0):
                    case = Case("四" * 43, "四" * 43, "適切")  # passes by the answer only
                n += 1
                cases[(row.prompt_id, constraint, iteration)] = case
                stand_in.add(case.raw, case.cleaned, row.base_text, case.first, case.second)
                texts.append(case.raw)
            record[f"{constraint}_result"] = texts
        rows.append(record)
    # A fourth generation is never scored, so it is never sent (its prompt is unknown).
    rows[0]["format_result"].append("四つ目の生成は使われない")
    return Setup(prompts, rows, cases, stand_in)


def expected_table(setup: Setup) -> dict[str, str]:
    """What the spec says the benchmark's scripts produce for these stand-in answers."""
    ctg: dict[str, list[list[bool | None]]] = {c: [[], [], []] for c in CONSTRAINTS}
    quality: dict[str, list[list[bool | str]]] = {c: [[], [], []] for c in CONSTRAINTS}
    for (prompt_id, constraint, iteration), case in setup.cases.items():
        row = setup.prompts[prompt_id]
        cleaned = setup.stand_in.cleaned(case.raw)
        ctg[constraint][iteration].append(spec_check(constraint, case.raw, cleaned, row))
        quality[constraint][iteration].append(setup.stand_in.label(cleaned, row.base_text))
    return reference_table(ctg, quality)


def spec_check(constraint: str, raw: str, cleaned: str, row: PromptRow) -> bool | None:
    if constraint == "format":
        return spec_format(raw, cleaned)
    if constraint == "char_count":
        return spec_char_count(cleaned, *row.char_range)
    if constraint == "keyword":
        return spec_keyword(cleaned, row.keyword)
    return spec_prohibited(cleaned, row.prohibited_word)


@dataclass
class Run:
    setup: Setup
    server: StandInServer
    base_url: str
    generations: Path
    out: Path
    first: Any  # CompletedProcess of the first run


def write_lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def eval_args(base_url: str, generations: Path, *extra: str) -> list[str]:
    return [
        "lctg", "eval", "--task", TASK, "--data", str(lctg_dir()), "--base-url", base_url,
        "--judge-model", "judge-1", "--max-retries", "0", "--quiet", str(generations), *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    setup = build_setup()
    folder = tmp_path_factory.mktemp("lctg-eval")
    generations = write_lines(folder / "generated_result_v1.jsonl", setup.rows)
    with serve(setup.stand_in.responder()) as server:
        out = folder / "out"
        first = run_cli(*eval_args(server.base_url, generations, "--out", str(out)))
        yield Run(setup, server, server.base_url, generations, out, first)


def test_the_table_is_the_benchmarks(run: Run) -> None:
    assert run.first.returncode == 1, run.first.stderr  # the remover refusals
    document = json.loads((run.out / "lctg-ad_text-scores.json").read_text("utf-8"))
    shown = {name: f"{value:.3f}" for name, value in document["scores"].items()}
    assert shown == expected_table(run.setup)
    assert document["model"] == "demo/model-7b"
    assert document["judge"]["sampling"] == "temperature 0, seed 0"
    assert (document["prompts_scored"], document["prompts_in_task"]) == (PROMPTS, 150)
    csv_lines = (run.out / "lctg-ad_text-scores.csv").read_text("utf-8").splitlines()
    assert csv_lines[0].startswith("model,Format-ctg,Format-qual,C-count-ctg")
    assert csv_lines[1].startswith("demo/model-7b,")
    # Not a terminal: the table is printed as tab-separated text.
    assert "Format-ctg\tFormat-qual" in run.first.stdout


def test_remover_refusals_are_scored_as_the_benchmark_and_counted(run: Run) -> None:
    refused = sum(case.cleaned is None for case in run.setup.cases.values())
    assert refused == 9
    document = json.loads((run.out / "lctg-ad_text-scores.json").read_text("utf-8"))
    assert document["remover_refused"] == refused
    assert document["remover_refusal_reasons"] == {"HTTP 400: invalid request": refused}
    assert document["failed"] == 0
    errors = [line for line in run.first.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: {refused} of {PROMPTS * 4 * 3} generations were refused by the remover's "
        f"server ({refused} × HTTP 400: invalid request); as in the benchmark, each is scored "
        'as "Invalid Error", which fails all four constraints ("remover_refused" in '
        "lctg-ad_text-scores.json)"
    ]


def test_every_item_is_analysed_as_the_spec_says(run: Run) -> None:
    lines = (run.out / "lctg-ad_text-analysis.jsonl").read_text("utf-8").splitlines()
    items = [json.loads(line) for line in lines]
    assert len(items) == PROMPTS * 4 * 3
    for item in items:
        case = run.setup.cases[(item["prompt_id"], item["constraint"], item["iteration"])]
        row = run.setup.prompts[item["prompt_id"]]
        cleaned = "Invalid Error" if case.cleaned is None else case.cleaned
        assert (item["raw"], item["cleaned"]) == (case.raw, cleaned)
        assert item["remover_status"] == (400 if case.cleaned is None else 200)
        assert item["check"] == spec_check(item["constraint"], case.raw, cleaned, row)
        assert item["quality"] == run.setup.stand_in.label(cleaned, row.base_text)
    mismatch = [i for i in items if (i["prompt_id"], i["constraint"]) == (MISMATCH, "char_count")]
    assert mismatch[0]["iteration"] == 0 and mismatch[0]["check"] is True
    checks = {item["check"] for item in items}
    assert checks == {True, False, None}
    qualities = {repr(item["quality"]) for item in items}
    assert {"True", "False", "'わかりません'"} <= qualities


def test_the_analysis_file_reads_back_as_it_was_written(run: Run) -> None:
    path = run.out / "lctg-ad_text-analysis.jsonl"
    records = list(read_analysis(path))
    assert len(records) == PROMPTS * 4 * 3
    assert b"".join(dumps_line(record.line()) for record in records) == path.read_bytes()


def test_every_prompt_sent_is_the_benchmarks_template_filled_in(run: Run) -> None:
    stand_in = run.setup.stand_in
    assert stand_in.unexpected == []
    sent = {body["messages"][1]["content"] for body in run.server.bodies()}
    # Every remover prompt was sent, and every first judge prompt; retries only when needed.
    assert set(stand_in.remover) <= sent
    assert set(stand_in.judge) <= sent
    assert sent <= set(stand_in.remover) | set(stand_in.judge) | set(stand_in.retry)
    assert all(p == {"temperature": 0, "seed": 0, "max_tokens": 4096} for p in stand_in.params_seen)


def test_a_second_run_makes_no_call(run: Run) -> None:
    before = run.server.requests_count
    second = run_cli(*eval_args(run.base_url, run.generations, "--out", str(run.out), "--json"))
    assert second.returncode == 1, second.stderr  # the refusals, from the cache too
    assert "9 of 120 generations were refused by the remover's server" in second.stderr
    assert run.server.requests_count == before
    printed = json.loads(second.stdout)
    assert list(printed) == ["task", "model", "scores"]
    assert printed["task"] == TASK and printed["model"] == "demo/model-7b"
    assert {k: f"{v:.3f}" for k, v in printed["scores"].items()} == expected_table(run.setup)
    assert "0 calls" in second.stderr
    lines = (run.out / "lctg-ad_text-replies.jsonl").read_text("utf-8").splitlines()
    replies = [json.loads(line) for line in lines]
    # Every reply logged, each call's once (identical requests are sent once), the second
    # run's from the cache.
    half = len(replies) // 2
    assert len(replies) == 2 * half and all(reply["cached"] for reply in replies[half:])
    assert sum(not reply["cached"] for reply in replies) == before


def test_original_sampling_sends_neither_temperature_nor_seed(run: Run, tmp_path: Path) -> None:
    one = write_lines(tmp_path / "one.jsonl", run.setup.rows[1:2])
    seen = len(run.setup.stand_in.params_seen)
    result = run_cli(*eval_args(run.base_url, one, "--original-sampling", "--json"))
    assert result.returncode == 1, result.stderr  # one remover refusal
    assert "1 of 12 generations were refused" in result.stderr
    assert run.setup.stand_in.params_seen[seen:]
    assert all(p == {"max_tokens": 4096} for p in run.setup.stand_in.params_seen[seen:])
    assert "none sent" in result.stderr


@pytest.mark.slow
def test_a_failed_call_is_its_items_and_a_rerun_resumes(tmp_path: Path) -> None:
    setup = build_setup()
    rows = setup.rows[2:3]
    failing = setup.stand_in.module.get_header_footer_remover_prompt(
        TASK, rows[0]["keyword_result"][1]
    )
    answer = setup.stand_in.responder()
    state = {"fail": True}

    def respond(path: str, request: dict[str, Any]) -> Reply:
        if state["fail"] and request["messages"][1]["content"] == failing:
            return Reply(status=500, error="overloaded")
        return answer(path, request)

    generations = write_lines(tmp_path / "g.jsonl", rows)
    with serve(respond) as server:
        first = run_cli(*eval_args(server.base_url, generations))
        assert first.returncode == 1
        errors = [line for line in first.stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1
        assert errors[0].startswith("error: 1 of 12 generations failed (1 × remover: ")
        assert "overloaded" in errors[0]
        document = json.loads((tmp_path / "lctg-ad_text-scores.json").read_text("utf-8"))
        assert (document["generations"], document["failed"]) == (12, 1)
        assert document["details"]["keyword"]["ctg_checked"] == [1, 0, 1]
        assert document["scores"]["Keyword-ctg"] is None  # iteration 1 has nothing checked
        assert document["scores"]["Format-ctg"] is not None
        analysis = (tmp_path / "lctg-ad_text-analysis.jsonl").read_text("utf-8").splitlines()
        failed = [json.loads(line) for line in analysis if '"failure"' in line]
        assert [(f["constraint"], f["iteration"], f["quality"]) for f in failed] == [
            ("keyword", 1, None)
        ]
        sent = server.requests_count
        state["fail"] = False
        second = run_cli(*eval_args(server.base_url, generations))
        # The remover refuses the generation that failed: "Invalid Error", counted.
        assert second.returncode == 1, second.stderr
        assert "failed" not in second.stderr and "1 of 12 generations were refused" in second.stderr
    again = [body["messages"][1]["content"] for body in server.bodies()[sent:]]
    assert [p for p in again if p in setup.stand_in.remover] == [failing]


def test_judge_sees_the_files_base_text_and_unparseable_iterations_are_na(tmp_path: Path) -> None:
    row = list(load_prompts(lctg_dir(), TASK).values())[5]
    stand_in = StandIn(TASK, benchmark_prompt_module(), benchmark_system_prompt())
    record: dict[str, Any] = {"model": "m", "prompt_id": row.prompt_id, "base_text": "別の説明文"}
    for k, constraint in enumerate(CONSTRAINTS):
        record[f"{constraint}_result"] = [f"{body(row, str(k))}{n}" for n in range(3)]
        for raw in record[f"{constraint}_result"]:
            stand_in.add(raw, raw, "別の説明文", "不明", "不明")
    generations = write_lines(tmp_path / "g.jsonl", [record])
    with serve(stand_in.responder()) as server:
        result = run_cli(*eval_args(server.base_url, generations, "--json"))
    assert result.returncode == 0, result.stderr
    assert stand_in.unexpected == []
    scores = json.loads(result.stdout)["scores"]
    assert scores["Format-qual"] is None and scores["Avg-qual"] is None
    assert scores["Keyword-ctg"] == 1.0
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: ")]
    assert notes[0] == (
        "note: 1 of the 150 ad_text prompts have generations; the benchmark scores the joined "
        "rows only"
    )
    assert len(notes) == 1 + 4 * 3


def thinking(respond: Callable[[str, dict[str, Any]], Reply]) -> Callable[..., Reply]:
    """The stand-in, reasoning first: every reply's text behind a `<think>` block (whose
    words are never taken for the cleaned text or the label), also given apart. (Text after
    reasoning is read without its surrounding blanks: replies that have some stay as they
    are.)"""

    def answer(path: str, request: dict[str, Any]) -> Reply:
        reply = respond(path, request)
        if reply.status == 200 and reply.text and reply.text == reply.text.strip():
            reply = Reply(text=f"<think>適切か考える。</think>\n{reply.text}", reasoning="適切")
        return reply

    return answer


def test_reasoning_replies_and_generations_give_the_same_table(tmp_path: Path) -> None:
    setup = build_setup()
    rows = [
        {
            **row,
            **{
                f"{c}_result": [f"<think>考える</think>{t}" for t in row[f"{c}_result"]]
                for c in CONSTRAINTS
            },
        }
        for row in setup.rows
    ]
    generations = write_lines(tmp_path / "generated_result_v1.jsonl", rows)
    with serve(thinking(setup.stand_in.responder())) as server:
        result = run_cli(*eval_args(server.base_url, generations, "--strip-reasoning", "--json"))
    assert result.returncode == 1, result.stderr  # the remover refusals
    assert setup.stand_in.unexpected == []
    scores = json.loads(result.stdout)["scores"]
    assert {k: f"{v:.3f}" for k, v in scores.items()} == expected_table(setup)
    document = json.loads((tmp_path / "lctg-ad_text-scores.json").read_text("utf-8"))
    assert document["judge"]["strip_reasoning"] is True
    assert document["judge"]["max_tokens"] == 4096


def test_cut_and_refused_replies_are_their_items_failures(tmp_path: Path) -> None:
    setup = build_setup()
    rows = setup.rows[:1]
    module, base_text = setup.stand_in.module, rows[0]["base_text"]
    endless = module.get_header_footer_remover_prompt(TASK, rows[0]["format_result"][0])
    cleaned = setup.stand_in.cleaned(rows[0]["keyword_result"][0])
    refused = module.get_quality_check_prompt(TASK, cleaned, base_text)
    answer = setup.stand_in.responder()

    def respond(path: str, request: dict[str, Any]) -> Reply:
        prompt = request["messages"][1]["content"]
        if prompt == endless:  # a server that ignores max_tokens, cut at its context
            return Reply(text="広告文" * 2000, finish_reason="length")
        if prompt == refused:
            return Reply(status=400, error="maximum context length is 2048 tokens")
        return answer(path, request)

    generations = write_lines(tmp_path / "g.jsonl", rows)
    with serve(respond) as server:
        result = run_cli(*eval_args(server.base_url, generations, "--max-tokens", "64"))
    assert result.returncode == 1
    analysis = (tmp_path / "lctg-ad_text-analysis.jsonl").read_text("utf-8").splitlines()
    failed = {
        (item["constraint"], item["iteration"]): item["failure"]
        for item in map(json.loads, analysis)
        if "failure" in item
    }
    assert failed == {
        (
            "format",
            0,
        ): "remover: cut at max_tokens before the end of its reply (raise --max-tokens)",
        ("keyword", 0): "judge: HTTP 400: maximum context length is 2048 tokens",
    }
    document = json.loads((tmp_path / "lctg-ad_text-scores.json").read_text("utf-8"))
    assert (document["generations"], document["failed"]) == (12, 2)
    assert document["details"]["format"]["ctg_checked"] == [0, 1, 1]
    assert document["details"]["keyword"]["ctg_checked"] == [1, 1, 1]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        "error: 2 of 12 generations failed (1 × remover: cut at max_tokens before the end of "
        "its reply (raise --max-tokens); 1 × judge: HTTP 400: maximum context length is 2048 "
        'tokens); they are left out of the rates (the "failure" field of '
        "lctg-ad_text-analysis.jsonl)",
        "error: 1 of 12 generations were refused by the remover's server (1 × HTTP 400: "
        'invalid request); as in the benchmark, each is scored as "Invalid Error", which fails '
        'all four constraints ("remover_refused" in lctg-ad_text-scores.json)',
    ]


def test_eval_checks_its_output_folder_first(tmp_path: Path) -> None:
    setup = build_setup()
    generations = write_lines(tmp_path / "g.jsonl", setup.rows[:1])
    blocker = tmp_path / "file"
    blocker.write_text("")
    with serve(setup.stand_in.responder()) as server:
        result = run_cli(*eval_args(server.base_url, generations, "--out", str(blocker)))
    assert result.returncode == 1
    assert result.stderr == f"error: {blocker}: cannot write: not a directory\n"
    assert server.received == []
