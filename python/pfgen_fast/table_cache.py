"""Built n-gram tables kept on disk between runs: loading a question's tables takes a few
milliseconds, building them about 40.

The files live in `tables/` of the cache (`$PFGEN_FAST_CACHE`, else `~/.cache/pfgen_fast`),
in a folder per build of the core (a new build drops the others' folders), one file per
question and set of sources, named by a digest of the reference answers they hold: a changed
question file gets new tables. `PFGEN_FAST_TABLE_CACHE=0` turns the cache off.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast import _core
from pfgen_fast.data import Question, cache_dir

CACHE_SWITCH = "PFGEN_FAST_TABLE_CACHE"


@functools.cache
def core_build() -> str:
    """A digest of the compiled core: tables are valid for the build that wrote them."""
    return hashlib.sha1(Path(_core.__file__).read_bytes()).hexdigest()[:16]


def table_file(question: Question, sources: list[str]) -> Path | None:
    """Where the tables of `question`'s `sources` are kept, or None if the cache is off."""
    if os.environ.get(CACHE_SWITCH) == "0":
        return None
    try:
        answers = orjson.dumps([[key, question.answers[key]] for key in sources])
    except orjson.JSONEncodeError:  # a lone surrogate: building the tables reports it
        return None
    return cache_dir() / "tables" / core_build() / f"{hashlib.sha1(answers).hexdigest()}.tables"


def load_tables(
    path: Path, sources: list[str], rules: list[tuple[Any, float]], num_external: int
) -> _core.QuestionScorer | None:
    """The core scorer of the tables kept at `path`; None if there are none, or if they are
    damaged (they are then built again and replaced)."""
    try:
        return _core.QuestionScorer.load(path, sources, rules, num_external)
    except (OSError, ValueError):
        return None


def save_tables(scorer: _core.QuestionScorer, path: Path) -> None:
    """Writes the tables through a temporary file (no partial file under `path`, even with
    several processes or threads at once) and drops the folders of other core builds. The
    cache only saves time: a failure to write leaves it as it was."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        scorer.save_tables(temporary)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
        return
    for other in path.parent.parent.iterdir():
        if other != path.parent:
            shutil.rmtree(other, ignore_errors=True)
