"""Reading a benchmark's Python source without running it: the literal a name is given at
module level, in a method or in a function nested in one, and the parts of a returned f-string;
what the readers cannot take is refused in one line naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.python_source import KeyField, assigned_literal, returned_fstring

SOURCE = """
SUFFIX = ("one " "two")
COUNT: int = 3


class Task:
    def doc_to_text(doc):
        suffix = "\\nin the method"
        return doc["q"] + suffix

    def prepare(self):
        def build(example):
            return f"{example['Q']} A: {example['A']}. end"

        def formatted(example):
            return f"{example['Q']!r}"

        return build
"""


@pytest.fixture
def module(tmp_path: Path) -> Path:
    path = tmp_path / "task.py"
    path.write_text(SOURCE, encoding="utf-8")
    return path


def test_literals_by_scope(module: Path) -> None:
    assert assigned_literal(module, "SUFFIX") == "one two"
    assert assigned_literal(module, "COUNT") == 3
    assert assigned_literal(module, "suffix", "Task.doc_to_text") == "\nin the method"
    with pytest.raises(DataError, match=r"task.py: no literal suffix found$"):
        assigned_literal(module, "suffix")  # not at module level
    with pytest.raises(DataError, match=r"task.py: no Task.missing defined"):
        assigned_literal(module, "suffix", "Task.missing")


def test_returned_fstring_parts(module: Path) -> None:
    assert returned_fstring(module, "Task.prepare.build") == [
        KeyField("Q"),
        " A: ",
        KeyField("A"),
        ". end",
    ]
    with pytest.raises(DataError, match="an f-string field other than name"):
        returned_fstring(module, "Task.prepare.formatted")
    with pytest.raises(DataError, match="Task.doc_to_text returns no f-string"):
        returned_fstring(module, "Task.doc_to_text")
