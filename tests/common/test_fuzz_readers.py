"""Fuzzing of the CLI's input readers with hypothesis, for a fixed number of examples each:
trials lines, `score`'s input lines, result.json, config.json, Qxx.json and build-refs'
candidate lines. Whatever the bytes, a reader returns what it read or raises a PfgenError (the
CLI's one-line error); any other exception is a bug. Inputs are drawn from JSON shaped like the
real files (fields of the wrong types, strings with escapes and lone surrogates, deep nesting,
huge numbers) and then mutated at the byte level."""

from __future__ import annotations

import io
import json
import lzma
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pfgen_fast.common.errors import PfgenError

QUESTION = "架空の港の名前は？"
FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

texts = st.one_of(
    st.sampled_from([QUESTION, "", "あいう", "\ud800", "a\nb", "\x00"]),
    st.text(max_size=12),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    texts,
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


def encoded(value: Any) -> bytes:
    """JSON text of `value` (lone surrogates escaped, as a JSON writer may leave them)."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


@st.composite
def mutated(draw: st.DrawFn, base: bytes) -> bytes:
    """`base` with a few bytes flipped, inserted, removed or the end cut."""
    data = bytearray(base)
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "remove", "cut"]))
        at = draw(st.integers(0, len(data)))
        byte = draw(st.sampled_from(b'{}[]",:\\\n0e-.\xff\xc3\x80 '))
        if kind == "insert":
            data.insert(at, byte)
        elif at < len(data) and kind == "flip":
            data[at] = byte
        elif at < len(data) and kind == "remove":
            del data[at]
        elif kind == "cut":
            del data[at:]
    return bytes(data)


@st.composite
def answer_records(draw: st.DrawFn) -> bytes:
    """A line of a trials or score file: mostly question and answer, sometimes not strings."""
    record: dict[str, Any] = {
        "question": draw(st.one_of(st.just(QUESTION), values)),
        "answer": draw(st.one_of(texts, values)),
    }
    record.update(draw(st.dictionaries(st.sampled_from(["scores", "x", "answer"]), values)))
    line = encoded(record)
    if draw(st.booleans()):
        line = draw(mutated(line))
    return line


def nesting(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


# Whole files no reader can take: random bytes, nesting deeper than any parser's limit.
odd_files = st.one_of(
    st.binary(max_size=60), st.sampled_from([nesting(100_000), b"\xef\xbb\xbf{}", b""])
)

answer_blocks = st.lists(
    st.one_of(
        answer_records(),
        st.binary(max_size=40),
        st.sampled_from([b"", b"  ", nesting(1100), nesting(1000), b"1e999", b"[]"]),
    ),
    max_size=8,
).map(lambda lines: b"\n".join(lines))


def write_data(directory: Path) -> Path:
    directory.mkdir(exist_ok=True)
    question = {
        "question_id": "Q01",
        "question": QUESTION,
        "keywords": [{"t": "港"}],
        "answers": {"R": ["架空の港は東港です。", "東港という名前です。"]},
    }
    (directory / "Q01.json").write_text(json.dumps(question, ensure_ascii=False), "utf-8")
    return directory


@FUZZ
@given(block=answer_blocks)
def test_trials_reader(tmp_path: Path, block: bytes) -> None:
    from pfgen_fast.pfgen.trials import read_trials

    for name, raw in (("trials.jsonl", block), ("trials.jsonl.xz", lzma.compress(block))):
        try:
            trials = read_trials(tmp_path / name, raw)
        except PfgenError:
            continue
        for record in trials.records:
            assert isinstance(record["question"], str) and isinstance(record["answer"], str)


@FUZZ
@given(block=answer_blocks, skip_invalid=st.booleans())
def test_score_input_lines(tmp_path: Path, block: bytes, skip_invalid: bool) -> None:
    from pfgen_fast.pfgen.commands.score import BlockScorer, score_stream
    from pfgen_fast.pfgen.scorer import ReferenceData

    references = ReferenceData.load(write_data(tmp_path / "data"))
    out = io.BytesIO()
    stream = io.BufferedReader(io.BytesIO(block))  # type: ignore[arg-type]
    try:
        score_stream(stream, "<fuzz>", BlockScorer(references), skip_invalid, out)
    except PfgenError:
        assert not skip_invalid
    for line in out.getvalue().splitlines():
        record = json.loads(line)
        assert record["question"] == QUESTION and "scores" in record


@st.composite
def result_files(draw: st.DrawFn) -> bytes:
    """A result.json: the fields reports read, each sometimes of another type."""
    question = {
        "question": QUESTION,
        "score": 0.5,
        "score_std": 0.1,
        "length": 10.0,
        "length_std": 1.0,
        "scores": {"fluency": {"R": 0.5}, "truthfulness": {"R": 0.5}, "helpfulness": 0.5,
                   "average": 0.5},
        "samples": [],
    }  # fmt: skip
    result: dict[str, Any] = {
        "input_hash": "0" * 40,
        "metadata_hash": "0" * 40,
        "config": {"model": "org/model", "mode": "qa"},
        "num_trials": 1,
        "score": 0.5,
        "score_std": 0.1,
        "length": 10.0,
        "length_std": 1.0,
        "scores": question["scores"],
        "questions": {"Q01": question},
    }
    objects = {"result": result, "question": question, "scores": question["scores"]}
    changes = st.tuples(st.sampled_from(sorted(objects)), st.integers(0, 20), values)
    for which, index, value in draw(st.lists(changes, max_size=3)):
        keys = sorted(objects[which])
        objects[which][keys[index % len(keys)]] = value
    data = encoded(result)
    return draw(st.one_of(st.just(data), mutated(data), odd_files))


@FUZZ
@given(raw=result_files())
def test_result_json_reader(tmp_path: Path, raw: bytes) -> None:
    from pfgen_fast.pfgen.results import load_result

    path = tmp_path / "result.json"
    path.write_bytes(raw)
    try:
        run = load_result(path)
    except PfgenError:
        return
    assert isinstance(run.model, str) and isinstance(run.mode, str)


@FUZZ
@given(raw=st.one_of(values.map(encoded), odd_files))
def test_config_json_reader(tmp_path: Path, raw: bytes) -> None:
    from pfgen_fast.pfgen.outputs import read_config

    path = tmp_path / "config.json"
    path.write_bytes(raw)
    try:
        config = read_config(tmp_path)
    except PfgenError:
        return
    assert isinstance(config, dict)


@st.composite
def question_files(draw: st.DrawFn) -> bytes:
    rule = st.recursive(
        st.fixed_dictionaries({"t": st.one_of(texts, st.sampled_from(["(", "a{2,", "\\"]))}),
        lambda inner: st.dictionaries(
            st.sampled_from(["and", "or", "t", "name", "importance"]),
            st.one_of(st.lists(inner, max_size=3), values),
            max_size=3,
        ),
        max_leaves=6,
    )
    question: dict[str, Any] = {
        "question_id": "Q01",
        "question": QUESTION,
        "category": "test",
        "note": "",
        "keywords": draw(st.lists(rule, max_size=3)),
        "answers": {"R": ["東港です。"]},
    }
    keys = sorted(question)
    for index, value in draw(st.lists(st.tuples(st.integers(0, 20), values), max_size=2)):
        question[keys[index % len(keys)]] = value
    data = encoded(question)
    return draw(st.one_of(st.just(data), mutated(data), odd_files))


# A keyword the core cannot take (a lone surrogate), always tried: the examples hypothesis
# generates depend on the modules loaded before the test.
SURROGATE_KEYWORD = encoded(
    {
        "question_id": "Q01",
        "question": QUESTION,
        "category": "test",
        "note": "",
        "keywords": [{"t": "\ud800"}],
        "answers": {"R": ["東港です。"]},
    }
)


@pytest.mark.slow
@FUZZ
@given(raw=question_files())
@example(raw=SURROGATE_KEYWORD)
def test_question_file_reader(tmp_path: Path, raw: bytes) -> None:
    from pfgen_fast.pfgen.data import load_question
    from pfgen_fast.pfgen.scorer import QuestionScorer

    path = tmp_path / "Q01.json"
    path.write_bytes(raw)
    try:
        question = load_question(path)
    except PfgenError:
        return
    # A question the reader takes can be scored, or the scorer names what it cannot use.
    try:
        QuestionScorer(question).score(["東港です。"])
    except PfgenError:
        pass


@st.composite
def candidate_blocks(draw: st.DrawFn) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        record: dict[str, Any] = {"question": QUESTION, "answer": draw(texts)}
        if draw(st.booleans()):
            record["source"] = draw(st.one_of(texts, values))
        if draw(st.booleans()):
            record[draw(st.sampled_from(["question", "answer", "extra"]))] = draw(values)
        line = encoded(record)
        lines.append(draw(mutated(line)) if draw(st.booleans()) else line)
    lines += draw(st.lists(st.sampled_from([nesting(1100), b"", b"null", b"{}"]), max_size=2))
    random.Random(draw(st.integers(0, 99))).shuffle(lines)
    return b"\n".join(lines)


@pytest.mark.slow
@FUZZ
@given(block=candidate_blocks())
def test_candidate_reader(tmp_path: Path, block: bytes) -> None:
    from pfgen_fast.pfgen.construct.candidates import Problems, candidate_batches
    from pfgen_fast.pfgen.data import load_questions

    questions = {q.question: q for q in load_questions(write_data(tmp_path / "data")).values()}
    path = tmp_path / "candidates.jsonl"
    path.write_bytes(block)
    problems = Problems()
    try:
        batches = list(candidate_batches(path, "X", questions, problems))
    except PfgenError:
        return
    read = sum(len(series) for batch in batches for series in batch.values())
    lines = [line for line in block.split(b"\n") if line.strip()]
    assert read + problems.count == len(lines)
