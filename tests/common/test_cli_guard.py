"""The CLI's guard: every command, given bad inputs (those users met, random bytes, truncated xz,
wrong JSON types), ends with a one-line error and never a traceback; an unexpected exception
becomes one line naming the command line and where to report it, the traceback only with
--debug."""

from __future__ import annotations

import json
import lzma
import os
import random
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cli_runner import run_cli
from pfgen_fast.testing import FAILURE_MODES, FAST_CLIENT, failing, serve
from published import evalmm_dir, lctg_dir

QUESTION = "架空の島の天気を教えて。"


def write_data(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(3)
    answers = ["".join(rng.choice("あいうえおかきくけこ。") for _ in range(80)) for _ in range(20)]
    question = {
        "question_id": "Q01",
        "question": QUESTION,
        "category": "test",
        "note": "",
        "keywords": [{"t": "あ"}],
        "answers": {"R": answers},
    }
    (directory / "Q01.json").write_text(json.dumps(question, ensure_ascii=False), "utf-8")
    return directory


def bad_inputs(root: Path) -> dict[str, bytes]:
    """Contents no command can use: the name says what is wrong."""
    rng = random.Random(24)
    good = json.dumps({"question": QUESTION, "answer": "あいう"}, ensure_ascii=False).encode()
    packed = lzma.compress(good * 50 + b"\n")
    return {
        "empty": b"",
        "random-bytes": rng.randbytes(3000),
        "random-bytes.xz": rng.randbytes(500),
        "truncated.jsonl.xz": packed[: len(packed) // 2],
        "invalid-utf8": b'{"question": "\xff\xfe", "answer": "x"}\n',
        "array": b"[1, 2, 3]\n",
        "number": b"1e999\n",
        "wrong-types": b'{"question": 1, "answer": ["a"], "config": 3, "scores": "x"}\n',
        "deep-nesting": b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "huge-integer": b'{"question": "' + QUESTION.encode() + b'", "answer": 1' + b"0" * 5000
        + b"}\n",
        "truncated-object": good[:-5] + b"\n",
        "result-wrong-types": json.dumps(
            {"input_hash": 1, "config": [], "scores": {"fluency": "x"}, "questions": [1]}
        ).encode(),
        "qxx-wrong-types": json.dumps(
            {"question_id": 1, "question": QUESTION, "answers": {"R": "text"}, "keywords": {}}
        ).encode(),
        "qxx-bad-rule": json.dumps(
            {"question_id": "Q01", "question": QUESTION, "keywords": [{"t": "("}],
             "answers": {"R": ["x"]}}
        ).encode(),
    }  # fmt: skip


# The inputs every command meets; the others meet the commands that read any file.
THOROUGH = {"random-bytes", "invalid-utf8", "wrong-types", "deep-nesting", "qxx-wrong-types"}


def commands(root: Path, name: str, data: Path) -> list[list[str]]:
    """The command lines that read a file of this content, each in its own place."""
    place = root / name.replace(".", "_")
    place.mkdir()
    content = bad_inputs(root)[name]
    plain = place / name
    plain.write_bytes(content)
    run = place / "result" / "org" / "model"
    run.mkdir(parents=True)
    packed = content if name.endswith(".xz") else lzma.compress(content)
    (run / "trials.jsonl.xz").write_bytes(packed)
    (run / "result.json").write_bytes(content)
    (run / "config.json").write_bytes(content)
    bad_data = place / "data"
    bad_data.mkdir()
    (bad_data / "Q01.json").write_bytes(content)
    (bad_data / "questions.jsonl").write_bytes(content)
    every = [
        ["score", "--data", str(data), str(plain)],
        ["eval", "--data", str(data), str(run / "trials.jsonl.xz")],
        ["report", "--data", str(data), str(run / "result.json")],
        ["data", "verify", str(bad_data)],
        ["build-refs", "--meta", str(data), "--candidates", str(plain), "--out",
         str(place / "refs"), "--size", "5", "--pool-size", "10"],
    ]  # fmt: skip
    if name not in THOROUGH:
        return every
    return every + [
        ["score", "--data", str(data), "--skip-invalid", str(plain)],
        ["score", "--data", str(bad_data), str(plain)],
        ["eval", "--data", str(bad_data), str(run / "trials.jsonl.xz")],
        ["report", "--data", str(data), "--readme", str(plain), str(run / "result.json")],
        ["plot", "--out", str(place / "plots"), str(run / "result.json")],
        ["prompt", "--data", str(bad_data), "--mode", "qa", "--trial", "0"],
        ["synth", "--data", str(bad_data), "--question", "Q01", "--count", "5",
         "--out", str(place / "synth.jsonl")],
        ["build-refs", "--meta", str(bad_data), "--candidates", str(plain), "--out",
         str(place / "refs2")],
        ["build-refs", "--meta", str(data), "--candidates", str(plain), "--out",
         str(place / "refs3"), "--ng-rules", str(plain)],
        ["build-refs", "--meta", str(data), "--candidates", str(plain), "--out",
         str(place / "refs4"), "--style-rules", str(plain)],
        ["stability", "--data", str(data), str(run / "trials.jsonl.xz")],
        ["mm", "score", "--metric", "rougel", str(plain)],
        ["judge", "rank", str(plain)],
        ["lctg", "leaderboard", "--table", str(place / "lctg.csv"), str(plain)],
        ["generate", "--data", str(bad_data), "--model", "m", "--mode", "qa",
         "--base-url", "http://127.0.0.1:9/v1", "--out", str(place / "gen")],
    ]  # fmt: skip


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PFGEN_FAST_CACHE": str(cwd / "cache"), "PFGEN_DATA_DIR": ""}
    # A process each: the runs go two at a time, and "Exception ignored" comes at its exit.
    result = run_cli(*argv, cwd=cwd, env=env, timeout=120, process=True)
    return subprocess.CompletedProcess(argv, result.returncode, "", result.stderr)


NAMES = list(bad_inputs(Path()).keys())


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_command_on_bad_input_ends_in_one_line_errors(tmp_path: Path, name: str) -> None:
    data = write_data(tmp_path / "good-data")
    lines = commands(tmp_path, name, data)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda argv: run(argv, tmp_path), lines))
    problems = []
    for result in results:
        shown = f"{' '.join(result.args)}\n{result.stderr}"
        if "Traceback" in result.stderr or "Exception ignored" in result.stderr:
            problems.append(shown)
        elif "error: unexpected" in result.stderr:
            problems.append(shown)  # the guard caught a bug: still a bug
        elif result.returncode not in (0, 1, 2):
            problems.append(f"status {result.returncode}: {shown}")
        elif result.returncode != 0 and not result.stderr.strip():
            problems.append(f"status {result.returncode} without a word: {shown}")
        elif result.returncode == 2 and result.stderr.count("\n") != 1:
            problems.append(f"a usage error in more than one line: {shown}")
    assert not problems, "\n\n".join(problems)


# A room whose command fails with an exception that is not a PfgenError: a bug.
CRASHING_ROOM = """
from pfgen_fast.common.rooms import Command, Room

ROOM = Room("crash", "a room that fails", (Command("now", "fails", "crashing_room"),))

def add_arguments(parser):
    parser.add_argument("file")

def run(args):
    return {}["missing key in " + args.file]
"""

RUN_WITH_ROOM = textwrap.dedent(
    """
    import sys
    from pfgen_fast import cli
    cli.ROOMS = (*cli.ROOMS, "crashing_room")
    sys.exit(cli.main(sys.argv[1:]))
    """
)


def run_crashing(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "crashing_room.py").write_text(CRASHING_ROOM)
    return subprocess.run(
        [sys.executable, "-c", RUN_WITH_ROOM, *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])},
    )


def test_an_unexpected_exception_is_one_line_asking_for_a_report(tmp_path: Path) -> None:
    result = run_crashing(tmp_path, "crash", "now", "answers.jsonl")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: unexpected KeyError")
    assert "python -m pfgen_fast crash now answers.jsonl" in line
    assert "report" in line and "--debug" in line


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    result = run_crashing(tmp_path, "crash", "now", "answers.jsonl", "--debug")
    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert "KeyError: 'missing key in answers.jsonl'" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("error: unexpected KeyError")


def test_main_gives_back_standard_output_and_the_sigterm_handler(
    capfd: pytest.CaptureFixture[str],
) -> None:
    import signal

    from pfgen_fast import __version__, cli

    before = (sys.stdout, signal.getsignal(signal.SIGTERM))
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert (sys.stdout, signal.getsignal(signal.SIGTERM)) == before
    assert capfd.readouterr().out == f"pfgen_fast {__version__}\n"


# A judge or model server that never answers: every command that calls one exits 1, whatever
# the way the server fails, and a judged metric with no item judged has no score (never 0.0).

JUDGED_COMMANDS = ("mm-score", "mm-evaluate", "lctg-eval", "judge-pairwise", "generate")


def write_lines(path: Path, rows: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    return path


def judged_command(name: str, place: Path, url: str) -> list[str]:
    """The command line of one judged (or generating) command against the server at `url`."""
    judge = ["--base-url", url, "--judge-model", "judge-1", *FAST_CLIENT, "--no-cache"]
    mm_rows = [
        {"ref": "猫です。", "pred": "犬です。", "input_text": "何の動物？", "answer": "猫です。",
         "text": "犬です。", "question_id": 0},
        {"ref": "赤です。", "pred": "青です。", "input_text": "何色？", "answer": "赤です。",
         "text": "青です。", "question_id": 1},
    ]  # fmt: skip
    if name == "mm-score":
        items = write_lines(place / "items.jsonl", mm_rows)
        return ["mm", "score", "--metric", "llm-as-a-judge", "--json", "--evalmm-dir",
                str(evalmm_dir()), str(items), *judge]  # fmt: skip
    if name == "mm-evaluate":
        for model in ("model-a", "model-b"):
            write_lines(place / "results" / "ja-vg-vqa-500" / model / "prediction.jsonl", mm_rows)
        return ["mm", "evaluate", "--metrics", "llm-as-a-judge", "--evalmm-dir", str(evalmm_dir()),
                str(place / "results"), *judge]  # fmt: skip
    if name == "lctg-eval":
        from pfgen_fast.lctg.data import load_prompts

        prompt = next(iter(load_prompts(lctg_dir(), "summary").values()))
        row = {"generated_text_id": 0, "model": "demo/model", "prompt_id": prompt.prompt_id,
               "base_text": prompt.base_text}  # fmt: skip
        for constraint in ("format", "char_count", "keyword", "prohibited_word"):
            row[f"{constraint}_result"] = ["要約です。"] * 3
        generations = write_lines(place / "generated_result_v1.jsonl", [row])
        return ["lctg", "eval", "--task", "summary", "--data", str(lctg_dir()), "--out",
                str(place / "out"), str(generations), *judge]  # fmt: skip
    if name == "judge-pairwise":
        items = write_lines(place / "items.jsonl", [
            {"id": "a", "question": "1+1は？", "reference": "2です。", "answer_a": "2",
             "answer_b": "3"},
        ])  # fmt: skip
        return ["judge", "pairwise", "--out", str(place / "out"), str(items), *judge]
    if name == "generate":
        data = write_data(place / "data")
        return ["generate", "--data", str(data), "--model", "m", "--mode", "chat",
                "--num-trials", "1", "--base-url", url, *FAST_CLIENT, "--no-cache",
                "--out", str(place / "gen")]  # fmt: skip
    raise ValueError(name)


@pytest.mark.slow
@pytest.mark.parametrize("mode", FAILURE_MODES)
def test_a_server_that_never_answers_fails_every_judged_command(tmp_path: Path, mode: str) -> None:
    problems = []
    with serve(failing(mode)) as server:
        lines = []
        for name in JUDGED_COMMANDS:
            place = tmp_path / name
            place.mkdir()
            lines.append(judged_command(name, place, server.base_url))
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda argv: run_with_output(argv, tmp_path), lines))
    for result in results:
        shown = f"{' '.join(result.args)}\nstatus {result.returncode}\n{result.stderr}"
        if result.returncode != 1:
            problems.append(f"not status 1: {shown}")
        elif "Traceback" in result.stderr or "error: unexpected" in result.stderr:
            problems.append(shown)
        elif "error" not in result.stderr:
            problems.append(f"status 1 without a word: {shown}")
    assert not problems, "\n\n".join(problems)
    mm_score, mm_evaluate = results[0], results[1]
    aggregate = json.loads(mm_score.stdout)
    assert aggregate["overall_score"] is None
    assert aggregate["details"]["judge_errors"] == 2
    assert "0.0" not in mm_evaluate.stdout and "n/a" in mm_evaluate.stdout
    for model in ("model-a", "model-b"):
        evaluation = tmp_path / "mm-evaluate/results/ja-vg-vqa-500" / model / "evaluation.jsonl"
        written = json.loads(evaluation.read_text())
        assert written["llm-as-a-judge"]["overall_score"] is None


def test_judge_errors_zero_keeps_the_zeros_and_still_fails(tmp_path: Path) -> None:
    with serve(failing("http-500")) as server:
        argv = judged_command("mm-score", tmp_path, server.base_url) + ["--judge-errors", "zero"]
        result = run_with_output(argv, tmp_path)
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["overall_score"] == 0.0


def run_with_output(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PFGEN_FAST_CACHE": str(cwd / "cache"), "PFGEN_DATA_DIR": ""}
    result = subprocess.run(
        [sys.executable, "-m", "pfgen_fast", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    return result


# Output targets and full disks: every command with an output option (a file: the commands of
# test_output_targets; a folder: those below), given paths that are not plain new files.
FOLDER_OUTPUTS = {
    "plot --out": lambda i, o: ["plot", "--out", o, i / "result/org/model/result.json"],
    "build-refs --out": lambda i, o: [
        "build-refs", "--meta", i / "data", "--candidates", i / "candidates.jsonl", "--out", o,
        "--size", "5", "--pool-size", "10"],
    "generate --out": lambda i, o: [
        "generate", "--data", i / "data", "--model", "m", "--mode", "qa", "--base-url",
        "http://127.0.0.1:9/v1", "--max-retries", "0", "--out", o],
    "lctg leaderboard --plots": lambda i, o: [
        "lctg", "leaderboard", i / "lctg-summary-scores.json", "--plots", o],
    "judge rank --table (a folder)": lambda i, o: [
        "judge", "rank", i / "verdicts.jsonl", "--bootstrap", "10", "--table", o / "rank.csv"],
}  # fmt: skip
FOLDER_KINDS = ["null device", "fifo", "regular file", "link to a folder", "link to a file"]


def make_folder_target(kind: str, path: Path) -> None:
    if kind == "null device":
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "regular file":
        path.write_bytes(b"kept")
    elif kind == "link to a folder":
        (path.parent / "folder").mkdir()
        path.symlink_to("folder")
    else:
        (path.parent / "file").write_bytes(b"kept")
        path.symlink_to("file")


def shape(path: Path) -> tuple[str, bytes | None]:
    mode = os.lstat(path).st_mode
    kind = stat.S_IFMT(mode)
    content = path.read_bytes() if stat.S_ISREG(os.stat(path).st_mode) else None
    return str(kind), content


@pytest.fixture(scope="module")
def output_inputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    from test_output_targets import judge_server, write_inputs

    with judge_server():
        yield write_inputs(tmp_path_factory.mktemp("output-inputs"))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FOLDER_OUTPUTS))
def test_folder_outputs_that_are_not_folders_end_in_one_line(
    name: str, output_inputs: Path, tmp_path: Path
) -> None:
    problems = []
    for kind in FOLDER_KINDS:
        if kind == "null device" and os.geteuid() != 0:
            continue
        place = tmp_path / kind.replace(" ", "-")
        place.mkdir()
        out = place / "out"
        make_folder_target(kind, out)
        before = shape(out)
        result = run([str(a) for a in FOLDER_OUTPUTS[name](output_inputs, out)], place)
        shown = f"{kind}: status {result.returncode}: {result.stderr!r}"
        if "Traceback" in result.stderr or "error: unexpected" in result.stderr:
            problems.append(shown)
        elif kind == "link to a folder":
            if not out.is_symlink():
                problems.append(f"{kind}: the link was replaced")
        elif shape(out) != before:
            problems.append(f"{kind}: changed from {before} to {shape(out)}")
        elif result.returncode != 1 or not result.stderr.strip():
            problems.append(shown)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_file_outputs_on_a_full_disk_end_in_one_line(output_inputs: Path, tmp_path: Path) -> None:
    """Every command with an output file (those whose published files can be had), writing to
    a full tmpfs (root), else to /dev/full through a link: exit 1, the file and "No space left
    on device" named, nothing left."""
    from test_output_targets import COMMANDS
    from test_reply_log_full_disk import FULL, small_disk

    problems = []
    if os.geteuid() == 0:
        with small_disk(tmp_path / "disk", free_pages=0) as disk:
            for number, command in enumerate(COMMANDS):
                if not command.usable():
                    continue
                out = disk / f"out{number}{command.suffix}"
                result = run([str(a) for a in command.argv(output_inputs, out)], tmp_path)
                named = f"error: {disk}/" in result.stderr  # the output, or a file beside it
                if (
                    result.returncode != 1
                    or f"cannot write: {FULL}" not in result.stderr
                    or not named
                ):
                    problems.append(f"{command.name}: {result.returncode} {result.stderr!r}")
            problems += [f"left on the disk: {p}" for p in disk.rglob("*.tmp")]
    for number, command in enumerate(COMMANDS):
        if not command.any_name or not command.usable():
            continue
        out = tmp_path / f"full{number}"
        out.symlink_to("/dev/full")
        result = run([str(a) for a in command.argv(output_inputs, out)], tmp_path)
        if result.returncode != 1 or FULL not in result.stderr or "unexpected" in result.stderr:
            problems.append(f"{command.name} to /dev/full: {result.returncode} {result.stderr!r}")
    assert not problems, "\n".join(problems)
