"""Every command as a user meets it: each test reproduces one thing a user ran into, with real
files and the CLI run in a subprocess (signals included)."""

from __future__ import annotations

import json
import lzma
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len
from user_facing_fixtures import (
    LONG_MODEL,
    answer_lines,
    assert_one_line_error,
    checkout,
    cli_env,
    run_cli,
    write_data,
    write_run,
)

ROOT = Path(__file__).resolve().parents[2]


# A Qxx.json that is a directory.
def test_data_verify_names_a_question_file_that_is_a_directory(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data")
    (data / "Q01.json").unlink()
    (data / "Q01.json").mkdir()
    result = run_cli("data", "verify", data, cwd=tmp_path)
    assert_one_line_error(result)
    assert f"{data / 'Q01.json'}: not a file" in result.stderr


# A base URL that is not an HTTP URL.
@pytest.mark.parametrize("url", ["notaurl", "ftp://example.org/v1", "http://"])
def test_generate_rejects_a_base_url_that_is_not_http(tmp_path: Path, url: str) -> None:
    result = run_cli(
        "generate", "--model", "m", "--mode", "qa", "--base-url", url, "--out", "out", cwd=tmp_path
    )
    assert_one_line_error(result, "--base-url", status=2)
    assert not (tmp_path / "out").exists()


# --sources is part of what makes a result current.
def test_eval_after_eval_with_sources_scores_again(tmp_path: Path) -> None:
    checkout(tmp_path, ["org/model"])
    first = run_cli("eval", "--json", "--sources", "P", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = run_cli("eval", "--json", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    (row,) = json.loads(second.stdout)
    assert row["status"] == "scored"


# Stdout closed by its reader, or on a full disk.
def test_score_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    write_data(tmp_path / "data")
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(answer_lines(1500))
    command = (
        f"{sys.executable} -m pfgen_fast score --data data answers.jsonl | head -1; "
        'echo "status ${PIPESTATUS[0]}" >&2'
    )
    result = subprocess.run(
        ["bash", "-c", command],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=cli_env(tmp_path / "cache"),
    )
    assert len(result.stdout.splitlines()) == 1
    assert "scores" in json.loads(result.stdout)
    # Nothing but the status line: no error, no "Exception ignored" at exit.
    assert result.stderr.strip() == "status 141", result.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_score_on_a_full_disk_names_standard_output(tmp_path: Path) -> None:
    write_data(tmp_path / "data")
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(answer_lines(20))
    with open("/dev/full", "wb") as full:
        result = subprocess.run(
            [sys.executable, "-m", "pfgen_fast", "score", "--data", "data", "answers.jsonl"],
            cwd=tmp_path,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env=cli_env(tmp_path / "cache"),
        )
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: standard output: cannot write: No space left on device"
    ], result.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_eval_json_on_a_full_disk_names_standard_output(tmp_path: Path) -> None:
    checkout(tmp_path, ["org/model"])
    with open("/dev/full", "wb") as full:
        result = subprocess.run(
            [sys.executable, "-m", "pfgen_fast", "eval", "--json"],
            cwd=tmp_path,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env=cli_env(tmp_path / "cache"),
        )
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    assert result.returncode == 1
    assert "error: standard output: cannot write: No space left on device" in result.stderr


# A checkout whose results are current shows its scores.
def test_eval_of_current_results_prints_their_scores(tmp_path: Path) -> None:
    checkout(tmp_path, ["org/first-model", "org/second-model"])
    first = run_cli("eval", "--json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    scored = {row["model"]: row for row in json.loads(first.stdout)}
    assert set(scored) == {"org/first-model", "org/second-model"}

    again = run_cli("eval", "--json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    rows = {row["model"]: row for row in json.loads(again.stdout)}
    assert set(rows) == set(scored)
    for model, row in rows.items():
        assert row["status"] == "skipped"
        for key in ("score", "score_std", "length", "fluency", "truthfulness", "helpfulness"):
            assert row[key] == scored[model][key] and row[key] is not None, key

    table = run_cli("eval", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    header, *lines = table.stdout.splitlines()
    columns = header.split("\t")
    assert len(lines) == 2
    for line in lines:
        row = dict(zip(columns, line.split("\t"), strict=True))
        assert row["status"] == "current"
        assert row["score"] == f"{scored[row['model']]['score']:.4f}"


# Tables piped and at 80 columns.
def test_eval_table_when_piped_is_one_tab_separated_line_per_run(tmp_path: Path) -> None:
    trials = [write_run(tmp_path, LONG_MODEL), write_run(tmp_path, "org/short", seed=2)]
    write_data(tmp_path / "data")
    result = run_cli("eval", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    header, *lines = result.stdout.splitlines()
    columns = header.split("\t")
    assert {"model", "score", "path"} <= set(columns)
    assert len(lines) == 2
    rows = [dict(zip(columns, line.split("\t"), strict=True)) for line in lines]
    assert {row["model"] for row in rows} == {LONG_MODEL, "org/short"}
    assert {row["path"] for row in rows} == {str(path.relative_to(tmp_path)) for path in trials}
    assert all(row["status"] == "scored" for row in rows)


def run_in_terminal(args: list[str], cwd: Path, env: dict[str, str], columns: int) -> str:
    """The CLI's output on a pseudo-terminal of `columns` columns."""
    import fcntl
    import pty
    import struct
    import termios

    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}
    process = subprocess.Popen(
        [sys.executable, "-m", "pfgen_fast", *args],
        cwd=cwd,
        stdin=secondary,
        stdout=secondary,
        stderr=subprocess.DEVNULL,
        env={**env, "TERM": "xterm"},
    )
    os.close(secondary)
    output = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # EIO: the terminal's other end closed
            break
        if not chunk:
            break
        output += chunk
    os.close(primary)
    assert process.wait(timeout=120) == 0
    return output.decode("utf-8", "replace")


def test_eval_table_at_80_columns_keeps_whole_names_and_paths(tmp_path: Path) -> None:
    trials = write_run(tmp_path, LONG_MODEL)
    write_data(tmp_path / "data")
    text = run_in_terminal(["eval"], tmp_path, cli_env(tmp_path / "cache"), 80)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    assert max(cell_len(line) for line in plain.splitlines()) <= 80, plain
    # The first column holds the name, then the path, folded: the first word of each line.
    folded = "".join(line.split()[0] for line in plain.splitlines() if line.strip())
    assert LONG_MODEL in folded, plain
    assert str(trials.relative_to(tmp_path)) in folded, plain


def test_report_and_build_refs_tables_when_piped(tmp_path: Path) -> None:
    checkout(tmp_path, [LONG_MODEL])
    assert run_cli("eval", cwd=tmp_path).returncode == 0
    report = run_cli("report", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    header, *lines = report.stdout.splitlines()
    columns = header.split("\t")
    assert "path" in columns and len(lines) == 1
    row = dict(zip(columns, lines[0].split("\t"), strict=True))
    assert row["model"] == LONG_MODEL

    write_data(tmp_path / "meta", answers=False)
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_bytes(answer_lines(300, seed=5))
    built = run_cli(
        "build-refs", "--meta", "meta", "--candidates", candidates, "--out", "refs",
        "--size", "50", "--pool-size", "100", "--no-rare-filter", cwd=tmp_path,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    header, *lines = built.stdout.splitlines()
    assert header.split("\t")[:3] == ["question", "source", "step"]
    assert lines and all(len(line.split("\t")) == len(header.split("\t")) for line in lines)


# No command, and --version.
def test_no_command_prints_usage_and_the_commands(tmp_path: Path) -> None:
    result = run_cli(cwd=tmp_path)
    assert result.returncode == 2  # a usage error: no command
    text = result.stdout + result.stderr
    assert "usage:" in text
    for command in ("score", "eval", "report", "build-refs", "data", "lctg", "judge"):
        assert f"  {command}  " in text, command


def test_version(tmp_path: Path) -> None:
    from pfgen_fast import __version__

    result = run_cli("--version", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.strip() == f"pfgen_fast {__version__}"


# Values that cannot mean anything.
@pytest.mark.parametrize("jobs", ["0", "-3", "two"])
def test_eval_rejects_jobs_below_one(tmp_path: Path, jobs: str) -> None:
    checkout(tmp_path, ["org/model"])
    result = run_cli("eval", "--jobs", jobs, cwd=tmp_path)
    assert_one_line_error(result, "--jobs", status=2)
    assert not (tmp_path / "result" / "org" / "model" / "result.json").exists()


def test_eval_rejects_a_source_no_question_has(tmp_path: Path) -> None:
    checkout(tmp_path, ["org/model"])
    result = run_cli("eval", "--sources", "P,Z", cwd=tmp_path)
    assert_one_line_error(result, "--sources", "Z")
    assert not (tmp_path / "result" / "org" / "model" / "result.json").exists()


# Exit statuses, and what score writes before a bad line.
def lines_with_a_bad_one(good_before: int) -> bytes:
    lines = answer_lines(good_before).splitlines(keepends=True)
    return b"".join(lines[:good_before]) + b'{"question": 1}\n' + b"".join(lines[good_before:])


def test_score_skipping_lines_exits_1_as_build_refs_does(tmp_path: Path) -> None:
    write_data(tmp_path / "data")
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(lines_with_a_bad_one(4))
    result = run_cli("score", "--data", "data", "--skip-invalid", answers, cwd=tmp_path)
    assert result.returncode == 1
    assert len(result.stdout.splitlines()) == 8  # every good line
    assert f"{answers}:5" in result.stderr

    write_data(tmp_path / "meta", answers=False)
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_bytes(lines_with_a_bad_one(200))
    built = run_cli(
        "build-refs", "--meta", "meta", "--candidates", candidates, "--out", "refs",
        "--size", "50", "--pool-size", "100", "--no-rare-filter", cwd=tmp_path,
    )  # fmt: skip
    assert built.returncode == 1
    assert f"{candidates}:201" in built.stderr
    assert (tmp_path / "refs" / "Q01.json").is_file()


def test_score_writes_the_lines_before_the_first_bad_one(tmp_path: Path) -> None:
    write_data(tmp_path / "data")
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(lines_with_a_bad_one(5))
    result = run_cli("score", "--data", "data", answers, cwd=tmp_path)
    assert_one_line_error(result, f"{answers}:6")
    written = [json.loads(line) for line in result.stdout.splitlines()]
    given = [json.loads(line) for line in answers.read_bytes().splitlines()[:5]]
    assert [{k: v for k, v in row.items() if k != "scores"} for row in written] == given


# Messages that name the right thing.
def test_an_unwritable_result_json_is_named_as_itself(tmp_path: Path) -> None:
    checkout(tmp_path, ["org/model"])
    result_json = tmp_path / "result" / "org" / "model" / "result.json"
    result_json.mkdir()  # cannot be replaced by a file
    result = run_cli("eval", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"{result_json.relative_to(tmp_path)}: cannot write: Is a directory" in result.stderr
    assert ".tmp" not in result.stderr
    assert not [p for p in result_json.parent.rglob("*.tmp")]


def test_a_parent_that_is_a_file_is_named(tmp_path: Path) -> None:
    checkout(tmp_path, ["org/model"])
    assert run_cli("eval", cwd=tmp_path).returncode == 0
    (tmp_path / "plain-file").write_text("x")
    result = run_cli("report", "--format", "csv", "--table", "plain-file/board.csv", cwd=tmp_path)
    assert_one_line_error(result, "plain-file is not a directory")


def test_build_refs_candidates_that_are_a_directory(tmp_path: Path) -> None:
    write_data(tmp_path / "meta", answers=False)
    (tmp_path / "folder").mkdir()
    result = run_cli(
        "build-refs", "--meta", "meta", "--candidates", "folder", "--out", "refs", cwd=tmp_path
    )
    message = assert_one_line_error(result, "folder")
    assert "is a directory" in message.lower() and "no such file" not in message.lower()


def test_invalid_utf8_in_result_json_is_reported_as_such(tmp_path: Path) -> None:
    checkout(tmp_path, ["org/model"])
    assert run_cli("eval", cwd=tmp_path).returncode == 0
    result_json = tmp_path / "result" / "org" / "model" / "result.json"
    text = result_json.read_bytes()
    position = text.index(b'"score"')
    result_json.write_bytes(text[:position] + b"\xff" + text[position:])
    result = run_cli("report", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"not valid UTF-8 at byte {position}" in result.stderr, result.stderr
    assert "line 1 column 1" not in result.stderr


def test_data_verify_without_data_does_not_suggest_data_option(tmp_path: Path) -> None:
    result = run_cli("data", "verify", cwd=tmp_path)
    message = assert_one_line_error(result)
    assert "--data" not in message and "DIR" in message


def test_score_reads_xz_compressed_answers(tmp_path: Path) -> None:
    write_data(tmp_path / "data")
    plain = tmp_path / "answers.jsonl"
    plain.write_bytes(answer_lines(5))
    packed = tmp_path / "answers.jsonl.xz"
    packed.write_bytes(lzma.compress(plain.read_bytes()))
    expected = run_cli("score", "--data", "data", plain, cwd=tmp_path)
    result = run_cli("score", "--data", "data", packed, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected.stdout and len(result.stdout.splitlines()) == 10
    piped = run_cli("score", "--data", "data", cwd=tmp_path, stdin=packed.read_bytes())
    assert_one_line_error(piped, "<stdin>", "xz")


# Two pairs of leaderboard markers.
def test_report_readme_with_two_marker_pairs_is_an_error(tmp_path: Path) -> None:
    checkout(tmp_path, ["org/model"])
    assert run_cli("eval", cwd=tmp_path).returncode == 0
    readme = tmp_path / "BOARD.md"
    pair = "<!-- leaderboard -->\nold\n<!-- /leaderboard -->\n"
    readme.write_text("# Board\n" + pair + "text\n" + pair, encoding="utf-8")
    before = readme.read_bytes()
    result = run_cli("report", "--readme", readme, cwd=tmp_path)
    assert_one_line_error(result, str(readme), "2")
    assert readme.read_bytes() == before


# The README says how to install, what it downloads, and the extras.
def test_readme_install_notes() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "git clone" in text and "pfgen_fast" in text
    assert "[plot]" in text
    # No Rust toolchain needed first: the quick start says what the build does without cargo.
    quick_start = " ".join(text.split("## Quick start", 1)[1].split("```", 1)[0].split())
    assert "when `cargo` is not on `PATH`" in quick_start
    assert "You need Python ≥ 3.10." in quick_start


# Found by the Rust line readers' fuzzing: a backslash ending a line took the next line along.
def test_build_refs_after_a_line_ending_in_a_backslash(tmp_path: Path) -> None:
    write_data(tmp_path / "meta", answers=False)
    lines = answer_lines(200, seed=5).splitlines()
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_bytes(b'{"question": "a\\\n' + b"\n".join(lines) + b'\n{"question": 1}\n')
    built = run_cli(
        "build-refs", "--meta", "meta", "--candidates", candidates, "--out", "refs",
        "--size", "50", "--pool-size", "100", "--no-rare-filter", cwd=tmp_path,
    )  # fmt: skip
    assert built.returncode == 1
    assert f"{candidates}:1: not valid JSON" in built.stderr
    assert f"{candidates}:{len(lines) + 2}: " in built.stderr
    header, *rows = built.stdout.splitlines()
    steps = [dict(zip(header.split("\t"), row.split("\t"), strict=True)) for row in rows]
    assert [step["in"] for step in steps if step["step"] == "read"] == ["200", "200"]
