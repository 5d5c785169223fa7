"""Built n-gram tables kept on disk between runs: loading a question's tables takes a few
milliseconds, building them about 40.

The files live in `tables/` of the cache (`$PFGEN_FAST_CACHE`, else `~/.cache/pfgen_fast`),
in a folder per build of the core, one file per question and set of sources, named by a
digest of the reference answers they hold: a changed question file gets new tables. The folders
of the KEPT_BUILDS most recently used builds are kept, older ones dropped.
`PFGEN_FAST_TABLE_CACHE=0` turns the cache off.
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
# Builds of the core whose tables are kept: an installed release and a development checkout
# (or two virtual environments) can share the cache without dropping each other's tables.
KEPT_BUILDS = 3


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
        scorer = _core.QuestionScorer.load(path, sources, rules, num_external)
    except (OSError, ValueError):
        return None
    mark_used(path.parent)
    return scorer


@functools.cache
def mark_used(build_folder: Path) -> None:
    """Dates a build's folder as used now (once per process): builds that only read their
    tables stay among the most recently used. Writing a file into it dates it too."""
    with contextlib.suppress(OSError):
        os.utime(build_folder)


def drop_old_builds(build_folder: Path) -> None:
    """Drops the folders of other builds, all but the KEPT_BUILDS - 1 most recently used."""
    others = []
    with contextlib.suppress(OSError):
        for other in build_folder.parent.iterdir():
            if other != build_folder:
                with contextlib.suppress(OSError):  # dropped meanwhile by another process
                    others.append((other.stat().st_mtime, other))
    others.sort(reverse=True)
    for _, old in others[KEPT_BUILDS - 1 :]:
        shutil.rmtree(old, ignore_errors=True)


def save_tables(scorer: _core.QuestionScorer, path: Path) -> None:
    """Writes the tables through a temporary file (no partial file under `path`, even with
    several processes or threads at once) and drops the folders of builds used long ago. The
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
    drop_old_builds(path.parent)
