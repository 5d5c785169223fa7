"""Reading a benchmark's Python source without running it: the literal a name is given at
module level or in a method; what the reader cannot find is refused in one line naming the
file."""

from __future__ import annotations

from pathlib import Path

import pytest

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.python_source import assigned_literal

SOURCE = """
SUFFIX = ("one " "two")
COUNT: int = 3


class Task:
    def doc_to_text(doc):
        suffix = "\\nin the method"
        return doc["q"] + suffix
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
