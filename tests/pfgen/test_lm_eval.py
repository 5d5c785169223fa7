"""pfgen-bench's lm-evaluation-harness tasks run by lm-eval itself (its command line), with its
`local-completions` and `local-chat-completions` models asking the stand-in server: the prompts
received are those of the benchmark's own `pfgen.py` (run from the checkout), once each, with the
published sampling; the figures lm-eval reports are those `eval` gives the same answers (written
from the replies sent, cleaned up as generation.md says); and the run folder `lm-eval-import`
makes of its samples holds those answers and evaluates to the same figures."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import runpy
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_cli
from pfgen_bench import bench_dir
from pfgen_fast.testing import Reply, serve

# lm-eval runs in processes of its own; the other tests need only pfgen_fast.
needs_lm_eval = pytest.mark.skipif(
    importlib.util.find_spec("lm_eval") is None,
    reason="needs lm-eval: pip install 'pfgen_fast[lm-eval]'",
)

MODEL = "test/model"
TRIALS = 10
METRICS = ("score", "fluency", "truthfulness", "helpfulness", "length")
STOP = {"completion": ["Q:", "\n\n"], "qa": ["Q:"], "chat": ["Q:"]}


def official_tasks(mode: str) -> list[dict[str, Any]]:
    """Every task of trials 1-10, as the benchmark's `pfgen.py` builds them."""
    pfgen = runpy.run_path(str(bench_dir() / "pfgen.py"))
    return [
        pfgen["generate_task"](question, mode, trial)
        for trial in range(1, TRIALS + 1)
        for question in pfgen["get_questions"]()
    ]


def official_request(task: dict[str, Any], mode: str) -> str:
    """What a request of the task carries: its prompt, or its messages."""
    if mode == "completion":
        return task["prompt"]
    if mode == "qa":
        messages = [{"role": "user", "content": task["prompt"]}]
    else:
        messages = [
            {"role": "system", "content": task["system_prompt"]},
            {"role": "user", "content": task["user_prompt"]},
        ]
    return json.dumps(messages, ensure_ascii=False)


def request_text(body: dict[str, Any]) -> str:
    """A request's prompt, or its messages as JSON."""
    if "messages" in body:
        return json.dumps(body["messages"], ensure_ascii=False)
    return str(body["prompt"])


class Replies:
    """Answers in the forms models give (`A:` first, a second `A:`, text before `A:`), cut
    from the example answer of the question asked at a length decided by the prompt; every
    other chat reply reasons first, apart (`reasoning_content`). Each reply is kept, by the
    request's text, to rebuild the answers lm-eval got."""

    def __init__(self, examples: dict[str, str]) -> None:
        self.examples = examples
        self.sent: dict[str, str] = {}
        self.lock = threading.Lock()

    def __call__(self, path: str, body: dict[str, Any]) -> Reply:
        chat = "messages" in body
        prompt = body["messages"][-1]["content"] if chat else body["prompt"]
        question = prompt.removesuffix("\nA:").rsplit("\n", 1)[-1].removeprefix("Q: ")
        picked = random.Random(prompt)
        answer = self.examples[question][: picked.randrange(20, 140)]
        if chat:
            forms = [f"A: {answer}", f"  {answer}  ", f"A: {answer} A: 続き", f"前置き A: {answer}"]
        else:
            forms = [f" {answer}", answer, f" {answer}\n"]
        text = picked.choice(forms)
        reasoning = "考えます。A: 違う答え" if chat and picked.random() < 0.5 else None
        with self.lock:
            self.sent[request_text(body)] = text
        return Reply(text=text, reasoning=reasoning, reasoning_in="reasoning_content")


def cleaned(text: str, mode: str) -> str:
    """generation.md: in qa and chat mode only what follows the first `A:`; stripped."""
    if mode != "completion" and "A:" in text:
        text = text.split("A:", 1)[1]
    return text.strip()


def run_lm_eval(model: str, url: str, tasks: list[str], out: Path, env: dict[str, str]) -> None:
    tasks_folder = run_cli("lm-eval-tasks").stdout.strip()
    endpoint = "/completions" if model == "local-completions" else "/chat/completions"
    command = [
        sys.executable,
        "-m",
        "lm_eval",
        "--model",
        model,
        "--model_args",
        f"model={MODEL},base_url={url}{endpoint},tokenizer_backend=None",
        "--include_path",
        tasks_folder,
        "--tasks",
        ",".join(tasks),
        "--output_path",
        str(out),
        "--log_samples",
    ]
    if model == "local-chat-completions":
        command.append("--apply_chat_template")
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=600, env={**os.environ, **env}
    )
    assert result.returncode == 0, result.stderr[-3000:]


def reported(out: Path) -> dict[str, dict[str, float]]:
    """The figures of each task in lm-eval's results file."""
    [results_file] = out.rglob("results_*.json")
    results = json.loads(results_file.read_text(encoding="utf-8"))["results"]
    return {task: {m: values[f"{m},none"] for m in METRICS} for task, values in results.items()}


def evaluated(paths: list[Path], env: dict[str, str]) -> list[dict[str, float]]:
    """`eval`'s figures of each trials file, in one run."""
    result = run_cli("eval", "--json", "--force", *paths, env=env)
    assert result.returncode == 0, result.stderr
    return [{metric: row[metric] for metric in METRICS} for row in json.loads(result.stdout)]


def answer_lines(pairs: list[tuple[str, str]]) -> bytes:
    lines = sorted(
        json.dumps({"question": q, "answer": a}, ensure_ascii=False).encode() for q, a in pairs
    )
    return b"".join(line + b"\n" for line in lines)


def trial_pairs(run_dir: Path, trial: int) -> list[tuple[str, str]]:
    lines = (run_dir / f"trial_{trial:03d}.jsonl").read_text(encoding="utf-8").splitlines()
    return [(json.loads(line)["question"], json.loads(line)["answer"]) for line in lines]


@needs_lm_eval
@pytest.mark.parametrize(
    ("model", "modes"),
    [
        pytest.param("local-completions", ["completion"], id="completion"),
        pytest.param("local-chat-completions", ["qa", "chat"], id="qa-chat"),
    ],
)
def test_lm_eval_runs_the_benchmark(
    data_dir: Path, tmp_path: Path, model: str, modes: list[str]
) -> None:
    env = {"PFGEN_DATA_DIR": str(data_dir)}
    examples = {
        json.loads(line)["question"]: json.loads(line)["answer"]
        for line in (data_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    }
    replies = Replies(examples)
    out = tmp_path / "lm-eval"
    with serve(replies) as server:
        run_lm_eval(model, server.base_url, [f"pfgen_bench_{mode}" for mode in modes], out, env)
    figures = reported(out)

    imported = run_cli("lm-eval-import", out, "--out", tmp_path / "result", env=env)
    assert imported.returncode == 0, imported.stderr
    run_dirs = {
        json.loads((path.parent / "config.json").read_text())["mode"]: path.parent
        for path in (tmp_path / "result" / MODEL).glob("*/trials.jsonl.xz")
    }
    assert sorted(run_dirs) == sorted(modes)

    evaluations: list[tuple[str, Path, Path]] = []  # mode, its answers' file, its run folder's
    for mode in modes:
        tasks = official_tasks(mode)
        received = [
            r for r in server.received if (mode == "chat") == (len(r.body.get("messages", [])) == 2)
        ]
        # The official prompts of trials 1-10, each once, with the published sampling.
        assert Counter(request_text(request.body) for request in received) == Counter(
            official_request(task, mode) for task in tasks
        )
        for request in received:
            assert request.body["temperature"] == 1.0
            assert request.body["top_p"] == 0.98
            assert request.body["max_tokens"] == 300
            assert request.body["stop"] == STOP[mode]

        # The answers lm-eval got, cleaned up, trial by trial.
        answers = [
            (task["question"], cleaned(replies.sent[official_request(task, mode)], mode))
            for task in tasks
        ]
        assert not any("違う答え" in answer for _, answer in answers)
        trials_file = tmp_path / mode / "trials.jsonl"
        trials_file.parent.mkdir()
        trials_file.write_bytes(answer_lines(answers))

        # The run folder: the task and sampling, the same answers, the same figures.
        run_dir = run_dirs[mode]
        config = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
        assert config == {
            "do_sample": True,
            "engine": "lm-eval",
            "lm_eval_model": model,
            "lm_eval_task": f"pfgen_bench_{mode}",
            "max_tokens": 300,
            "mode": mode,
            "model": MODEL,
            "num_examples": 20,
            "stop": STOP[mode],
            "temperature": 1.0,
            "top_p": 0.98,
        }
        for trial in range(1, TRIALS + 1):
            assert trial_pairs(run_dir, trial) == answers[(trial - 1) * 50 : trial * 50]
        evaluations.append((mode, trials_file, run_dir / "trials.jsonl.xz"))

    if "qa" in modes:
        check_refusals(out, tmp_path / "result", env)

    # lm-eval's figures are `eval`'s of the answers, and of the run folder.
    paths = [path for _, answers_file, run_file in evaluations for path in (answers_file, run_file)]
    rows = iter(evaluated(paths, env))
    for mode, _, _ in evaluations:
        expected = next(rows)
        assert figures[f"pfgen_bench_{mode}"] == expected
        assert next(rows) == expected


def check_refusals(out: Path, result: Path, env: dict[str, str]) -> None:
    """`lm-eval-import` takes the same samples again, and refuses (writing nothing) other
    answers for the same run folder, a qa or chat run without the chat template, and results
    without their samples."""
    again = run_cli("lm-eval-import", out, "--out", result, env=env)
    assert again.returncode == 0, again.stderr
    before = sorted((p, p.read_bytes()) for p in result.rglob("*") if p.is_file())

    [results_file] = out.rglob("results_*.json")
    [samples_file] = out.rglob("samples_pfgen_bench_qa_*.jsonl")
    lines = samples_file.read_text(encoding="utf-8").splitlines()
    sample = json.loads(lines[0])
    sample["score"][2] = "別の答え"
    samples_file.write_text("\n".join([json.dumps(sample), *lines[1:]]) + "\n", encoding="utf-8")
    other = run_cli("lm-eval-import", out, "--out", result, env=env)
    assert other.returncode == 1
    assert "trial_001.jsonl: already holds other answers" in other.stderr

    applied = results_file.read_text(encoding="utf-8")
    results = json.loads(applied)
    results["chat_template"] = None
    results_file.write_text(json.dumps(results), encoding="utf-8")
    plain = run_cli("lm-eval-import", out, "--out", result, env=env)
    assert plain.returncode == 1
    assert "ran without --apply_chat_template" in plain.stderr
    results_file.write_text(applied, encoding="utf-8")

    samples_file.unlink()
    missing = run_cli("lm-eval-import", results_file, "--out", result, env=env)
    assert missing.returncode == 1
    assert f"{samples_file}: missing (run lm_eval with --log_samples)" in missing.stderr
    assert sorted((p, p.read_bytes()) for p in result.rglob("*") if p.is_file()) == before


def test_figures_do_not_depend_on_the_order_of_the_answers(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tasks' aggregations, given the answers in any order, give `eval`'s figures."""
    from pfgen_fast.pfgen import harness

    monkeypatch.setenv("PFGEN_DATA_DIR", str(data_dir))
    lines = (data_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    examples = [json.loads(line) for line in lines]
    items = [
        [trial, example["question"], example["answer"][: 30 + 7 * trial + index % 40]]
        for trial in (1, 2, 3)
        for index, example in enumerate(examples)
    ]
    trials_file = tmp_path / "trials.jsonl"
    trials_file.write_bytes(answer_lines([(question, answer) for _, question, answer in items]))
    [expected] = evaluated([trials_file], {"PFGEN_DATA_DIR": str(data_dir)})
    random.Random(1).shuffle(items)
    assert {metric: getattr(harness, metric)(items) for metric in METRICS} == expected


def test_the_tasks_folder_holds_every_task() -> None:
    result = run_cli("lm-eval-tasks")
    assert result.returncode == 0, result.stderr
    folder = Path(result.stdout.strip())
    names = {path.stem for path in folder.glob("pfgen_bench_*.yaml")}
    assert names == {
        f"pfgen_bench_{mode}{suffix}"
        for mode in ("completion", "qa", "chat")
        for suffix in ("", "_100")
    }
