"""The core's reader of `score` input (`core_pfgen.AnswerLines`) against orjson: every line it reads
is one orjson reads, with the same question and answer; it leaves the others to orjson."""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pfgen_fast._core import pfgen as core_pfgen

texts = st.text(st.characters(codec="utf-8"), max_size=8) | st.sampled_from(["q", "答え", ""])
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
field_names = st.sampled_from(["question", "answer", "scores", "x"]) | texts
objects = st.lists(st.tuples(field_names, values), max_size=5)


def write_line(items: list[tuple[str, object]], ensure_ascii: bool) -> bytes:
    """A JSON object with the items in order (repeated keys kept, as a writer may do)."""
    fields = [
        json.dumps(key, ensure_ascii=ensure_ascii) + ": " + json.dumps(value, ensure_ascii=False)
        for key, value in items
    ]
    return ("{" + ", ".join(fields) + "}").encode("utf-8", "surrogatepass")


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    items = draw(objects)
    if draw(st.integers(0, 3)) > 0:
        items = [("question", draw(texts)), *items, ("answer", draw(texts))]
    line = write_line(items, draw(st.booleans()))
    # Sometimes broken: a byte replaced, or one cut off.
    if line and draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(line) - 1))
        line = (
            line[:at]
            + draw(st.sampled_from([b"", b"\xff", b"\\", b'"', b"\n", b"e9999"]))
            + line[at + 1 :]
        )
    return line.replace(b"\n", b"\\n")


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(lines(), min_size=1, max_size=6))
def test_lines_read_are_those_orjson_reads_alike(block_lines: list[bytes]):
    block = b"\n".join(block_lines) + b"\n"
    read = core_pfgen.AnswerLines(block)
    question_of_line = read.question_of_line.tolist()
    assert len(question_of_line) == len(block_lines)
    answers = {index: iter(read.answers(index)) for index in range(len(read.questions))}
    for index, (line, question) in enumerate(zip(block_lines, question_of_line, strict=True)):
        assert read.line(index) == line
        if question == -1:
            assert not line.strip()
            continue
        if question < 0:
            continue
        record = orjson.loads(line)  # the core reads only what orjson reads
        assert "scores" not in record
        assert record["question"] == read.questions[question]
        assert record["answer"] == next(answers[question])


def test_lines_and_their_bytes():
    block = b'{"question": "q", "answer": "a"}\r\n\n[1]\n{"question": "q", "answer": "b"}'
    read = core_pfgen.AnswerLines(block)
    assert read.question_of_line.tolist() == [0, -1, -2, 0]
    assert read.questions == ["q"]
    assert read.answers(0) == ["a", "b"]
    assert read.line(2) == b"[1]"
    assert read.line(0) == b'{"question": "q", "answer": "a"}\r'
    # Unscored lines are left out; given outputs are written as given.
    assert read.write([(2, b"x\n")]) == b"x\n"
