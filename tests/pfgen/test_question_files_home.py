"""The question files have one home, `pfgen.data`; `pfgen.outputs` re-exports them for the
other rooms, and `data` does not import `outputs` (the package-wide import-graph test checks
that no circle is left)."""

from __future__ import annotations

import ast
from pathlib import Path

from pfgen_fast.pfgen import data, outputs


def test_the_question_files_are_defined_in_data() -> None:
    for name in ("Question", "load_question", "load_questions", "question_files"):
        assert getattr(data, name).__module__ == "pfgen_fast.pfgen.data"
        assert getattr(outputs, name) is getattr(data, name)
    tree = ast.parse(Path(data.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "pfgen_fast.pfgen.outputs" not in imported
