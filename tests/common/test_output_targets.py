"""Output paths that are not plain new files: every command with an output file option, given a
device, a FIFO, a symbolic link (to a file, to a link, to a file not there yet), writes
through it and leaves it what it was. A device or a FIFO is written in place (a full one is a
one-line error); a link stays a link and its final target gets the output. Real subprocess
runs of the CLI; the device nodes are made with mknod (root only)."""

from __future__ import annotations

import contextlib
import json
import lzma
import os
import random
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import published
from cli_runner import run_cli
from pfgen_fast.testing import Reply, serve

QUESTION = "架空の島の天気を教えて。"
NULL_DEVICE = os.makedev(1, 3)
FULL_DEVICE = os.makedev(1, 7)
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
JUDGE_TESTS = Path(__file__).resolve().parents[1] / "judge"  # judged_pairs.py
# The judge server of the commands that ask one (set by the `inputs` fixture).
SERVER: dict[str, str] = {}


def judge(path: str, request: dict[str, object]) -> Reply:
    """pointwise: a rating from the prompt's length; llm-jp-eval-mm's judge: a score."""
    prompt = str(request["messages"][-1]["content"])  # type: ignore[index]
    if "Assistant's Answer" in prompt:
        return Reply(text=f"Rating: [[{1 + len(prompt) % 10}]]")
    return Reply(text="4")


def write_inputs(root: Path) -> Path:
    """The inputs every command below reads, in `root`."""
    rng = random.Random(5)
    answers = ["".join(rng.choice("あいうえおかきくけこ。") for _ in range(80)) for _ in range(20)]
    data = root / "data"
    data.mkdir(parents=True)
    question = {"question_id": "Q01", "question": QUESTION, "category": "test", "note": "",
                "keywords": [{"t": "あ"}], "answers": {"R": answers}}  # fmt: skip
    (data / "Q01.json").write_text(json.dumps(question, ensure_ascii=False), "utf-8")
    run = root / "result" / "org" / "model"
    run.mkdir(parents=True)
    lines = [{"question": QUESTION, "answer": answer} for answer in answers[:5]]
    trials = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    (run / "trials.jsonl.xz").write_bytes(lzma.compress(trials.encode()))
    evaluated = run_cli("eval", "--data", data, run / "trials.jsonl.xz", cwd=root)
    assert evaluated.returncode == 0, evaluated.stderr
    synth = ["synth", "--data", data, "--question", "Q01", "--count", "200", "--out",
             root / "candidates.jsonl"]  # fmt: skip
    synthesised = run_cli(*synth, cwd=root)
    assert synthesised.returncode == 0, synthesised.stderr
    mm_item = {"ref": "私は猫です。", "pred": "私は猫です。", "input_text": "何ですか"}
    (root / "mm.jsonl").write_text(json.dumps(mm_item, ensure_ascii=False) + "\n", "utf-8")
    mm_run = root / "mm-result" / "jdocqa" / "model-a"
    mm_run.mkdir(parents=True)
    prediction = {"question_id": 0, "text": "はい", "answer": "はい", "input_text": "質問"}
    (mm_run / "prediction.jsonl").write_text(json.dumps(prediction, ensure_ascii=False) + "\n")
    columns = [f"{name}-{kind}" for name in ("Format", "C-count", "Keyword", "P-word", "Avg")
               for kind in ("ctg", "qual")]  # fmt: skip
    scores = {"task": "summary", "model": "m", "scores": dict.fromkeys(columns, 0.5)}
    (root / "lctg-summary-scores.json").write_text(json.dumps(scores), "utf-8")
    if str(JUDGE_TESTS) not in sys.path:
        sys.path.append(str(JUDGE_TESTS))
    from judged_pairs import judged_pair, write_pairs

    pairs = [judged_pair(1, "x", "y", "A"), judged_pair(2, "y", "x", "C")]
    write_pairs(root / "verdicts.jsonl", pairs)
    return root


@dataclass(frozen=True)
class Command:
    """A command line writing one output file: `argv(inputs, output)`; `suffix`, the output
    file's (its format); `any_name`, whether its format does not come from the name."""

    name: str
    suffix: str
    argv: Callable[[Path, Path], list[str | Path]]
    any_name: bool = False
    # The published files the command reads (tests/published.py's names).
    needs: tuple[str, ...] = ()

    def usable(self) -> bool:
        return all(published.locate(name) is not None for name in self.needs)


COMMANDS = [
    Command("report --table", ".csv", lambda i, o: [
        "report", "--data", i / "data", i / "result/org/model/result.json", "--format", "csv",
        "--table", o], any_name=True),
    Command("synth --out", ".jsonl", lambda i, o: [
        "synth", "--data", i / "data", "--question", "Q01", "--count", "5", "--out", o],
        any_name=True),
    Command("build-refs --report", ".json", lambda i, o: [
        "build-refs", "--meta", i / "data", "--candidates", i / "candidates.jsonl", "--out",
        o.parent / f"refs-{o.name}", "--size", "5", "--pool-size", "10", "--report", o],
        any_name=True),
    Command("mm score -o", ".jsonl", lambda i, o: [
        "mm", "score", "--metric", "rougel", i / "mm.jsonl", "-o", o], any_name=True),
    Command("mm evaluate --table", ".csv", lambda i, o: [
        "mm", "evaluate", i / "mm-result", "--metrics", "rougel", "--table", o]),
    Command("mm leaderboard --table", ".csv", lambda i, o: [
        "mm", "leaderboard", i / "mm-result", "--table", o]),
    Command("lctg leaderboard --table", ".csv", lambda i, o: [
        "lctg", "leaderboard", i / "lctg-summary-scores.json", "--table", o]),
    Command("judge rank --table", ".csv", lambda i, o: [
        "judge", "rank", i / "verdicts.jsonl", "--bootstrap", "10", "--table", o]),
    Command("judge pointwise --plot", ".svg", lambda i, o: [
        "judge", "pointwise", *published.published_runs()[:2], "--data",
        published.require(published.CHECKOUT) / "data", "--trials", "1",
        "--base-url", SERVER["url"], "--judge-model", "judge", "--plot", o],
        needs=(published.CHECKOUT,)),
    Command("mm score --judge-log", ".jsonl", lambda i, o: [
        "mm", "score", "--metric", "llm-as-a-judge", i / "mm.jsonl", "--evalmm-dir",
        published.evalmm_dir(), "--base-url", SERVER["url"], "--judge-model", "judge",
        "--no-cache", "--judge-log", o], any_name=True, needs=(published.EVALMM,)),
]  # fmt: skip
# The machine's /dev/null and /dev/stdout are only reached through a link: a regression must
# not replace them.
KINDS = ["null device", "full device", "fifo", "symlink", "symlink to a symlink",
         "symlink to a new file", "link to /dev/null", "link to /dev/stdout"]  # fmt: skip


@contextlib.contextmanager
def judge_server() -> Iterator[None]:
    """The judge server of the commands that ask one, in SERVER while the block runs."""
    with serve(judge) as server:
        SERVER["url"] = server.base_url
        try:
            yield
        finally:
            del SERVER["url"]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with judge_server():
        yield write_inputs(tmp_path_factory.mktemp("inputs"))


class FifoReader:
    """Reads a FIFO to its end in a thread, as a program on the other side of a pipe would."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = b""
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self) -> None:
        with open(self.path, "rb") as fifo:
            self.data = fifo.read()

    def finish(self) -> bytes:
        """What came through; a reader still waiting for a writer is let go first."""
        if self.thread.is_alive():
            try:
                os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        self.thread.join(30)
        return self.data


def kind_of(path: Path) -> str:
    mode = os.lstat(path).st_mode
    return "link" if stat.S_ISLNK(mode) else "char" if stat.S_ISCHR(mode) else (
        "fifo" if stat.S_ISFIFO(mode) else "file" if stat.S_ISREG(mode) else "other")  # fmt: skip


def check_kind(command: Command, kind: str, inputs: Path, place: Path) -> list[str]:
    """The problems of one command writing through one kind of path (none: it held)."""
    out = place / f"out{command.suffix}"
    target = place / "real" / f"target{command.suffix}"
    reader = None
    if kind in ("null device", "full device"):
        os.mknod(out, 0o666 | stat.S_IFCHR, NULL_DEVICE if kind == "null device" else FULL_DEVICE)
    elif kind == "fifo":
        os.mkfifo(out)
        reader = FifoReader(out)
    elif kind.startswith("symlink"):
        target.parent.mkdir()
        if kind != "symlink to a new file":
            target.write_bytes(b"old")
        if kind == "symlink to a symlink":
            (place / f"middle{command.suffix}").symlink_to(f"real/target{command.suffix}")
            out.symlink_to(f"middle{command.suffix}")
        else:
            out.symlink_to(f"real/target{command.suffix}")
    else:
        out.symlink_to(kind.removeprefix("link to "))
    before = kind_of(out) if out.exists() or out.is_symlink() else None
    # /dev/stdout is the process's own: a process of its own to write to it.
    process = kind == "link to /dev/stdout"
    result = run_cli(*command.argv(inputs, out), cwd=place, process=process)
    received = reader.finish() if reader is not None else b""
    problems = []
    if "Traceback" in result.stderr or "unexpected" in result.stderr:
        problems.append(f"a bug shown: {result.stderr}")
    after = kind_of(out) if out.exists() or out.is_symlink() else None
    if kind != "symlink to a new file" and after != before:
        problems.append(f"{out} was a {before}, is now a {after}")
    leftovers = [p.name for p in place.rglob("*.tmp")]
    if leftovers:
        problems.append(f"temporary files left: {leftovers}")
    if kind == "full device":
        lines = result.stderr.strip().splitlines()
        if result.returncode != 1 or "No space left on device" not in result.stderr:
            problems.append(f"full device: status {result.returncode}, {result.stderr!r}")
        elif not any(line.startswith("error: ") and "cannot write" in line for line in lines):
            problems.append(f"full device: the error does not say what: {result.stderr!r}")
        return problems
    if result.returncode != 0:
        problems.append(f"status {result.returncode}: {result.stderr}")
    if kind == "fifo" and not received:
        problems.append("nothing came through the FIFO")
    if kind == "link to /dev/stdout" and not result.stdout:
        problems.append("nothing on standard output")
    if kind.startswith("symlink"):
        if after != "link":
            problems.append(f"the link is now a {after}")
        elif not target.is_file() or target.read_bytes() in (b"", b"old"):
            problems.append("the link's target was not written")
    return problems


def kinds_for(command: Command) -> list[str]:
    kinds = [k for k in KINDS if command.any_name or not k.startswith("link to /dev/")]
    return [k for k in kinds if IS_ROOT or not k.endswith("device")]


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_output_paths_are_written_through_never_replaced(
    command: Command, inputs: Path, tmp_path: Path
) -> None:
    for name in command.needs:
        published.require(name)
    problems = []
    for number, kind in enumerate(kinds_for(command)):
        place = tmp_path / str(number)
        place.mkdir()
        problems += [f"{kind}: {problem}" for problem in check_kind(command, kind, inputs, place)]
    assert not problems, "\n".join(problems)


def test_a_loop_of_links_is_a_one_line_error(inputs: Path, tmp_path: Path) -> None:
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to("loop.jsonl")
    result = run_cli("mm", "score", "--metric", "rougel", inputs / "mm.jsonl", "-o", loop)
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: {loop}: cannot write: Too many levels of symbolic")
    assert loop.is_symlink()


def test_a_result_that_is_a_link_stays_a_link(inputs: Path, tmp_path: Path) -> None:
    """eval rewrites result.json beside each trials file: a link there is followed."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "trials.jsonl.xz").write_bytes(
        (inputs / "result/org/model/trials.jsonl.xz").read_bytes()
    )
    kept = tmp_path / "kept" / "result.json"
    kept.parent.mkdir()
    kept.write_text("{}")
    (run / "result.json").symlink_to(kept)
    result = run_cli("eval", "--data", inputs / "data", run / "trials.jsonl.xz", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (run / "result.json").is_symlink()
    assert json.loads(kept.read_text())["num_trials"] == 5


def test_stdout_as_the_output_of_a_pipeline(inputs: Path, tmp_path: Path) -> None:
    """`-o /dev/stdout` into a pipe (through a link: a regression must not replace the
    machine's own): the scored lines arrive, nothing is replaced."""
    stdout = tmp_path / "stdout"
    stdout.symlink_to("/dev/stdout")
    process = subprocess.run(
        f"python3 -m pfgen_fast mm score --metric rougel {inputs / 'mm.jsonl'} -o {stdout} | wc -l",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert process.returncode == 0 and process.stdout.strip() == "1", process.stderr
    assert stdout.is_symlink()
