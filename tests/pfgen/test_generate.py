"""`generate` against a real OpenAI-compatible server on 127.0.0.1 that sometimes fails."""

from __future__ import annotations

import datetime
import hashlib
import json
import lzma
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_prompt import read_examples, reference_task

from cli_runner import run_cli
from pfgen_bench import result_dir
from pfgen_fast.pfgen.generate import RunParameters
from pfgen_fast.testing import Flaky, Reply, answer_for, prompt_text, serve

UNREACHABLE = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there


@pytest.fixture(autouse=True)
def own_response_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's runs have their own response cache: a server of an earlier test on the
    same port must not answer from it."""
    monkeypatch.setenv("PFGEN_FAST_CACHE", str(tmp_path / "cache"))


# No key: the stand-in servers take none (a key in the environment must not change a run).
NO_KEY = {"OPENAI_API_KEY": ""}


def generate_args(base_url: str, out: Path, data_dir: Path, mode: str, trials: int) -> list[str]:
    return [
        "generate",
        "--model",
        "test/model",
        "--mode",
        mode,
        "--base-url",
        base_url,
        "--num-trials",
        str(trials),
        "--data",
        str(data_dir),
        "--out",
        str(out),
    ]


def run_generate(
    base_url: str,
    out: Path,
    data_dir: Path,
    *extra: str,
    mode: str = "chat",
    trials: int = 3,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    fast = ["--concurrency", "4", "--timeout", "2", "--max-retries", "2"]
    args = generate_args(base_url, out, data_dir, mode, trials)
    return run_cli(*args, *fast, *extra, env={**NO_KEY, **(env or {})})


def run_dir_of(out: Path) -> Path:
    [run] = list((out / "test" / "model").iterdir())
    return run


def protocol_config(mode: str, **params: Any) -> str:
    """generation.md: the run's parameters, sorted, as JSON."""
    stop = ["Q:", "\n\n"] if mode == "completion" else ["Q:"]
    config = {
        "engine": "openai-api",
        "model": "test/model",
        "mode": mode,
        "num_examples": 20,
        "stop": stop,
        "max_tokens": 300,
        "enable_thinking": True,
        **params,
    }
    return json.dumps(dict(sorted(config.items())), ensure_ascii=False)


def expected_request(task: dict[str, Any], mode: str) -> tuple[str, dict[str, Any]]:
    """What the published API runner sends for a task with its default settings: endpoint
    and body."""
    body = {
        "model": "test/model",
        "max_tokens": 300,
        "temperature": 0.7,
        "stop": ["Q:", "\n\n"] if mode == "completion" else ["Q:"],
        "top_p": 0.98,
    }
    if mode == "completion":
        return "/v1/completions", {**body, "prompt": task["prompt"]}
    if mode == "qa":
        return "/v1/chat/completions", {
            **body,
            "messages": [{"role": "user", "content": task["prompt"]}],
        }
    messages = [
        {"role": "system", "content": task["system_prompt"]},
        {"role": "user", "content": task["user_prompt"]},
    ]
    return "/v1/chat/completions", {**body, "messages": messages}


def canonical(request: tuple[str, dict[str, Any]]) -> str:
    return json.dumps(request, ensure_ascii=False, sort_keys=True)


def chat_model_answer(path: str, body: dict[str, Any]) -> Reply:
    """The stand-in's answer as models give it: after "A: " in a chat (the examples' form),
    after a space in a completion."""
    prefix = "A: " if path.endswith("/chat/completions") else " "
    return Reply(text=prefix + answer_for(prompt_text(body)))


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["completion", "qa", "chat"])
def test_full_run_survives_failures_and_follows_the_protocol(data_dir: Path, tmp_path, mode):
    flaky = Flaky(
        chat_model_answer,
        fail_every=7,
        malformed_every=17,
        empty_every=11,
        slow_every=53,
        slow_seconds=2.5,
    )
    with serve(flaky) as server:
        result = run_generate(server.base_url, tmp_path, data_dir, mode=mode)
    assert result.returncode == 0, result.stderr
    run = run_dir_of(tmp_path)
    config = protocol_config(mode, temperature=0.7, top_p=0.98)
    assert (run / "config.json").read_text(encoding="utf-8") == config + "\n"
    assert run.name == hashlib.sha1(config.encode()).hexdigest()[:7]

    examples = read_examples(data_dir)
    expected_requests = set()
    lines = []
    for trial in (1, 2, 3):
        tasks = [reference_task(examples, e["question"], mode, trial) for e in examples]
        expected_requests |= {canonical(expected_request(task, mode)) for task in tasks}
        path = run / f"trial_{trial:03d}.jsonl"
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        # The fields as the runners write them since pfgen-bench's PR #94.
        fields = ["question", "answer", "generated", "timestamp"]
        assert [list(r) for r in records] == [fields] * 50
        assert all(r["generated"] is True for r in records)
        assert [r["question"] for r in records] == [e["question"] for e in examples]
        # The server answers each prompt deterministically; "A: " and spaces are cleaned up.
        prompts = [t["prompt"] if mode != "chat" else t["user_prompt"] for t in tasks]
        assert [r["answer"] for r in records] == [answer_for(p) for p in prompts]
        for record in records:
            datetime.datetime.fromisoformat(record["timestamp"])
        lines += path.read_bytes().splitlines()
    # Every request is the protocol's, and every task was asked.
    assert {
        canonical((request.path, request.body)) for request in server.received
    } == expected_requests
    packed = lzma.decompress((run / "trials.jsonl.xz").read_bytes())
    assert packed == b"".join(line + b"\n" for line in sorted(lines))


@pytest.mark.slow
def test_packed_trials_evaluate_with_eval(data_dir: Path, tmp_path):
    with serve(chat_model_answer) as server:
        result = run_generate(server.base_url, tmp_path, data_dir, mode="completion", trials=2)
    assert result.returncode == 0, result.stderr
    run = run_dir_of(tmp_path)
    evaluated = run_cli("eval", run / "trials.jsonl.xz", "--data", data_dir, env=NO_KEY)
    assert evaluated.returncode == 0, evaluated.stderr
    assert json.loads((run / "result.json").read_bytes())["num_trials"] == 2


def published_api_configs() -> list[Path]:
    """Published runs of the OpenAI-compatible runner as it is now (it records
    `enable_thinking`), whose folder is named by the hash of their config.json."""
    known = {"engine", "max_tokens", "mode", "model", "num_examples", "stop", "temperature"}
    known |= {"top_p", "enable_thinking"}
    found = []
    for path in sorted(result_dir().glob("**/config.json")):
        text = path.read_bytes()
        config = json.loads(text)
        named_by_hash = hashlib.sha1(text.rstrip(b"\n")).hexdigest()[:7] == path.parent.name
        if (
            named_by_hash
            and config.get("engine") == "openai-api"
            and "enable_thinking" in config
            and set(config) <= known
        ):
            found.append(path)
    return found


@pytest.mark.slow
def test_config_hash_matches_published_runs(bench: Path, tmp_path):
    configs = published_api_configs()
    assert len(configs) >= 6
    for path in configs:
        config = json.loads(path.read_bytes())
        parameters = RunParameters(
            engine="openai-api",
            model=config["model"],
            mode=config["mode"],
            temperature=config["temperature"],
            top_p=config.get("top_p"),
            max_tokens=config["max_tokens"],
            num_examples=config["num_examples"],
            enable_thinking=config["enable_thinking"],
        )
        assert parameters.config_text() + "\n" == path.read_text(encoding="utf-8")
        assert parameters.run_directory(tmp_path).name == path.parent.name
    # The same through the command: config.json is written before any request.
    for path in configs:
        config = json.loads(path.read_bytes())
        result = run_cli(
            *generate_args(UNREACHABLE, tmp_path, bench / "data", config["mode"], 1),
            "--model",
            config["model"],
            "--temperature",
            str(config["temperature"]),
            "--top-p",
            str(config.get("top_p", "none")),
            *([] if config["enable_thinking"] else ["--disable-thinking"]),
            "--max-retries",
            "0",
            env=NO_KEY,
        )
        assert result.returncode == 1
        written = tmp_path / config["model"] / path.parent.name / "config.json"
        assert written.read_bytes() == path.read_bytes()


def test_prefix_seed_and_sampling_reach_config_and_requests(data_dir: Path, tmp_path):
    with serve(chat_model_answer) as server:
        extra = ["--prefix", "<s>\\n", "--seed", "x", "--top-p", "none", "--temperature", "0"]
        result = run_generate(server.base_url, tmp_path, data_dir, *extra, mode="qa", trials=1)
    assert result.returncode == 0, result.stderr
    # The prefix is stored as typed (as the published runners do) and used unescaped.
    config = protocol_config("qa", temperature=0.0, prefix="<s>\\n", seed="x")
    assert (run_dir_of(tmp_path) / "config.json").read_text(encoding="utf-8") == config + "\n"
    examples = read_examples(data_dir)
    tasks = [reference_task(examples, e["question"], "qa", 1, 20, "<s>\n", "x") for e in examples]
    bodies = sorted(server.bodies(), key=lambda b: b["messages"][0]["content"])
    assert [b["messages"][0]["content"] for b in bodies] == sorted(t["prompt"] for t in tasks)
    assert all(b["temperature"] == 0.0 and "top_p" not in b and "seed" not in b for b in bodies)


def stamps(run: Path) -> dict[str, tuple[int, int]]:
    """Inode and modification time of each trial file: a rewrite changes them."""
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in run.glob("trial_*")}


@pytest.mark.slow
def test_resume_after_kill_keeps_finished_trials(data_dir: Path, tmp_path):
    with serve(chat_model_answer, delay=0.02) as server:
        args = generate_args(server.base_url, tmp_path, data_dir, "qa", 4) + ["--concurrency", "2"]
        process = subprocess.Popen(
            [sys.executable, "-m", "pfgen_fast", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        first = None
        while first is None and time.monotonic() < deadline:
            first = next(iter(tmp_path.glob("test/model/*/trial_001.jsonl")), None)
            time.sleep(0.05)
        process.kill()
        process.wait()
        assert first is not None
        run = first.parent
        before = stamps(run)
        assert len(before) < 4
        result = run_generate(server.base_url, tmp_path, data_dir, mode="qa", trials=4)
    assert result.returncode == 0, result.stderr
    after = stamps(run)
    assert sorted(after) == [f"trial_{t:03d}.jsonl" for t in (1, 2, 3, 4)]
    assert all(after[name] == stamp for name, stamp in before.items())
    assert len(lzma.decompress((run / "trials.jsonl.xz").read_bytes()).splitlines()) == 200
    assert not [p for p in run.iterdir() if p.name.endswith(".tmp")]


def cut_mid_line(text: str) -> str:
    return text[: len(text) - 20]


def answer_not_a_string(text: str) -> str:
    lines = text.splitlines(keepends=True)
    record = json.loads(lines[3])
    lines[3] = json.dumps({**record, "answer": 42}, ensure_ascii=False) + "\n"
    return "".join(lines)


def question_twice(text: str) -> str:
    lines = text.splitlines(keepends=True)
    return "".join([*lines[:-1], lines[0]])


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (cut_mid_line, ":50: not valid JSON"),
        (answer_not_a_string, ':4: field "answer": expected a string, got an integer'),
        (question_twice, ':50: field "question": a second answer to the data'),
        (lambda text: "".join(text.splitlines(keepends=True)[1:]), ": no answer to "),
    ],
)
def test_a_damaged_trial_file_is_one_error_before_any_request(
    data_dir: Path, tmp_path, damage, said
):
    with serve(chat_model_answer) as server:
        first = run_generate(server.base_url, tmp_path, data_dir, mode="qa", trials=2)
        assert first.returncode == 0, first.stderr
        run = run_dir_of(tmp_path)
        trial = run / "trial_002.jsonl"
        damaged = damage(trial.read_text(encoding="utf-8"))
        trial.write_text(damaged, encoding="utf-8")
        (run / "trials.jsonl.xz").unlink()
        asked = len(server.received)
        again = run_generate(server.base_url, tmp_path, data_dir, mode="qa", trials=3)
        assert len(server.received) == asked
    assert again.returncode == 1
    [shown, error] = again.stderr.splitlines()
    assert shown == f"run directory: {run}"
    assert error.startswith(f"error: {trial}{said}")
    assert error.endswith("(a damaged trial file: remove it to ask that trial again)")
    assert trial.read_text(encoding="utf-8") == damaged
    assert sorted(p.name for p in run.iterdir()) == [
        "config.json",
        "trial_001.jsonl",
        "trial_002.jsonl",
    ]


@pytest.mark.slow
def test_authentication_failure_is_clear(data_dir: Path, tmp_path):
    with serve(chat_model_answer, api_key="secret") as server:
        refused = run_generate(server.base_url, tmp_path, data_dir, trials=1)
        wrong = run_generate(
            server.base_url, tmp_path, data_dir, trials=1, env={"OPENAI_API_KEY": "bad"}
        )
        accepted = run_generate(
            server.base_url, tmp_path / "ok", data_dir, trials=1, env={"OPENAI_API_KEY": "secret"}
        )
    for failed, hint in ((refused, "set OPENAI_API_KEY"), (wrong, "check OPENAI_API_KEY")):
        assert failed.returncode == 1 and "Traceback" not in failed.stderr
        assert "authentication failed (HTTP 401: " in failed.stderr and hint in failed.stderr
        assert "Incorrect API key provided" in failed.stderr
    assert accepted.returncode == 0, accepted.stderr


def test_unknown_model_is_clear(data_dir: Path, tmp_path):
    with serve(chat_model_answer, model="other/model") as server:
        result = run_generate(server.base_url, tmp_path, data_dir, trials=1)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "HTTP 404" in result.stderr and "does not exist" in result.stderr


def test_unreachable_server_is_clear(data_dir: Path, tmp_path):
    result = run_generate(UNREACHABLE, tmp_path, data_dir, "--max-retries", "1")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "127.0.0.1:9/v1" in result.stderr  # the client's words for a server that is down
    assert "0 of 3 trials finished" in result.stderr


def test_server_that_never_answers_keeps_finished_trials(data_dir: Path, tmp_path):
    with serve(chat_model_answer) as server:
        assert run_generate(server.base_url, tmp_path, data_dir, trials=1).returncode == 0
    finished = run_dir_of(tmp_path) / "trial_001.jsonl"
    before = stamps(finished.parent)
    with serve(chat_model_answer, delay=30) as server:
        started = time.monotonic()
        result = run_generate(
            server.base_url, tmp_path, data_dir, "--timeout", "0.3", "--max-retries", "1", trials=3
        )
        assert time.monotonic() - started < 20  # gives up, does not wait for the server
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "timed out" in result.stderr and "1 of 3 trials finished" in result.stderr
    assert stamps(finished.parent) == before


@pytest.mark.slow
def test_answers_that_stay_empty_are_an_error(data_dir: Path, tmp_path):
    with serve(lambda path, body: Reply(text="   ")) as server:
        result = run_generate(server.base_url, tmp_path, data_dir, trials=1)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "after 10 asks (last: empty reply)" in result.stderr
    assert "1 trial given up; 0 of 1 trials finished" in result.stderr
    assert not list(run_dir_of(tmp_path).glob("trial_*"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message", "status"),
    [
        (["--mode", "poetry"], "invalid choice", 2),
        (["--prefix", "\\u3042"], "prefix", 1),
        (["--num-trials", "0"], "at least 1", 2),
        (["--top-p", "high"], "'high': expected a number above 0 and at most 1, or none", 2),
        (["--temperature", "-1"], "argument --temperature: '-1': expected a finite number", 2),
        (["--num-examples", "-1"], "'-1': expected a whole number of at least 0", 2),
    ],
)
def test_bad_arguments_are_clear_errors(data_dir: Path, tmp_path, args, message, status):
    result = run_generate(UNREACHABLE, tmp_path, data_dir, *args)
    assert result.returncode == status and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert not list(tmp_path.iterdir())


def test_a_model_path_is_one_percent_encoded_folder(data_dir: Path, tmp_path):
    """vLLM serves a local model under its path: mm run's folder rule, no folder outside OUT."""
    out = tmp_path / "out"
    with serve(chat_model_answer) as server:
        for model, folder in [("/models/org/m", "%2Fmodels%2Forg%2Fm"), ("../m", "%2E.%2Fm")]:
            result = run_generate(server.base_url, out, data_dir, "--model", model, trials=1)
            assert result.returncode == 0, result.stderr
            [run] = list((out / folder).iterdir())
            assert json.loads((run / "config.json").read_bytes())["model"] == model
            assert (run / "trials.jsonl.xz").is_file()
    assert sorted(p.name for p in out.iterdir()) == ["%2E.%2Fm", "%2Fmodels%2Forg%2Fm"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "out"]


def test_unwritable_output_is_clear(data_dir: Path, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = run_generate(UNREACHABLE, blocker, data_dir)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "cannot write" in result.stderr


def test_trials_with_the_same_prompt_are_asked_apart(data_dir: Path, tmp_path):
    """With no examples every trial's prompt is the same: each trial is still a sample of its
    own, asked once per trial and never answered from another trial's reply."""
    with serve(chat_model_answer) as server:
        result = run_generate(
            server.base_url, tmp_path, data_dir, "--num-examples", "0", mode="qa", trials=3
        )
        assert result.returncode == 0, result.stderr
        assert server.requests_count == 3 * len(read_examples(data_dir))
