"""`eval` and `score` of runs whose lines carry the runners' `generated` mark (pfgen-bench
after its PR #94), against the evaluator of the nearest public copy of pfgen-bench after that PR
(`../shared/pfgen-bench-after94/pfgen_eval.py`, run as it is, in a subprocess, under a Python
whose `sum()` is each of the two modes): the same result.json bytes, on runs made from published
runs (every answer generated; some given up; many given up in one question, so that questions
have different numbers of valid answers). Then the input errors, the rule for a question
without any generated answer, and `score`'s lines given up."""

from __future__ import annotations

import json
import lzma
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_sum_modes import compensating_python

from cli_runner import run_cli
from pfgen_bench import bench_dir, result_dir
from pfgen_fast._core import pfgen as core_pfgen
from pfgen_fast.site.model import Collected
from pfgen_fast.site.pfgen_runs import GIVEN_UP, collect_pfgen
from published import PFGEN_AFTER_94, require

PLACEHOLDER = "(FAILED TO GENERATE AN ANSWER)"
# Published runs of 10 trials each, and how each one's answers are given up.
RUNS = {
    "google/gemini-2.0-flash-thinking-exp-1219/c246287": "none",
    "google/text-bison/e793a38": "some",
    "MiniMaxAI/MiniMax-Text-01/74d4af0": "one question",
}


def marked(record: dict[str, object], generated: bool) -> dict[str, object]:
    """A line as the runners write it since PR #94: `generated` after the answer."""
    line = {"question": record["question"], "answer": record["answer"], "generated": generated}
    if not generated:
        line["answer"] = PLACEHOLDER
    return {**line, **{k: v for k, v in record.items() if k not in line}}


def given_up_lines(records: list[dict[str, object]], how: str) -> set[int]:
    """The lines to give up: none; 3% at random; 7 of one question's answers and 2 of
    another's."""
    if how == "none":
        return set()
    chosen = random.Random(52)
    if how == "some":
        return set(chosen.sample(range(len(records)), len(records) * 3 // 100))
    questions = sorted({str(r["question"]) for r in records})
    lines: set[int] = set()
    for question, count in ((questions[3], 7), (questions[20], 2)):
        of_question = [i for i, r in enumerate(records) if r["question"] == question]
        lines.update(chosen.sample(of_question, count))
    return lines


def question_subset(data_dir: Path) -> dict[str, str]:
    """Question text -> its Qxx.json, for the questions the reference test scores: a few spread
    over the benchmark, with the two `given_up_lines` gives up in one question (the copy's
    evaluator builds its tables in pure Python, question by question)."""
    files = {
        json.loads(path.read_text("utf-8"))["question"]: path
        for path in sorted(data_dir.glob("Q*.json"))
    }
    texts = sorted(files)
    return {texts[i]: files[texts[i]].name for i in (0, 3, 11, 20, 37, 49)}


def make_run(name: str, how: str, root: Path, questions: dict[str, str]) -> Path:
    """The published run, its lines of `questions` only, with `generated` marks, in `root`
    (with its config.json and a data folder of those questions)."""
    published = result_dir() / name
    with lzma.open(published / "trials.jsonl.xz", "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    gone = given_up_lines(records, how)
    text = "".join(
        json.dumps(marked(record, i not in gone), ensure_ascii=False) + "\n"
        for i, record in enumerate(records)
        if record["question"] in questions
    )
    target = root / "result" / name
    target.mkdir(parents=True)
    (target / "trials.jsonl.xz").write_bytes(lzma.compress(text.encode("utf-8")))
    shutil.copy(published / "config.json", target)
    data = root / "data"
    if not data.exists():
        data.mkdir()
        for file_name in questions.values():
            shutil.copy(bench_dir() / "data" / file_name, data / file_name)
    return target


def python_with_sum(legacy: bool) -> str:
    """An interpreter whose `sum()` is the legacy (<= 3.11) or the compensated one."""
    if legacy:
        python = sys.executable if sys.version_info < (3, 12) else shutil.which("python3.11")
    else:
        python = compensating_python()
    if python is None:
        pytest.skip(f"no Python {'<= 3.11' if legacy else '>= 3.12'} on this machine")
    return python


def reference_results(root: Path, legacy: bool) -> dict[str, bytes]:
    """The copy's evaluator run on every run under `root` (their data beside them)."""
    after_94 = require(PFGEN_AFTER_94)
    done = subprocess.run(
        [python_with_sum(legacy), str(after_94 / "pfgen_eval.py"), "result/**/trials.jsonl.xz"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {name: (root / "result" / name / "result.json").read_bytes() for name in RUNS}


@pytest.mark.parametrize("legacy", [False, True], ids=["default-sum", "legacy-sum"])
def test_marked_runs_give_the_later_evaluators_result(
    data_dir: Path, tmp_path: Path, legacy: bool
) -> None:
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    questions = question_subset(data_dir)
    for name, how in RUNS.items():
        make_run(name, how, theirs, questions)
        make_run(name, how, ours, questions)
    expected = reference_results(theirs, legacy)
    flags = ["--legacy-sum"] if legacy else []
    done = run_cli("eval", "--data", ours / "data", *flags, cwd=ours, timeout=900)
    assert done.returncode == 0, done.stderr
    for name in RUNS:
        written = (ours / "result" / name / "result.json").read_bytes()
        assert written == expected[name], name
    # The core read the runs (Python's reader was not asked).
    texts = [json.loads(path.read_text("utf-8"))["question"] for path in (ours / "data").iterdir()]
    paths = [ours / "result" / name / "trials.jsonl.xz" for name in RUNS]
    chunk = core_pfgen.TrialsChunk(paths, [True] * len(paths), [None] * len(paths), texts)
    for index in range(len(paths)):
        assert chunk.careful_bytes(index) is None
        assert chunk.is_marked(index)
    # The runs' questions did have different numbers of valid answers, and it was said.
    result = json.loads(expected["MiniMaxAI/MiniMax-Text-01/74d4af0"])
    assert result["num_trials"] == 10
    assert sorted({q["num_valid_trials"] for q in result["questions"].values()}) == [3, 8, 10]
    assert "answer(s) the runner gave up on are not scored" in done.stderr + done.stdout


def write_lines(path: Path, lines: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")


def every_question_lines(data_dir: Path, generated: bool | None) -> list[dict[str, object]]:
    """One answer per question of the data (the question as its answer), marked or not."""
    questions = [
        json.loads(path.read_text("utf-8"))["question"] for path in sorted(data_dir.glob("Q*.json"))
    ]
    lines: list[dict[str, object]] = [{"question": q, "answer": q} for q in questions]
    if generated is not None:
        for line in lines:
            line["generated"] = generated
    return lines


def test_mixed_or_odd_marks_are_input_errors_and_the_other_runs_are_scored(
    data_dir: Path, tmp_path: Path
) -> None:
    good = every_question_lines(data_dir, True)
    write_lines(tmp_path / "good" / "trials.jsonl", good)
    mixed = [*good[:5], {k: v for k, v in good[5].items() if k != "generated"}, *good[6:]]
    write_lines(tmp_path / "mixed" / "trials.jsonl", mixed)
    odd = [*good[:2], {**good[2], "generated": "yes"}, *good[3:]]
    write_lines(tmp_path / "odd" / "trials.jsonl", odd)
    mixed_path = tmp_path / "mixed" / "trials.jsonl"
    odd_path = tmp_path / "odd" / "trials.jsonl"
    # The core leaves the two to Python's reader, which words their errors.
    texts = [str(line["question"]) for line in good]
    chunk = core_pfgen.TrialsChunk([mixed_path, odd_path], [False] * 2, [None] * 2, texts)
    assert chunk.careful_bytes(0) is not None
    assert chunk.careful_bytes(1) is not None
    done = run_cli(
        "eval", "--data", data_dir, tmp_path / "good" / "trials.jsonl", mixed_path, odd_path
    )
    assert done.returncode == 1
    assert f'{mixed_path}:6: field "generated": missing, but line 1 has it' in done.stderr
    assert f'{odd_path}:3: field "generated": expected true or false, got a string' in done.stderr
    assert "Traceback" not in done.stderr
    assert (tmp_path / "good" / "result.json").exists()
    assert not (tmp_path / "mixed" / "result.json").exists()
    assert not (tmp_path / "odd" / "result.json").exists()


def test_a_question_without_a_generated_answer_leaves_no_score(
    data_dir: Path, tmp_path: Path
) -> None:
    lines = every_question_lines(data_dir, True)
    lines[4] = {**lines[4], "answer": PLACEHOLDER, "generated": False}
    run = tmp_path / "run"
    write_lines(run / "trials.jsonl", lines)
    # Read by the core: Q05's answer is counted as given up, not as an answer.
    texts = [str(line["question"]) for line in lines]
    chunk = core_pfgen.TrialsChunk([run / "trials.jsonl"], [False], [None], texts)
    assert chunk.careful_bytes(0) is None
    assert chunk.counts(0).tolist() == [int(i != 4) for i in range(len(lines))]
    assert chunk.given_up(0).tolist() == [int(i == 4) for i in range(len(lines))]
    done = run_cli("eval", "--data", data_dir, run / "trials.jsonl")
    assert done.returncode == 1
    assert (
        f"{run / 'trials.jsonl'}: 1 question(s) have no generated answer (the runner gave up "
        "every one): Q05 (use --allow-partial to score the others)"
    ) in done.stderr
    assert not (run / "result.json").exists()
    # With --allow-partial, the others are scored and the question is left out, as one without
    # answers.
    done = run_cli("eval", "--data", data_dir, "--allow-partial", run / "trials.jsonl")
    assert done.returncode == 0, done.stderr
    result = json.loads((run / "result.json").read_text("utf-8"))
    assert "Q05" not in result["questions"]
    assert len(result["questions"]) == len(lines) - 1
    # A run with no generated answer at all: no result.
    for line in lines:
        line.update(answer=PLACEHOLDER, generated=False)
    write_lines(run / "trials.jsonl", lines)
    done = run_cli("eval", "--data", data_dir, "--allow-partial", "--force", run / "trials.jsonl")
    assert done.returncode == 1
    assert "no generated answer (the runner gave up every one)" in done.stderr


def test_score_writes_given_up_lines_back_unscored(data_dir: Path, tmp_path: Path) -> None:
    plain = every_question_lines(data_dir, None)[:3]
    lines = [
        {**plain[0], "generated": True},
        {"question": plain[1]["question"], "answer": PLACEHOLDER, "generated": False, "n": 1},
        plain[2],
    ]
    path = tmp_path / "lines.jsonl"
    write_lines(path, lines)
    write_lines(tmp_path / "plain.jsonl", [plain[0]])
    done = run_cli("score", "--data", data_dir, path)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    expected = run_cli("score", "--data", data_dir, tmp_path / "plain.jsonl").stdout.splitlines()
    assert json.loads(out[0])["scores"] == json.loads(expected[0])["scores"]
    assert out[1] == json.dumps(lines[1], ensure_ascii=False)
    assert "scores" in json.loads(out[2])
    assert '1 line(s) with "generated": false written back unscored' in done.stderr
    # A mark that is not true or false is an input error naming the line.
    write_lines(path, [{**plain[0], "generated": 0}])
    done = run_cli("score", "--data", data_dir, path)
    assert done.returncode == 1
    assert f'{path}:1: field "generated": expected true or false, got an integer' in done.stderr


def test_valid_trials_are_shown_and_given_up_answers_never_as_answers(
    data_dir: Path, tmp_path: Path
) -> None:
    """A run of 2 trials with one answer of Q05 given up: the run page (`report`), the README
    leaderboard and the site say 1/2 valid trials; a sample marked given up (as a result.json
    made otherwise may hold) is shown as given up."""
    first = every_question_lines(data_dir, True)
    second = [dict(line) for line in first]
    second[4].update(answer=PLACEHOLDER, generated=False)
    run = tmp_path / "result" / "org" / "model" / "abc1234"
    write_lines(run / "trials.jsonl", first + second)
    (run / "config.json").write_text('{"model": "org/model", "mode": "qa"}\n', "utf-8")
    done = run_cli("eval", "--data", data_dir, run / "trials.jsonl")
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.splitlines()
    assert dict(zip(header.split("\t"), row.split("\t"), strict=True))["trials"] == "1/2"
    done = run_cli("eval", "--json", "--data", data_dir, run / "trials.jsonl")
    [summary] = json.loads(done.stdout)
    assert (summary["num_valid_trials"], summary["num_trials"]) == (1, 2)
    readme = tmp_path / "README.md"
    readme.write_text("# runs\n<!-- leaderboard -->\n<!-- /leaderboard -->\n", "utf-8")
    result = run / "result.json"
    done = run_cli("report", "--data", data_dir, "--readme", readme, result)
    assert done.returncode == 0, done.stderr
    page = (run / "README.md").read_text("utf-8")
    valid = "- Valid trials: 1/2 (answers the runner gave up on are not scored)"
    assert page.count(valid) == 2  # the run, and Q05
    assert page.index(valid, page.index('## <a name="Q05">')) > 0
    assert "/√2; valid 1/2)" in readme.read_text("utf-8")

    data = json.loads(result.read_text("utf-8"))
    sample = data["questions"]["Q01"]["samples"][0]
    sample.update(answer=PLACEHOLDER, generated=False)
    result.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    collected = Collected()
    collect_pfgen([tmp_path], collected)
    [board] = collected.boards
    assert (board.rows[0].cells["trials"], board.rows[0].spreads["trials"]) == (1, 2)
    [page_data] = collected.pages
    items = {item.id: item for item in page_data.items}
    assert ("valid trials", "1/2 (answers the runner gave up on are not scored)") in items[
        "Q05"
    ].fields
    shown = items["Q01"].answers[0]
    assert (shown.label, shown.text, shown.scores) == ("sample 1: given up", GIVEN_UP, {})
    assert all(PLACEHOLDER not in answer.text for item in items.values() for answer in item.answers)
    out = tmp_path / "site"
    done = run_cli("site", out, "--pfgen", tmp_path / "result")
    assert done.returncode == 0, done.stderr
    # Sorted as the number of valid trials, shown out of the trials, right-aligned.
    cell = '<td class="number" data-column="trials" data-value="1" data-total="2">1'
    assert cell + '<span class="spread">/2</span></td>' in (out / "index.html").read_text("utf-8")
