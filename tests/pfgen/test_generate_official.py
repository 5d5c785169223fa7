"""`generate` against pfgen-bench's own runner, `run-openai.py` with its `pfgen.py` (copied from
the checkout into the test's folder at run time, run as a subprocess), both asking one
recording server on 127.0.0.1 with the same settings: the same requests (the official stop list
is compared as a set when extra stop strings make it `list(set(...))`), the same run directory
name, the same config.json bytes and the same (question, answer) pairs in every trial file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_cli
from pfgen_bench import bench_dir
from pfgen_fast.testing import Reply, Request, answer_for, serve

pytest.importorskip("openai")

MODEL = "test/model"
ASKED_AGAIN = "つるかめ算について教えて。"  # its first ask of each trial gets an empty reply


class Replies:
    """Deterministic replies in the forms models give (`A:` first, spaces, a second `A:`,
    text before `A:`), decided by the prompt; with `empty_first`, the first ask of ASKED_AGAIN's
    prompt in each run gets an empty reply. `start_run` begins the next run's counts."""

    def __init__(self, empty_first: bool) -> None:
        self.empty_first = empty_first
        self.asked: Counter[str] = Counter()
        self.lock = threading.Lock()

    def start_run(self) -> None:
        with self.lock:
            self.asked.clear()

    def __call__(self, path: str, request: dict[str, Any]) -> Reply:
        chat = path.endswith("/chat/completions")
        text = request["messages"][-1]["content"] if chat else request["prompt"]
        with self.lock:
            self.asked[text] += 1
            first = self.asked[text] == 1
        asked = text.removesuffix("\nA:").rsplit("\n", 1)[-1]
        if self.empty_first and first and asked == f"Q: {ASKED_AGAIN}":
            return Reply(text="")
        answer = answer_for(text)
        forms = [
            f"A: {answer}",
            f"  A: {answer}  ",
            f"A: {answer} A: 続き",
            answer,
            f"前置き A: {answer}",
            f" {answer}\n",
        ]
        return Reply(text=forms[len(text) % len(forms)])


def run_official(folder: Path, url: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "test-key"}
    return subprocess.run(
        [sys.executable, str(folder / "run-openai.py"), *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def run_ours(
    out: Path, data_dir: Path, url: str, args: list[str]
) -> subprocess.CompletedProcess[str]:
    env = {
        "OPENAI_BASE_URL": url,
        "OPENAI_API_KEY": "test-key",
        "PFGEN_FAST_CACHE": str(out.parent / "cache"),
    }
    return run_cli("generate", *args, "--data", data_dir, "--out", out, timeout=600, env=env)


def request_keys(received: list[Request], as_set: bool) -> list[str]:
    """Each request as comparable text: path and body (the official's `stream: false`, the
    completions default, left out; the stop list sorted when it was made from a set)."""
    keys = []
    for request in received:
        body = {name: value for name, value in request.body.items() if name != "stream"}
        if as_set:
            assert len(set(body["stop"])) == len(body["stop"])
            body["stop"] = sorted(body["stop"])
        keys.append(json.dumps([request.path, body], ensure_ascii=False, sort_keys=True))
    return sorted(keys)


def run_folder(root: Path) -> Path:
    [run] = list((root / MODEL).iterdir())
    return run


def pairs(path: Path) -> list[tuple[str, str]]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [(record["question"], record["answer"]) for record in records]


CASES = [
    pytest.param("qa", [], False, id="qa-defaults"),
    pytest.param("completion", ["--num-trials", "2", "--disable-thinking"], True, id="completion"),
    pytest.param(
        "chat",
        ["--num-trials", "2", "--disable-thinking", "--temperature", "1.0"],
        False,
        id="chat-no-think",
    ),
    pytest.param("qa", ["--num-trials", "1", "--disable-thinking"], True, id="qa-no-think"),
    pytest.param(
        "chat",
        ["--num-trials", "1", "--top-p", "0.9", "--extra-eos-tokens", "<|im_end|>", "Q:", "###"],
        False,
        id="chat-eos",
    ),
    pytest.param(
        "completion",
        ["--num-trials", "1", "--temperature", "0", "--extra-eos-tokens", "\n\n", "</s>"],
        False,
        id="completion-eos",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "args", "empty_first"), CASES)
def test_generate_is_the_official_runner(
    data_dir: Path, tmp_path: Path, mode: str, args: list[str], empty_first: bool
) -> None:
    official = tmp_path / "official"
    official.mkdir()
    for name in ("run-openai.py", "pfgen.py"):
        shutil.copy(bench_dir() / name, official / name)
    settings = ["--mode", mode, "--model", MODEL, *args]
    replies = Replies(empty_first)
    with serve(replies) as server:
        theirs = run_official(official, server.base_url, settings)
        assert theirs.returncode == 0, theirs.stderr
        official_requests = list(server.received)
        replies.start_run()
        ours = run_ours(tmp_path / "ours", data_dir, server.base_url, settings)
        assert ours.returncode == 0, ours.stderr
        our_requests = server.received[len(official_requests) :]

    extra_eos = "--extra-eos-tokens" in args
    trials = int(args[args.index("--num-trials") + 1]) if "--num-trials" in args else 10
    # Every question of every trial, and the empty answers asked again.
    assert len(official_requests) == trials * (50 + empty_first)
    assert request_keys(our_requests, extra_eos) == request_keys(official_requests, extra_eos)
    if mode == "completion":
        assert all(request.body["stream"] is False for request in official_requests)
    if extra_eos:
        # Ours: the config's stop words, then the extra ones, each once, in the order given.
        [stop] = {tuple(request.body["stop"]) for request in our_requests}
        expected = ["Q:", "\n\n"] if mode == "completion" else ["Q:"]
        expected += [s for s in args[args.index("--extra-eos-tokens") + 1 :] if s not in expected]
        assert list(stop) == list(dict.fromkeys(expected))

    their_run = run_folder(official / "result")
    our_run = run_folder(tmp_path / "ours")
    assert our_run.name == their_run.name
    assert (our_run / "config.json").read_bytes() == (their_run / "config.json").read_bytes()
    for trial in range(1, trials + 1):
        name = f"trial_{trial:03d}.jsonl"
        assert pairs(our_run / name) == pairs(their_run / name)
    assert not (our_run / f"trial_{trials + 1:03d}.jsonl").exists()
