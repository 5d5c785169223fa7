"""Built n-gram tables kept on disk between runs: loading a question's tables takes a few
milliseconds, building them about 40.

The files live in `tables/` of the cache (`$PFGEN_FAST_CACHE`, else `~/.cache/pfgen_fast`),
in a folder per build of the core, one file per question and set of sources, named by a
digest of the reference answers they hold: a changed question file gets new tables. The files
take at most CACHE_LIMIT_BYTES: the least recently used (read or written) go first.
`PFGEN_FAST_TABLE_CACHE=0` turns the cache off.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import time
from pathlib import Path

import orjson

from pfgen_fast import _core
from pfgen_fast._core import pfgen as core_pfgen
from pfgen_fast._core.pfgen import KeywordRule
from pfgen_fast.common.files import cache_dir, replaced_atomically
from pfgen_fast.pfgen.data import Question

CACHE_SWITCH = "PFGEN_FAST_TABLE_CACHE"
# Room for the tables of all questions, and as much for `stability`'s, of a few versions of
# the data or builds of the core: an installed release and a development checkout
# can share the cache, and reference sets being rebuilt do not fill the disk.
CACHE_LIMIT_BYTES = 2 << 30


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
    path: Path, sources: list[str], rules: list[tuple[KeywordRule, float]], num_external: int
) -> core_pfgen.QuestionScorer | None:
    """The core scorer of the tables kept at `path`; None if there are none, or if they are
    damaged (they are then built again and replaced)."""
    try:
        scorer = core_pfgen.QuestionScorer.load(path, sources, rules, num_external)
    except (OSError, ValueError):
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # used now: the least recently used files leave the cache first
    return scorer


def trim_cache(written: Path) -> None:
    """Drops the least recently used table files of every build, never `written`, until they
    take at most CACHE_LIMIT_BYTES, the temporary files of writers gone for an hour, then the
    folders of other builds left empty."""
    tables = written.parent.parent
    abandoned = time.time() - 3600  # a writer takes seconds
    files = []
    for path in tables.glob("*/*"):
        with contextlib.suppress(OSError):  # dropped meanwhile by another process
            status = path.stat()
            if path.suffix == ".tables":
                files.append((status.st_mtime, status.st_size, path))
            elif path.suffix == ".tmp" and status.st_mtime < abandoned:
                path.unlink()
    total = sum(size for _, size, _ in files)
    for _, size, path in sorted(files):
        if total <= CACHE_LIMIT_BYTES:
            break
        if path != written:
            with contextlib.suppress(OSError):
                path.unlink()
                total -= size
    with contextlib.suppress(OSError):  # the whole cache removed meanwhile
        for folder in tables.iterdir():
            if folder != written.parent:
                with contextlib.suppress(OSError):  # not empty
                    folder.rmdir()


def save_tables(scorer: core_pfgen.QuestionScorer, path: Path) -> None:
    """Writes the tables through a temporary file (no partial file under `path`, even with
    several processes or threads at once), then trims the cache. The cache only saves time:
    a failure to write leaves it as it was."""
    try:
        with replaced_atomically(path) as temporary:
            scorer.save_tables(temporary)
    except OSError:  # WriteError included
        return
    trim_cache(path)
