"""Byte-for-byte reproduction of the published pfgen-bench files under both `sum()`s: the
core's `py_sum` against from-spec sums, per-answer records against the reference scorer, every
published result.json, page and leaderboard row, and the currency check's `--sources`."""

from __future__ import annotations

import json
import lzma
import math
import os
import random
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_sums import compensated_sum, left_to_right_sum

from cli_runner import run_cli
from pfgen_bench import bench_dir, published_runs, result_dir
from pfgen_fast._core import common as core_common
from pfgen_fast.pfgen.data import Question, load_questions
from pfgen_fast.pfgen.leaderboard import markdown_table, rank_runs
from pfgen_fast.pfgen.pages import SampleCoverage, render_page
from pfgen_fast.pfgen.results import RunResult, load_result
from pfgen_fast.pfgen.scorer import QuestionScorer
from reference_scorer import ReferenceScorer

pytestmark = pytest.mark.slow

DEFAULT, LEGACY = ("default",), ("legacy",)
BOTH = DEFAULT + LEGACY
# Which `sum()` reproduces each published result.json byte for byte (run directory under
# result/): "default" = Python >= 3.12's, "legacy" = Python <= 3.11's (`--legacy-sum`).
RESULT_MODES = {
    "01-ai/Yi-1.5-34B-Chat/39ffa65": LEGACY,
    "01-ai/Yi-1.5-6B/f415b28": BOTH,
    "ABEJA/ABEJA-Qwen2.5-32b-Japanese-v0.1/774318f": LEGACY,
    "AXCXEPT/EZO-Qwen2.5-32B-Instruct/1d8dd53": DEFAULT,
    "MiniMaxAI/MiniMax-Text-01/05c1dce": DEFAULT,
    "MiniMaxAI/MiniMax-Text-01/74d4af0": DEFAULT,
    "Qwen/Qwen-7B/0029a1d": LEGACY,
    "Qwen/Qwen-Max-2025-01-25/fa9558d": LEGACY,
    "Qwen/Qwen-Max/0944f44": LEGACY,
    "Qwen/Qwen1.5-0.5B-Chat/822ff8d": BOTH,
    "Qwen/Qwen1.5-1.8B-Chat/c0f1d5a": BOTH,
    "Qwen/Qwen2-1.5B-Instruct/2419c89": LEGACY,
    "Qwen/Qwen2-72B-Instruct/baf6c82": LEGACY,
    "Qwen/Qwen2.5-14B/174d4f0": DEFAULT,
    "Qwen/Qwen2.5-72B-Instruct/5705734": BOTH,
    "Qwen/Qwen3-8B/667d843": DEFAULT,
    "Qwen/Qwen3-8B/9d7e974": DEFAULT,
    "SakanaAI/TinySwallow-1.5B-Instruct/5e03054": DEFAULT,
    "Xwin-LM/Xwin-LM-13B-V0.2/ebf29f8": LEGACY,
    "anthropic/claude-3-haiku-20240307/9e7a056": LEGACY,
    "anthropic/claude-3-opus-20240229/89cdaa9": LEGACY,
    "anthropic/claude-3-sonnet-20240229/f70c14d": LEGACY,
    "anthropic/claude-opus-4-20250514/2dafa10": DEFAULT,
    "anthropic/claude-opus-4-20250514/d33465d": DEFAULT,
    "cyberagent/calm2-7b-chat-dpo-experimental/b5dd126": LEGACY,
    "cyberagent/calm3-22b-chat/df6c1a9": LEGACY,
    "deepseek-ai/DeepSeek-R1/5abaa36": LEGACY,
    "deepseek-ai/DeepSeek-V3/4a38349": DEFAULT,
    "elyza/Llama-3-ELYZA-JP-70B/74c4304": BOTH,
    "google/gemini-1.0-pro-002/ed29a14": DEFAULT,
    "google/gemini-1.5-flash-002/b868ea0": DEFAULT,
    "google/gemini-1.5-pro-002/873c5b2": DEFAULT,
    "google/gemini-2.0-flash-exp/5f7c6a9": DEFAULT,
    "google/gemini-2.0-flash-thinking-exp-1219/c246287": DEFAULT,
    "google/gemma-2-2b-it/3d0cfea": LEGACY,
    "google/gemma-2-2b-jpn-it/b29c25f": DEFAULT,
    "google/gemma-2-9b-it/d29837e": BOTH,
    "google/text-bison/e793a38": LEGACY,
    "karakuri-ai/karakuri-lm-70b-chat-v0.1/af8483d": LEGACY,
    "lightblue/karasu-1.1B/562832f": BOTH,
    "lightblue/karasu-7B-chat-plus-unleashed/a23509e": BOTH,
    "lightblue/qarasu-14B-chat-plus-unleashed/77d6a1a": BOTH,
    "llm-jp/llm-jp-13b-instruct-full-dolly_en-dolly_ja-ichikara_003_001-oasst_en-oasst_ja-v1.1/1df4c26": LEGACY,  # noqa: E501
    "llm-jp/llm-jp-3-150m-instruct2/bf0549a": BOTH,
    "lmsys/longchat-7b-v1.5-32k/bb1eb53": LEGACY,
    "meta-llama/Llama-2-13b-chat-hf/7b42761": LEGACY,
    "meta-llama/Llama-2-7b-hf/816d082": BOTH,
    "meta-llama/Meta-Llama-3-70B-Instruct/8dfb479": LEGACY,
    "meta-llama/Meta-Llama-3.1-8B-Instruct/e3372e7": BOTH,
    "mistralai/Mistral-Small-24B-Base-2501/5d2ff6e": BOTH,
    "mlx-community/Qwen2.5-72B-Instruct-4bit/d104d89": LEGACY,
    "moneyforward/houou-instruction-7b-v3/735b016": BOTH,
    "ntt/tsuzumi-7b/57c9da3": DEFAULT,
    "openai/chatgpt-4o-latest/84cddfa": DEFAULT,
    "openai/chatgpt-4o-latest/c275a7b": DEFAULT,
    "openai/chatgpt-4o-latest/f029db6": DEFAULT,
    "openai/chatgpt-o1-pro/8e09b44": BOTH,
    "openai/chatgpt-o1/9a61e92": BOTH,
    "openai/chatgpt-o3-mini-high/0551990": DEFAULT,
    "openai/gpt-4-turbo/e96542c": LEGACY,
    "rinna/japanese-gpt-neox-3.6b-instruction-sft-v2/cbe7df3": LEGACY,
    "rinna/nekomata-7b-instruction/2c40b9b": LEGACY,
    "sbintuitions/sarashina1-13b/9c5badf": LEGACY,
    "sbintuitions/sarashina2-70b/250d72d": LEGACY,
    "tokyotech-llm/Swallow-13b-NVE-hf/3f62f8e": LEGACY,
    "tokyotech-llm/Swallow-13b-instruct-hf/d2c2ca9": BOTH,
}
# Published pages (README.md beside result.json) that only one mode reproduces; the others
# are reproduced by both.
PAGE_MODES = {
    "result/Qwen/Qwen-Max-2025-01-25/fa9558d": LEGACY,
    "result/deepseek-ai/DeepSeek-R1/5abaa36": LEGACY,
    "result/moneyforward/houou-instruction-7b-v3/735b016": LEGACY,
    "result/tokyotech-llm/Swallow-13b-instruct-hf/d2c2ca9": LEGACY,
    "result/Qwen/Qwen3-8B/667d843": DEFAULT,
    "result/google/gemini-1.5-pro-002/873c5b2": DEFAULT,
}
SYSTEM_RESULTS = ["data/result.json", "data/final/result.json"]


def same_float(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or struct.pack("<d", a) == struct.pack("<d", b)


floats = (
    st.floats(allow_nan=False, allow_infinity=False)
    | st.floats(min_value=-1.0, max_value=1.0)
    | st.sampled_from([0.0, -0.0, 1e308, -1e308, 1e-308, math.inf, -math.inf, math.nan])
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(floats, max_size=30))
def test_py_sum_matches_both_reference_sums(values: list[float]) -> None:
    assert same_float(core_common.py_sum(values), compensated_sum(values))
    assert same_float(core_common.py_sum(values, legacy=True), left_to_right_sum(values))


@settings(max_examples=2000, deadline=None)
@given(st.lists(floats, max_size=30))
def test_reference_sums_match_this_interpreter(values: list[float]) -> None:
    mine = compensated_sum(values) if sys.version_info >= (3, 12) else left_to_right_sum(values)
    assert same_float(mine, float(sum(values)))


def compensating_python() -> str | None:
    """An interpreter of this machine whose `sum()` compensates (Python >= 3.12): this one, one
    on the PATH, or one of pyenv's versions; None if there is none."""
    candidates = [sys.executable, shutil.which("python3.13"), shutil.which("python3.12")]
    pyenv_versions = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += [str(path) for path in sorted(pyenv_versions.glob("3.1[2-9]*/bin/python3"))]
    for candidate in candidates:
        if candidate is None:
            continue
        check = [candidate, "-c", "import sys; sys.exit(sys.version_info < (3, 12))"]
        if subprocess.run(check, capture_output=True).returncode == 0:
            return candidate
    return None


def test_default_py_sum_is_a_real_python_312_sum() -> None:
    """The default `py_sum` against `sum()` of an actual Python >= 3.12, whatever runs the
    tests: lists of ordinary, tiny, huge, signed-zero, infinite and NaN values."""
    python = compensating_python()
    if python is None:
        pytest.skip("no Python >= 3.12 on this machine")
    rng = random.Random(12)
    specials = [0.0, -0.0, 1e308, -1e308, 1e-308, 5e-324, math.inf, -math.inf, math.nan, 0.1]
    lists = [
        [
            rng.choice(specials)
            if rng.random() < 0.2
            else rng.uniform(-1, 1) * 10 ** rng.randint(-20, 20)
            for _ in range(rng.randint(0, 30))
        ]
        for _ in range(5000)
    ]
    summing = (
        "import sys\n"
        "for line in sys.stdin:\n"
        "    print(float(sum(map(float.fromhex, line.split()))).hex())\n"
    )
    done = subprocess.run(
        [python, "-c", summing],
        input="".join(" ".join(value.hex() for value in values) + "\n" for values in lists),
        capture_output=True,
        text=True,
        check=True,
    )
    sums = [float.fromhex(line) for line in done.stdout.splitlines()]
    assert len(sums) == len(lists)
    for values, expected in zip(lists, sums, strict=True):
        assert same_float(core_common.py_sum(values), expected), values


def test_the_two_sums_differ_where_expected() -> None:
    assert core_common.py_sum([0.1] * 10) == 1.0
    assert core_common.py_sum([0.1] * 10, legacy=True) == 0.9999999999999999
    assert core_common.py_sum([1e100, 1.0, -1e100]) == 1.0
    assert math.copysign(1.0, core_common.py_sum([-0.0])) == 1.0


@pytest.mark.parametrize("question_id", ["Q24", "Q40"])
def test_records_are_byte_identical_to_the_reference_in_both_modes(
    question_id: str, data_dir: Path
) -> None:
    """Published answers whose average differs between the modes, and some others: each mode's
    records, as JSON text, are those of the reference scorer with that `sum()`."""
    question = load_questions(data_dir, {question_id})[question_id]
    scorer = QuestionScorer(question)
    reference = ReferenceScorer.build(question)
    answers = published_answers(question)
    default = scorer.score_arrays(answers).average
    legacy = scorer.score_arrays(answers, legacy_sum=True).average
    differing = [a for a, x, y in zip(answers, default, legacy, strict=True) if x != y]
    assert len(differing) >= 10
    chosen = differing + answers[:: len(answers) // 40]
    for legacy_sum in (False, True):
        mine = scorer.score_json(chosen, legacy_sum=legacy_sum)
        for answer, record in zip(chosen, mine, strict=True):
            expected = json.dumps(reference.score_record(answer, legacy_sum), ensure_ascii=False)
            assert record.decode() == expected, (legacy_sum, answer)


def published_answers(question: Question) -> list[str]:
    """Every published trial answer to `question`."""
    answers = []
    for run in published_runs():
        with lzma.open(run / "trials.jsonl.xz", "rt", encoding="utf-8") as lines:
            answers += [
                trial["answer"]
                for trial in map(json.loads, lines)
                if trial["question"] == question.question
            ]
    return answers


def copy_run(run: Path, root: Path) -> Path:
    target = root / run.relative_to(bench_dir())
    target.mkdir(parents=True)
    shutil.copy(run / "trials.jsonl.xz", target)
    if (run / "config.json").exists():
        shutil.copy(run / "config.json", target)
    return target


@pytest.fixture(scope="module")
def evaluated(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every published run evaluated from scratch in each mode."""
    roots = {}
    for mode, flags in (("default", []), ("legacy", ["--legacy-sum"])):
        root = tmp_path_factory.mktemp(mode)
        for run in published_runs():
            copy_run(run, root)
        done = run_cli("eval", "--data", bench / "data", *flags, cwd=root, timeout=900)
        assert done.returncode == 0, done.stderr
        roots[mode] = root
    return roots


def test_every_published_result_is_reproduced_in_its_mode(evaluated: dict[str, Path]) -> None:
    runs = {str(run.relative_to(result_dir())): run for run in published_runs()}
    assert sorted(runs) == sorted(RESULT_MODES)
    wrong = []
    for name, run in runs.items():
        published = (run / "result.json").read_bytes()
        relative = run.relative_to(bench_dir()) / "result.json"
        reproduced = tuple(
            mode for mode in BOTH if (evaluated[mode] / relative).read_bytes() == published
        )
        if reproduced != RESULT_MODES[name]:
            wrong.append(f"{name}: {reproduced} instead of {RESULT_MODES[name]}")
    assert wrong == []


def test_every_published_page_is_reproduced_in_its_mode(bench: Path, data_dir: Path) -> None:
    paths = [run / "result.json" for run in published_runs()]
    runs = [load_result(path) for path in paths + [bench / p for p in SYSTEM_RESULTS]]
    coverage = SampleCoverage(runs, load_questions(data_dir))
    wrong = []
    for run in runs:
        published = (run.path.parent / "README.md").read_bytes()
        reproduced = tuple(
            mode
            for mode, legacy_sum in (("default", False), ("legacy", True))
            if render_page(run, coverage, legacy_sum).encode() == published
        )
        name = str(run.path.parent.relative_to(bench))
        if reproduced != PAGE_MODES.get(name, BOTH):
            wrong.append(f"{name}: {reproduced}")
    assert wrong == []


def test_published_leaderboard_is_reproduced_row_for_row_by_default(bench: Path) -> None:
    paths = [run / "result.json" for run in published_runs()]
    runs = [load_result(path) for path in paths + [bench / p for p in SYSTEM_RESULTS]]
    ours = markdown_table(rank_runs(runs), bench).splitlines()[2:]
    text = (bench / "README.md").read_text(encoding="utf-8").splitlines()
    start = text.index("<!-- leaderboard -->")
    published = [row for row in text[start + 3 : text.index("<!-- /leaderboard -->")] if row]

    def without_rank(row: str) -> str:
        return row[row.index("</code>") :]

    links = {row[row.index("](") :] for row in ours}
    kept = [without_rank(row) for row in published if row[row.index("](") :] in links]
    assert len(ours) == len(runs)
    assert [without_rank(row) for row in ours] == kept


def test_sources_and_sum_are_recorded_and_respected_by_the_currency_check(
    bench: Path, tmp_path: Path
) -> None:
    run = copy_run(result_dir() / "Qwen" / "Qwen-7B" / "0029a1d", tmp_path)
    result = run / "result.json"
    data = ("--data", bench / "data")

    def evaluate(*flags: str) -> str:
        done = run_cli("eval", *data, *flags, run / "trials.jsonl.xz", cwd=tmp_path, timeout=900)
        assert done.returncode == 0, done.stderr
        return done.stderr

    assert "1 scored" in evaluate()
    assert "sources" not in json.loads(result.read_bytes())
    assert "1 already current" in evaluate()
    assert "1 scored" in evaluate("--sources", "P")
    only_p = json.loads(result.read_bytes())
    assert only_p["sources"] == ["P"]
    assert list(only_p)[:3] == ["input_hash", "metadata_hash", "sources"]
    assert "1 already current" in evaluate("--sources", "P")
    assert "1 scored" in evaluate()
    assert "sources" not in json.loads(result.read_bytes())
    assert "1 scored" in evaluate("--legacy-sum")
    assert "1 already current" in evaluate("--legacy-sum")
    assert "1 scored" in evaluate()


def test_report_and_score_take_legacy_sum(bench: Path, tmp_path: Path) -> None:
    """`report --legacy-sum` writes a page only the legacy `sum()` reproduces; `score
    --legacy-sum` writes an answer's legacy record."""
    name = "result/deepseek-ai/DeepSeek-R1/5abaa36"
    assert PAGE_MODES[name] == LEGACY
    run = tmp_path / name
    run.mkdir(parents=True)
    shutil.copy(bench / name / "result.json", run)
    published = (bench / name / "README.md").read_bytes()
    for flags, same in (((), False), (("--legacy-sum", "--force"), True)):
        done = run_cli("report", "--data", str(bench / "data"), *flags, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert ((run / "README.md").read_bytes() == published) is same

    question = load_questions(bench / "data", {"Q40"})["Q40"]
    scorer = QuestionScorer(question)
    answers = published_answers(question)
    legacy = scorer.score_json(answers, legacy_sum=True)
    default = scorer.score_json(answers)
    index = next(i for i, record in enumerate(default) if record != legacy[i])
    line = json.dumps({"question": question.question, "answer": answers[index]})
    (tmp_path / "answers.jsonl").write_text(line + "\n", encoding="utf-8")
    for flags, record in (((), default[index]), (("--legacy-sum",), legacy[index])):
        done = run_cli(
            "score", "answers.jsonl", "--data", str(bench / "data"), *flags, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.encode() == line[:-1].encode() + b', "scores": ' + record + b"}\n"


def test_leaderboard_ties_follow_the_result_paths_as_strings() -> None:
    """Equal scores keep the order of `sorted()` of the paths as strings: "-" sorts before
    "/", so a longer model name sharing a prefix comes first (as Path objects it would not)."""
    paths = [
        Path("result/karasu-7B-chat/abc/result.json"),
        Path("result/karasu-7B-chat-plus-unleashed/def/result.json"),
        Path("result/other/ghi/result.json"),
    ]
    assert sorted(paths) == paths
    config = {"model": "m", "mode": "qa"}
    runs = [
        RunResult(path, "sha1", {"score": score, "config": config})
        for path, score in zip(paths, [0.5, 0.5, 0.4], strict=True)
    ]
    entries = rank_runs(runs)
    assert [entry.run.path for entry in entries] == [paths[1], paths[0], paths[2]]
    assert [entry.rank for entry in entries] == [1, 2, 3]
