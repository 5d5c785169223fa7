"""`plot` and `stability` on a few published runs: files written, pictures not blank, r > 0.99."""

from __future__ import annotations

import json
import lzma
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from cli_runner import run_cli
from pfgen_bench import bench_dir, data_of_checkout

pytestmark = pytest.mark.slow

# Small runs (10 trials each), completion and chat.
RUNS = [
    "MiniMaxAI/MiniMax-Text-01/74d4af0",
    "Qwen/Qwen3-8B/667d843",
    "Qwen/Qwen3-8B/9d7e974",
    "anthropic/claude-opus-4-20250514/d33465d",
]


@pytest.fixture
def checkout(bench: Path, tmp_path: Path) -> Path:
    """The small runs (result.json, trials, config) and the system rows, as in a checkout."""
    for name in RUNS:
        source = bench_dir() / "result" / name
        target = tmp_path / "result" / name
        target.mkdir(parents=True)
        for file in ("result.json", "trials.jsonl.xz", "config.json"):
            shutil.copy(source / file, target / file)
    (tmp_path / "data" / "final").mkdir(parents=True)
    shutil.copy(data_of_checkout() / "result.json", tmp_path / "data" / "result.json")
    shutil.copy(
        data_of_checkout() / "final" / "result.json", tmp_path / "data" / "final" / "result.json"
    )
    return tmp_path


def assert_not_blank(png: Path) -> None:
    import matplotlib.image

    pixels = matplotlib.image.imread(png)
    assert pixels.shape[0] > 200 and pixels.shape[1] > 200
    assert float(np.std(pixels[..., :3])) > 0.05  # more than a white page
    # Points are drawn in colour, not only black axes.
    saturation = pixels[..., :3].max(axis=2) - pixels[..., :3].min(axis=2)
    assert (saturation > 0.3).sum() > 50


def test_plot_writes_every_figure_and_stability_r(checkout: Path) -> None:
    out = checkout / "figures"
    done = run_cli("plot", "--data", str(data_of_checkout()), "--out", str(out), cwd=checkout)
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in out.iterdir())
    stems = [
        "fig1_fluency_truthfulness",
        "fig2_fluency_helpfulness",
        "fig3_truthfulness_helpfulness",
        "fig4_stability_P_S",
        "fig5_stability_P_T",
        "fig6_stability_S_T",
        "score_length",
    ]
    assert names == sorted(f"{stem}.{ext}" for stem in stems for ext in ("png", "svg"))
    for stem in stems:
        assert_not_blank(out / f"{stem}.png")
        assert (out / f"{stem}.svg").read_text().lstrip().startswith("<?xml")
    values = re.findall(r"([PST]) vs ([PST]): r = ([0-9.]+)", done.stdout)
    assert [(a, b) for a, b, _ in values] == [("P", "S"), ("P", "T"), ("S", "T")]
    assert all(float(r) > 0.99 for _, _, r in values)


def test_stability_command_prints_three_r_and_skips_runs_without_trials(checkout: Path) -> None:
    (checkout / "result" / RUNS[0] / "trials.jsonl.xz").unlink()
    done = run_cli("stability", "--data", str(data_of_checkout()), cwd=checkout)
    assert done.returncode == 0, done.stderr
    values = [float(r) for r in re.findall(r"r = ([0-9.]+)", done.stdout)]
    assert len(values) == 3 and all(r > 0.99 for r in values)
    assert "skipped:" in done.stderr and "no trials.jsonl.xz" in done.stderr
    assert "3 runs scored" in done.stderr


def test_stability_names_the_line_of_an_unknown_question(checkout: Path) -> None:
    trials = checkout / "result" / RUNS[1] / "trials.jsonl.xz"
    lines = lzma.decompress(trials.read_bytes()).splitlines(keepends=True)
    record = json.loads(lines[4])
    record["question"] = "存在しない質問"
    lines[4] = json.dumps(record, ensure_ascii=False).encode() + b"\n"
    trials.write_bytes(lzma.compress(b"".join(lines)))
    done = run_cli("stability", "--data", str(data_of_checkout()), cwd=checkout)
    assert done.returncode == 0, done.stderr
    assert (
        f'{RUNS[1]}/trials.jsonl.xz:5: field "question": not a question of the data: '
        "'存在しない質問'" in done.stderr
    )
    assert "3 runs scored" in done.stderr


def test_plot_without_stability_needs_no_trials_and_names_bad_results(checkout: Path) -> None:
    (checkout / "result" / RUNS[1] / "result.json").write_text("[]")
    out = checkout / "figures"
    done = run_cli("plot", "--no-stability", "--out", str(out), cwd=checkout)
    assert done.returncode == 1
    assert f"result/{RUNS[1]}/result.json: expected a JSON object, got" in done.stderr
    assert "Traceback" not in done.stderr
    assert len(list(out.glob("*.png"))) == 4
    assert_not_blank(out / "score_length.png")


def test_scores_that_do_not_vary_give_no_r_and_no_stability_figure(bench: Path, tmp_path: Path):
    for copy in ("a", "b", "c"):
        shutil.copytree(bench_dir() / "result" / RUNS[1], tmp_path / "result" / "org" / copy)
    data = str(data_of_checkout())
    stability = run_cli("stability", "--data", data, cwd=tmp_path)
    out = tmp_path / "figures"
    plot = run_cli("plot", "--data", data, "--out", str(out), cwd=tmp_path)
    for done in (stability, plot):
        assert done.returncode == 1
        assert done.stdout == ""
        assert "nan" not in done.stderr and "Warning" not in done.stderr
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 3
        assert errors[0].startswith(
            "error: P vs S: no Pearson r: the 3 runs' scores against P are all"
        )
        assert errors[0].endswith("(a correlation needs scores that vary)")
    assert sorted(p.stem for p in out.glob("*.png")) == [
        "fig1_fluency_truthfulness",
        "fig2_fluency_helpfulness",
        "fig3_truthfulness_helpfulness",
        "score_length",
    ]


def test_plot_and_stability_name_the_runs_and_the_scores_behind_each_r(checkout: Path) -> None:
    """A run without a trials file is drawn by `plot` (from result.json) but not scored by
    `stability` (from the answers): their r differ, and so do their labels."""
    (checkout / "result" / RUNS[0] / "trials.jsonl.xz").unlink()
    data = str(data_of_checkout())
    plot = run_cli("plot", "--data", data, "--out", str(checkout / "figures"), cwd=checkout)
    stability = run_cli("stability", "--data", data, cwd=checkout)
    assert plot.returncode == 0 and stability.returncode == 0, plot.stderr + stability.stderr
    pattern = r"([PST]) vs ([PST]): r = [0-9.]+ \((.*)\)"
    assert {basis for _, _, basis in re.findall(pattern, plot.stdout)} == {
        "4 runs, from result.json"
    }
    assert {basis for _, _, basis in re.findall(pattern, stability.stdout)} == {
        "3 runs, every answer scored"
    }
