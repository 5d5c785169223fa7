"""Per-run pages and the leaderboard against the published ones, and the `report` command."""

from __future__ import annotations

import itertools
import json
import random
import re
import shutil
from pathlib import Path

import numpy as np
import polars as pl

from cli_runner import run_cli
from pfgen_bench import bench_dir, data_of_checkout, published_runs
from pfgen_fast.pfgen.data import load_questions
from pfgen_fast.pfgen.leaderboard import markdown_table, rank_runs, replace_table
from pfgen_fast.pfgen.pages import (
    ESCAPES,
    SampleCoverage,
    mark_texts,
    marked_texts,
    render_page,
)
from pfgen_fast.pfgen.results import RunResult, load_result

SMALL_RUN = "sbintuitions/sarashina1-13b"


def escape_text(text: str) -> str:
    """A text escaped character by character as the pages escape it: the reference of
    `mark_texts`' escapes."""
    return "".join(ESCAPES.get(char, char) for char in text)


def result_paths() -> list[Path]:
    system_results = [
        data_of_checkout() / "result.json",
        data_of_checkout() / "final" / "result.json",
    ]
    return [run / "result.json" for run in published_runs()] + system_results


def test_every_published_page_is_reproduced_byte_for_byte(bench: Path, data_dir: Path) -> None:
    paths = result_paths()
    assert len(paths) == 68
    runs = [load_result(path) for path in paths]
    coverage = SampleCoverage(runs, load_questions(data_dir))
    # Under one of the two `sum()`s; test_sum_modes.py names which reproduces which page.
    different = [
        str(run.path)
        for run in runs
        if (run.path.parent / "README.md").read_bytes()
        not in (render_page(run, coverage).encode(), render_page(run, coverage, True).encode())
    ]
    assert different == []


def published_rows() -> dict[str, str]:
    """The published leaderboard rows by their link, without the rank cell."""
    text = (bench_dir() / "README.md").read_text(encoding="utf-8")
    table = text[text.index("<!-- leaderboard -->") : text.index("<!-- /leaderboard -->")]
    rows = {}
    for line in table.splitlines()[3:]:
        if line:
            link = re.search(r"\]\((.*?)\)", line)
            assert link is not None
            rows[link.group(1)] = line[line.index("</code>") :]
    return rows


def test_leaderboard_rows_and_order_match_the_published_table(bench: Path) -> None:
    runs = [load_result(path) for path in result_paths()]
    table = markdown_table(rank_runs(runs), bench).splitlines()
    published = (bench / "README.md").read_text(encoding="utf-8").splitlines()
    start = published.index("<!-- leaderboard -->")
    assert table[:2] == published[start + 1 : start + 3]  # header and separator
    rows = published_rows()
    ours = {}
    for line in table[2:]:
        link = re.search(r"\]\((.*?)\)", line)
        assert link is not None
        ours[link.group(1)] = line[line.index("</code>") :]
    assert ours == {link: rows[link] for link in ours}
    # Our order is the published order restricted to these runs; system rows have no rank.
    assert list(ours) == [link for link in rows if link in ours]
    assert table[2].startswith("| <code>N/A</code>") and "👑 system/ground-truth" in table[2]
    assert table[3].startswith("| <code>1</code>")


def test_leaderboard_cuts_long_names_and_replaces_between_markers(tmp_path: Path) -> None:
    path = tmp_path / "run" / "result.json"
    path.parent.mkdir()
    data = json.loads((published_runs()[0] / "result.json").read_bytes())
    data["config"]["model"] = "org/" + "x" * 60
    path.write_text(json.dumps(data))
    table = markdown_table(rank_runs([load_result(path)]), tmp_path)
    assert f"org/{'x' * 33}...](run/README.md)" in table
    readme = "intro\n<!-- leaderboard -->\nold table\n<!-- /leaderboard -->\nrest\n"
    replaced = replace_table(readme, table, tmp_path / "README.md")
    assert replaced == f"intro\n<!-- leaderboard -->\n{table}\n<!-- /leaderboard -->\nrest\n"


def test_markup_of_short_empty_and_control_texts(data_dir: Path) -> None:
    texts = ["", "つ", "つるかめ算は、\n算数(1+1)の<問題>です。", "\x01&"]
    samples = {"Q02": {"samples": [{"answer": text} for text in texts]}}
    run = RunResult(Path("run/result.json"), "", {"questions": samples})
    coverage = SampleCoverage([run], load_questions(data_dir, {"Q02", "Q03"}))
    marked = marked_texts([("Q02", texts[:2]), ("Q03", []), ("Q02", texts[2:])], coverage)
    assert marked[0] == ""
    assert marked[1] == "<s>つ</s>"  # no 3-gram at all: rare
    assert marked[2].startswith("<b>つるかめ算は、</b>")
    assert "&#92;n" in marked[2] and "&#40;1&#43;1&#41;" in marked[2] and "&lt;" in marked[2]
    assert marked[3] == "<s>&#92;x01&amp;</s>"
    assert escape_text("a.b") == "a&#46;b"


def test_markup_matches_marking_each_character() -> None:
    """Runs, escapes (also at the edges of runs), astral characters and empty texts, against
    grouping the characters of each text by kind one by one."""
    texts = ["", "a&<b>\n c", "𠮷.\x7f𠮷*", "", "-", "plain text", "x"]
    rng = random.Random(1)
    for _ in range(200):
        kinds = [rng.choice((-1, 0, 1)) for _ in range(sum(len(text) for text in texts))]
        expected = []
        start = 0
        for text in texts:
            pieces = []
            pairs = zip(text, kinds[start : start + len(text)], strict=True)
            start += len(text)
            for kind, group in itertools.groupby(pairs, lambda pair: pair[1]):
                body = escape_text("".join(char for char, _ in group))
                pieces.append({1: f"<b>{body}</b>", -1: f"<s>{body}</s>", 0: body}[kind])
            expected.append("".join(pieces))
        assert mark_texts(texts, np.array(kinds, dtype=np.int8)) == expected
    assert mark_texts([], np.zeros(0, dtype=np.int8)) == []
    assert mark_texts(["", ""], np.zeros(0, dtype=np.int8)) == ["", ""]


def test_page_of_a_question_without_samples(data_dir: Path) -> None:
    path = next((bench_dir() / "result" / SMALL_RUN).glob("*/result.json"))
    data = json.loads(path.read_bytes())
    data["questions"]["Q01"]["samples"] = []
    run = RunResult(path, "", data)
    page = render_page(run, SampleCoverage([run], load_questions(data_dir)))
    assert '<a name="Q01"></a>' in page and "<dl>\n</dl>" in page


def copy_run(tmp_path: Path, name: str) -> Path:
    source = bench_dir() / "result" / name
    run_dir = next(source.glob("*/result.json")).parent
    target = tmp_path / "result" / name / run_dir.name
    target.mkdir(parents=True)
    shutil.copy(run_dir / "result.json", target / "result.json")
    return target


def test_report_command_writes_pages_skips_current_ones_and_names_bad_files(
    bench: Path, tmp_path: Path
) -> None:
    good = copy_run(tmp_path, SMALL_RUN)
    broken = tmp_path / "result" / "broken" / "x"
    broken.mkdir(parents=True)
    (broken / "result.json").write_text("{not json")
    partial = tmp_path / "result" / "partial" / "x"
    partial.mkdir(parents=True)
    data = json.loads((good / "result.json").read_bytes())
    del data["questions"]["Q03"]["samples"][1]["scores"]["average"]
    (partial / "result.json").write_text(json.dumps(data, ensure_ascii=False))
    lacking = tmp_path / "result" / "lacking" / "x"
    lacking.mkdir(parents=True)
    del data["score_std"]
    (lacking / "result.json").write_text(json.dumps(data, ensure_ascii=False))

    done = run_cli("report", "--data", str(data_of_checkout()), cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "error: result/broken/x/result.json:1: not valid JSON" in done.stderr
    assert 'field "score_std": missing' in done.stderr
    assert 'field "questions.Q03.samples[1].scores.average": missing' in done.stderr
    published = next((bench_dir() / "result" / SMALL_RUN).glob("*/README.md"))
    assert (good / "README.md").read_bytes() == published.read_bytes()
    assert not (broken / "README.md").exists() and not (partial / "README.md").exists()
    assert not list(tmp_path.glob("result/**/.*.tmp"))
    assert "sarashina1-13b" in done.stdout  # the terminal table

    again = run_cli(
        "report",
        "--data",
        str(data_of_checkout()),
        "result/sbintuitions/**/result.json",
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    assert "already current" in again.stderr


def test_report_command_replaces_the_readme_table_and_exports(tmp_path: Path) -> None:
    copy_run(tmp_path, SMALL_RUN)
    copy_run(tmp_path, "Qwen/Qwen-7B")
    readme = tmp_path / "README.md"
    readme.write_text("# Board\n\n<!-- leaderboard -->\n<!-- /leaderboard -->\n\nend\n")
    for file_format in ("csv", "parquet", "json"):
        output = tmp_path / f"board.{file_format}"
        done = run_cli(
            "report",
            "--data",
            str(data_of_checkout()),
            "--readme",
            "README.md",
            "--format",
            file_format,
            "--table",
            str(output),
            "result/**/result.json",
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        frame = {"csv": pl.read_csv, "parquet": pl.read_parquet, "json": pl.read_json}[file_format](
            output
        )
        assert frame.height == 2
        assert frame["model"].to_list() == ["sbintuitions/sarashina1-13b", "Qwen/Qwen-7B"]
        assert {"fluency_P", "fluency_R", "truthfulness_T", "score"} <= set(frame.columns)
    text = readme.read_text()
    assert "| <code>1</code> | <code>0.6737 (±0.0276/√100)</code> | <code>[🟢 sbintuitions" in text
    assert "(result/Qwen/Qwen-7B/0029a1d/README.md)" in text
    assert text.endswith("|\n\n<!-- /leaderboard -->\n\nend\n")


def test_readme_without_markers_is_an_error_and_stays_untouched(tmp_path: Path) -> None:
    copy_run(tmp_path, SMALL_RUN)
    readme = tmp_path / "README.md"
    readme.write_text("# No markers here\n")
    done = run_cli(
        "report", "--data", str(data_of_checkout()), "--readme", "README.md", cwd=tmp_path
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("error: ")
    assert "no leaderboard markers" in done.stderr and "Traceback" not in done.stderr
    assert readme.read_text() == "# No markers here\n"
