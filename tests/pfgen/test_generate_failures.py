"""`generate --num-retries/--ignore-failure` against the runner after pfgen-bench's PRs #94/#95:
the nearest public copy of its `pfgen.py` (`../shared/pfgen-bench-after94/`) driven with
`run-openai.py`'s own callback, as #95's runners call `run_tasks`, run as a subprocess; both ask
one stand-in server on 127.0.0.1 that never answers some questions. With `--ignore-failure`
both write the same (question, answer, generated) lines; without it neither writes a trial; in
both cases the same config.json in the same run folder.

The copy orders its few-shot examples by a key that includes the asked question (not confirmed
upstream; pfgen_fast keeps the pinned order), so the prompts differ: the stand-in answers by the
asked question alone."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_cli
from pfgen_bench import bench_dir
from pfgen_fast.testing import Reply, serve
from published import PFGEN_AFTER_94, require

pytest.importorskip("openai")

MODEL = "test/model"
NEVER_ANSWERED = ("つるかめ算について教えて。", "超伝導とは何ですか？")
TRIALS = 2
RETRIES = 3
# run-openai.py's `__main__`, with the two arguments #95's runners pass on; the runner's 3 s
# wait after each missing answer is skipped.
DRIVER = f"""
import functools, sys, time
import pfgen
import run_openai

time.sleep = lambda seconds: None
pfgen.run_tasks(
    "qa",
    functools.partial(run_openai.callback, extra_eos_tokens=None, add_no_think=False),
    engine="openai-api",
    model={MODEL!r},
    temperature=0.7,
    top_p=0.98,
    num_trials={TRIALS},
    enable_thinking=True,
    num_retries={RETRIES},
    ignore_failure=sys.argv[1] == "ignore",
)
"""


def asked_question(request: dict[str, Any]) -> str:
    prompt = request["messages"][-1]["content"]
    return str(prompt.rsplit("\n", 1)[-1].removeprefix("Q: "))


class Replies:
    """An answer made from the asked question, or an empty reply for NEVER_ANSWERED; counts
    the asks of each question."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()

    def __call__(self, path: str, request: dict[str, Any]) -> Reply:
        question = asked_question(request)
        self.asked[question] += 1
        if question in NEVER_ANSWERED:
            return Reply(text="")
        return Reply(text=f"A: {question}への答えです。")


def run_official(folder: Path, url: str, ignore: bool) -> subprocess.CompletedProcess[str]:
    shutil.copy(require(PFGEN_AFTER_94) / "pfgen.py", folder / "pfgen.py")
    shutil.copy(bench_dir() / "run-openai.py", folder / "run_openai.py")
    (folder / "driver.py").write_text(DRIVER, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "driver.py", "ignore" if ignore else "raise"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PATH": "/usr/bin:/bin", "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "test-key"},
    )


def lines(path: Path) -> list[tuple[str, str, bool]]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [(r["question"], r["answer"], r["generated"]) for r in records]


def run_folder(root: Path) -> Path:
    [run] = list((root / MODEL).iterdir())
    return run


@pytest.mark.parametrize("ignore", [True, False], ids=["ignore-failure", "raise"])
def test_generate_gives_up_answers_as_the_runner_after_pr95(
    data_dir: Path, tmp_path: Path, ignore: bool
) -> None:
    official = tmp_path / "official"
    official.mkdir()
    replies = Replies()
    flags = ["--ignore-failure"] if ignore else []
    with serve(replies) as server:
        theirs = run_official(official, server.base_url, ignore)
        replies.asked.clear()
        ours = run_cli(
            "generate",
            *("--mode", "qa", "--model", MODEL, "--num-trials", TRIALS),
            *("--num-retries", RETRIES, *flags, "--data", data_dir, "--out", tmp_path / "ours"),
            env={
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_API_KEY": "test-key",
                "PFGEN_FAST_CACHE": str(tmp_path / "cache"),
            },
            timeout=600,
        )
    their_run = run_folder(official / "result")
    our_run = run_folder(tmp_path / "ours")
    assert our_run.name == their_run.name
    assert (our_run / "config.json").read_bytes() == (their_run / "config.json").read_bytes()
    # Each question never answered is asked once per round, RETRIES rounds per trial.
    assert {replies.asked[q] for q in NEVER_ANSWERED} == {TRIALS * RETRIES}
    names = [f"trial_{trial:03d}.jsonl" for trial in range(1, TRIALS + 1)]
    if not ignore:
        assert theirs.returncode != 0
        assert "RuntimeError: Missing result for" in theirs.stderr
        assert ours.returncode == 1
        # Each trial names the question that ran out of asks first (either, by timing).
        for trial in range(1, TRIALS + 1):
            said = [
                f"trial {trial}: no answer to {q!r} after {RETRIES} asks" for q in NEVER_ANSWERED
            ]
            assert any(line in ours.stderr for line in said), ours.stderr
        for name in names:
            assert not (their_run / name).exists()
            assert not (our_run / name).exists()
        return
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0, ours.stderr
    for name in names:
        expected = lines(their_run / name)
        assert lines(our_run / name) == expected
        given_up = [(q, a) for q, a, generated in expected if not generated]
        assert given_up == [(q, "(FAILED TO GENERATE AN ANSWER)") for q in NEVER_ANSWERED]
    for trial in range(1, TRIALS + 1):
        assert f"trial {trial}: 2 answer(s) given up after {RETRIES} asks" in ours.stderr
    assert (our_run / "trials.jsonl.xz").exists()
