"""The site command without a browser: what OUT holds, Japanese text written as UTF-8, the
marks of the page's contract, and bad input (one line each, the site still written)."""

from __future__ import annotations

import json
import re
import shutil
import statistics
from pathlib import Path

import pytest
from site_inputs import (
    LCTG_ANSWER,
    MM_ANSWER,
    MM_REVISION,
    MM_TASK,
    PFGEN_RUNS,
    bench_dir,
    make_judge,
    make_lctg,
    make_mm,
    make_pfgen,
    mm_text,
)

from cli_runner import run_cli


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("inputs")
    results, dataset = make_mm(root)
    return {
        "pfgen": make_pfgen(root, bench_dir()),
        "lctg": make_lctg(root),
        "mm": results,
        "mm-data": dataset,
        "judge": make_judge(root),
    }


def site_args(inputs: dict[str, Path], out: Path) -> list[str | Path]:
    return [
        "site",
        out,
        "--pfgen",
        inputs["pfgen"],
        "--lctg",
        inputs["lctg"],
        "--mm",
        inputs["mm"],
        "--mm-data",
        f"{MM_TASK}={inputs['mm-data']}",
        "--judge",
        inputs["judge"],
        "--title",
        "結果の一覧",
    ]


def test_the_site_holds_every_benchmark(inputs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "site"
    done = run_cli(*site_args(inputs, out))
    assert done.returncode == 0, done.stderr
    index = (out / "index.html").read_text(encoding="utf-8")
    for key in ("pfgen", "lctg", "mm", "judge"):
        assert f'data-leaderboard="{key}"' in index
        assert f'data-show="{key}"' in index
    for run in PFGEN_RUNS:
        assert f'data-run="{run}"' in index
    assert 'data-run="ja-vg-vqa-500/org__vlm-large"' in index
    assert MM_REVISION in index  # a run's settings: its manifest and run_info.json
    assert "<title>結果の一覧</title>" in index
    pages = {p.name: p.read_text(encoding="utf-8") for p in (out / "runs").glob("*.js")}
    assert len(pages) == 3 + 1 + 2 + 1 + 1  # the run pages and the mm task's shared items
    everything = "".join(pages.values())
    assert MM_ANSWER in everything and LCTG_ANSWER in everything
    assert '"物体"' in everything and '"category":null' not in everything.replace(" ", "")
    assert not re.search(r"\\u[0-9a-fA-F]{4}", everything + index)
    assert len(list((out / "images").rglob("*.png"))) == 2
    # nothing in OUT points outside it
    assert not re.search(r"(src|href)=\"(https?:)?//", index)


def test_several_runs_of_one_model_show_their_spread(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    again = tmp_path / "again"
    shutil.copytree(inputs["mm"], again)
    evaluation = again / MM_TASK / "org__vlm-large" / "evaluation.jsonl"
    evaluation.write_text(json.dumps({"rougel": {"overall_score": 0.9, "details": {}}}) + "\n")
    out = tmp_path / "out"
    assert run_cli("site", out, "--mm", inputs["mm"], "--mm", again).returncode == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    spread = statistics.stdev([0.7, 0.9])
    cells = re.findall(r'data-column="rougel" data-value="([0-9.]+)" data-std="([0-9.]+)"', index)
    # the small model scored the same twice: a spread of 0
    assert sorted(cells) == [
        ("0.4", "0.0"),
        ("0.4", "0.0"),
        ("0.7", str(spread)),
        ("0.9", str(spread)),
    ]


def test_a_run_page_is_a_script_that_cannot_close_a_script_element(tmp_path: Path) -> None:
    results = tmp_path / "mm" / "task" / "model"
    results.mkdir(parents=True)
    row = {"question_id": "1", "text": "</script><b>x</b>", "answer": "a", "input_text": "q"}
    (results / "prediction.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    done = run_cli("site", tmp_path / "out", "--mm", tmp_path / "mm")
    assert done.returncode == 0, done.stderr
    scripts = [p.read_text(encoding="utf-8") for p in (tmp_path / "out" / "runs").glob("*.js")]
    assert len(scripts) == 2  # the run page and the task's shared items
    text = "".join(scripts)
    assert "</script>" not in text and "<\\/script>" in text


def test_mm_answers_are_written_once_however_many_models(tmp_path: Path) -> None:
    sizes = []
    for count in (2, 6):
        models = tuple(f"org/vlm-{n}" for n in range(count))
        results, dataset = make_mm(tmp_path / str(count), models)
        out = tmp_path / str(count) / "out"
        done = run_cli("site", out, "--mm", results, "--mm-data", f"{MM_TASK}={dataset}")
        assert done.returncode == 0, done.stderr
        written = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
        for number, model in enumerate(models):
            for qid in ("q1", "q2"):
                assert written.count(mm_text(number, model, qid).encode()) == 1
        sizes.append(sum(p.stat().st_size for p in (out / "runs").iterdir()))
    # each model adds its answers and its page, not another copy of every answer
    assert sizes[1] < 3.5 * sizes[0], sizes


def test_a_folder_with_nothing_recognised_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = run_cli("site", tmp_path / "out", "--mm", tmp_path / "empty")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "prediction.jsonl" in lines[0] and str(tmp_path / "empty") in lines[0]
    assert not (tmp_path / "out").exists()
    assert list(tmp_path.iterdir()) == [tmp_path / "empty"]  # no temporary folder left


def test_broken_files_are_named_and_left_out(inputs: dict[str, Path], tmp_path: Path) -> None:
    mm = tmp_path / "mm"
    bad_run = mm / MM_TASK / "broken"
    bad_run.mkdir(parents=True)
    (bad_run / "prediction.jsonl").write_text('{"question_id": "q1", "text": \n', "utf-8")
    good_run = mm / MM_TASK / "good"
    good_run.mkdir()
    good = {"question_id": "q1", "text": "よい答え", "answer": "a", "input_text": "q"}
    (good_run / "prediction.jsonl").write_text(json.dumps(good) + "\n", "utf-8")
    pfgen = tmp_path / "pfgen"
    bad_result = pfgen / "result" / "org" / "model" / "abc"
    bad_result.mkdir(parents=True)
    (bad_result / "result.json").write_text("{not json", "utf-8")
    out = tmp_path / "out"
    done = run_cli("site", out, "--mm", mm, "--pfgen", pfgen)
    assert done.returncode == 1
    warnings = done.stderr.strip().splitlines()
    assert any(str(bad_run / "prediction.jsonl") + ":1" in w for w in warnings), warnings
    assert any(str(bad_result / "result.json") in w for w in warnings), warnings
    assert all(w.startswith("warning: ") for w in warnings)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert f'data-run="{MM_TASK}/good"' in index
    assert "broken" not in index and 'data-leaderboard="pfgen"' not in index


def test_a_site_replaces_the_one_before_and_no_other_folder(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "site"
    assert run_cli("site", out, "--judge", inputs["judge"]).returncode == 0
    assert run_cli("site", out, "--lctg", inputs["lctg"]).returncode == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'data-leaderboard="lctg"' in index and 'data-leaderboard="judge"' not in index
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine", "utf-8")
    done = run_cli("site", other, "--lctg", inputs["lctg"])
    assert done.returncode == 1 and "not a site" in done.stderr
    assert (other / "keep.txt").read_text("utf-8") == "mine"
