"""`prompt` and `generate`, against a from-spec reference and a real HTTP server."""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from openai_server import Behaviour, answer_for, serve


def cli(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pfgen_fast", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def reference_task(examples, question, mode, trial, num_examples=20, prefix="", seed=""):
    """docs/generation.md, step by step."""
    others = [e for e in examples if e["question"] != question]
    others = sorted(
        others,
        key=lambda e: hashlib.sha1(f"{seed}::{trial}::{e['question']}".encode()).hexdigest(),
    )[:num_examples]
    block = "".join(f"Q: {e['question']}\nA: {e['answer']}\n\n" for e in others)
    instruction = {
        "chat": "例と同様の文体及び文字数で、ユーザの質問に1行で答えてください。\n\n",
        "qa": "例と同様の文体及び文字数で、質問に1行で答えてください。\n\n",
        "completion": "",
    }[mode]
    system = instruction + "## 回答例\n" + block.strip()
    user = "Q: " + question + "\n" + ("A:" if mode == "completion" else "")
    task = {"question": question}
    if mode == "chat":
        task["system_prompt"] = prefix + system.strip()
        task["user_prompt"] = user.strip()
    elif mode == "qa":
        task["prompt"] = prefix + system.strip() + "\n\n## 質問\n" + user.strip()
    else:
        task["prompt"] = prefix + system.strip() + "\n\n" + user.strip()
    task["seed"] = int(hashlib.sha1(f"{seed}::{trial}".encode()).hexdigest(), 16) % 2**31
    return task


@pytest.mark.parametrize("mode", ["completion", "qa", "chat"])
@pytest.mark.parametrize(
    ("trial", "seed", "prefix"), [(1, "", ""), (2, "s1", "前置き\\n"), (7, "", "")]
)
def test_prompt_follows_the_protocol(data_dir: Path, mode, trial, seed, prefix):
    examples = [json.loads(line) for line in (data_dir / "questions.jsonl").open(encoding="utf-8")]
    result = cli(
        "prompt",
        "--data",
        data_dir,
        "--mode",
        mode,
        "--trial",
        trial,
        "--seed",
        seed,
        "--prefix",
        prefix,
    )
    assert result.returncode == 0, result.stderr
    tasks = [json.loads(line) for line in result.stdout.splitlines()]
    real_prefix = prefix.replace("\\n", "\n")
    expected = [
        reference_task(examples, e["question"], mode, trial, 20, real_prefix, seed)
        for e in examples
    ]
    assert tasks == expected
    assert [list(t) for t in tasks] == [list(t) for t in expected]


def run_generate(
    base_url: str,
    out: Path,
    data_dir: Path,
    *extra: str,
    mode: str = "chat",
    trials: int = 3,
    env: dict[str, str] | None = None,
):
    return cli(
        "generate",
        "--model",
        "test/model",
        "--mode",
        mode,
        "--base-url",
        base_url,
        "--num-trials",
        trials,
        "--data",
        data_dir,
        "--out",
        out,
        "--concurrency",
        "4",
        "--timeout",
        "2",
        "--max-retries",
        "2",
        *extra,
        env=env,
    )


def run_dir_of(out: Path) -> Path:
    [run] = list((out / "test" / "model").iterdir())
    return run


@pytest.mark.parametrize("mode", ["completion", "chat"])
def test_full_run_survives_failures_and_evaluates(data_dir: Path, tmp_path, mode):
    behaviour = Behaviour(fail_every=7, empty_every=11, slow_every=53, slow_seconds=2.5)
    with serve(behaviour) as url:
        result = run_generate(url, tmp_path, data_dir, mode=mode)
    assert result.returncode == 0, result.stderr
    run = run_dir_of(tmp_path)
    config = (run / "config.json").read_text(encoding="utf-8")
    expected = {
        "engine": "openai",
        "max_tokens": 300,
        "mode": mode,
        "model": "test/model",
        "num_examples": 20,
        "stop": ["Q:", "\n\n"] if mode == "completion" else ["Q:"],
        "temperature": 1.0,
        "top_p": 0.98,
    }
    assert config == json.dumps(expected, ensure_ascii=False) + "\n"
    assert run.name == hashlib.sha1(config[:-1].encode()).hexdigest()[:7]
    lines = []
    for trial in (1, 2, 3):
        text = (run / f"trial_{trial:03d}.jsonl").read_text(encoding="utf-8")
        records = [json.loads(line) for line in text.splitlines()]
        assert len(records) == 50
        assert all(r["answer"] and not r["answer"].startswith("A:") for r in records)
        assert all(r["answer"] == r["answer"].strip() for r in records)
        lines += (run / f"trial_{trial:03d}.jsonl").read_bytes().splitlines(keepends=True)
    assert lzma.decompress((run / "trials.jsonl.xz").read_bytes()) == b"".join(sorted(lines))
    assert answer_for("x")  # the server's answers are deterministic
    evaluated = cli("eval", "--data", data_dir, run / "trials.jsonl.xz")
    assert evaluated.returncode == 0, evaluated.stderr
    assert json.loads((run / "result.json").read_bytes())["num_trials"] == 3


def stamps(run: Path) -> dict[str, tuple[int, int]]:
    """Inode and modification time of each trial file: a rewrite changes them."""
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in run.glob("trial_*")}


def test_resume_after_kill_keeps_finished_trials(data_dir: Path, tmp_path):
    with serve(Behaviour(delay=0.02)) as url:
        args = [
            sys.executable,
            "-m",
            "pfgen_fast",
            "generate",
            "--model",
            "test/model",
            "--mode",
            "qa",
            "--base-url",
            url,
            "--num-trials",
            "4",
            "--data",
            str(data_dir),
            "--out",
            str(tmp_path),
            "--concurrency",
            "2",
        ]
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        first = None
        while time.time() < deadline:
            found = list(tmp_path.glob("test/model/*/trial_001.jsonl"))
            if found:
                first = found[0]
                break
            time.sleep(0.05)
        process.kill()
        process.wait()
        assert first is not None
        before = stamps(first.parent)
        assert not list(first.parent.glob(".*tmp"))  # nothing half-written left in view
        result = run_generate(url, tmp_path, data_dir, mode="qa", trials=4)
    assert result.returncode == 0, result.stderr
    after = stamps(first.parent)
    assert len(after) == 4
    assert all(after[name] == stamp for name, stamp in before.items())


def test_authentication_failure_is_clear(data_dir: Path, tmp_path):
    with serve(Behaviour(api_key="secret")) as url:
        refused = run_generate(url, tmp_path, data_dir, trials=1, env={"OPENAI_API_KEY": ""})
        accepted = run_generate(
            url, tmp_path / "ok", data_dir, trials=1, env={"OPENAI_API_KEY": "secret"}
        )
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "authentication failed" in refused.stderr
    assert accepted.returncode == 0, accepted.stderr


def test_unreachable_server_is_clear(data_dir: Path, tmp_path):
    result = run_generate("http://127.0.0.1:9/v1", tmp_path, data_dir, "--max-retries", "0")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "still missing" in result.stderr and "127.0.0.1:9" in result.stderr


def test_server_that_never_answers_keeps_finished_trials(data_dir: Path, tmp_path):
    with serve(Behaviour()) as url:
        assert run_generate(url, tmp_path, data_dir, trials=1).returncode == 0
    finished = run_dir_of(tmp_path) / "trial_001.jsonl"
    content = finished.read_bytes()
    with serve(Behaviour(delay=30)) as url:
        result = run_generate(
            url, tmp_path, data_dir, "--timeout", "0.3", "--max-retries", "0", trials=2
        )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert finished.read_bytes() == content
    assert not (finished.parent / "trial_002.jsonl").exists()


def test_unknown_mode_is_an_error(data_dir: Path, tmp_path):
    result = run_generate("http://127.0.0.1:9/v1", tmp_path, data_dir, mode="poetry")
    assert result.returncode == 1 and "invalid choice" in result.stderr
