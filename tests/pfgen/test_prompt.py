"""`prompt` against a reference written from generation.md alone."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_cli
from pfgen_fast.pfgen.prompts import build_task, load_examples

INSTRUCTION = {
    "chat": "例と同様の文体及び文字数で、ユーザの質問に1行で答えてください。\n\n",
    "qa": "例と同様の文体及び文字数で、質問に1行で答えてください。\n\n",
    "completion": "",
}

# --prefix as typed -> the text the published runner puts before the prompt.
PREFIXES = [
    ("", ""),
    ("前置き\\n", "前置き\n"),
    ("<s>\\t[INST] ", "<s>\t[INST] "),
    ("a\\\\nb\\n\\n", "a\\nb\n\n"),
]


def reference_task(
    examples: list[dict[str, str]],
    question: str,
    mode: str,
    trial: int,
    num_examples: int = 20,
    prefix: str = "",
    seed: str = "",
) -> dict[str, Any]:
    """generation.md, "Prompt of one task", step by step."""
    others = [e for e in examples if e["question"] != question]
    others = sorted(
        others,
        key=lambda e: hashlib.sha1(f"{seed}::{trial}::{e['question']}".encode()).hexdigest(),
    )[:num_examples]
    block = "".join(f"Q: {e['question']}\nA: {e['answer']}\n\n" for e in others)
    system = INSTRUCTION[mode] + "## 回答例\n" + block.strip()
    user = "Q: " + question + "\n" + ("A:" if mode == "completion" else "")
    task: dict[str, Any] = {"question": question}
    if mode == "chat":
        task["system_prompt"] = prefix + system.strip()
        task["user_prompt"] = user.strip()
    elif mode == "qa":
        task["prompt"] = prefix + system.strip() + "\n\n## 質問\n" + user.strip()
    else:
        task["prompt"] = prefix + system.strip() + "\n\n" + user.strip()
    task["seed"] = int(hashlib.sha1(f"{seed}::{trial}".encode()).hexdigest(), 16) % 2**31
    return task


def read_examples(data_dir: Path) -> list[dict[str, str]]:
    lines = (data_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["completion", "qa", "chat"])
@pytest.mark.parametrize(
    ("trial", "seed", "prefix", "num_examples"),
    [
        (1, "", PREFIXES[0], 20),
        (2, "s1", PREFIXES[1], 20),
        (7, "", PREFIXES[2], 5),
        (100, "日本語", PREFIXES[3], 49),
    ],
)
def test_prompt_follows_the_protocol(data_dir: Path, mode, trial, seed, prefix, num_examples):
    examples = read_examples(data_dir)
    typed, text = prefix
    result = run_cli(
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
        typed,
        "--num-examples",
        num_examples,
    )
    assert result.returncode == 0, result.stderr
    expected = [
        reference_task(examples, e["question"], mode, trial, num_examples, text, seed)
        for e in examples
    ]
    expected_lines = [json.dumps(task, ensure_ascii=False) for task in expected]
    assert result.stdout.splitlines() == expected_lines  # key order and escaping included


@pytest.mark.parametrize("mode", ["completion", "qa", "chat"])
def test_every_trial_and_seed_follows_the_protocol(data_dir: Path, mode):
    examples = read_examples(data_dir)
    loaded = load_examples(data_dir / "questions.jsonl")
    for seed in ("", "1", "seed"):
        for trial in range(1, 21):
            for number in (0, 25, 49):
                question = examples[number]["question"]
                expected = reference_task(examples, question, mode, trial, 20, "", seed)
                assert build_task(loaded, question, mode, trial, seed=seed) == expected


def test_examples_exclude_the_question_and_vary_by_trial(data_dir: Path):
    examples = read_examples(data_dir)
    question = examples[0]["question"]
    first, second = (reference_task(examples, question, "qa", t) for t in (1, 2))
    loaded = load_examples(data_dir / "questions.jsonl")
    ours = build_task(loaded, question, "qa", 1)
    assert ours == first and ours["prompt"] != second["prompt"]
    assert ours["prompt"].count("\nA: ") == 20
    assert ours["prompt"].endswith(f"## 質問\nQ: {question}")
    assert f"Q: {question}\nA:" not in ours["prompt"]
    everything = build_task(loaded, question, "completion", 1, num_examples=100)
    assert everything["prompt"].count("\nA: ") == len(examples) - 1


@pytest.mark.parametrize("prefix", ["\\u3042", "abc\\", "\\x4"])
def test_unusable_prefix_escape_is_a_clear_error(data_dir: Path, prefix):
    result = run_cli("prompt", "--data", data_dir, "--mode", "qa", "--trial", 1, "--prefix", prefix)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: prefix") and result.stdout == ""


def test_bad_questions_file_names_file_and_line(tmp_path: Path):
    good = json.dumps({"question": "問1", "answer": "答1"}, ensure_ascii=False)
    (tmp_path / "questions.jsonl").write_text(
        good + "\n" + '{"question": "問2"}\n', encoding="utf-8"
    )
    result = run_cli("prompt", "--data", tmp_path, "--mode", "qa", "--trial", 1)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f'{tmp_path / "questions.jsonl"}:2: field "answer": missing' in result.stderr

    missing = run_cli("prompt", "--data", tmp_path / "nowhere", "--mode", "qa", "--trial", 1)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert "questions.jsonl: cannot read" in missing.stderr


def test_bad_arguments_are_clear_errors(data_dir: Path):
    for args in (["--mode", "poetry", "--trial", 1], ["--mode", "qa", "--trial", 0]):
        result = run_cli("prompt", "--data", data_dir, *args)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
