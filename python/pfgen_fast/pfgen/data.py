"""The benchmark's question files (`data/Qxx.json`): where they are and how they are read
(`pfgen.outputs`, which the judge reads too), their metadata hash, and the published data
(`data fetch|verify`) checked against the manifest the project ships
(`reference_data/pfgen-bench-data.json`: SHA-1 digests only, no data)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pfgen_fast.common.published_data import PublishedData
from pfgen_fast.pfgen.outputs import DATA_DEFAULT as DATA_DEFAULT
from pfgen_fast.pfgen.outputs import QUESTION_FILE, question_files
from pfgen_fast.pfgen.outputs import Question as Question
from pfgen_fast.pfgen.outputs import default_data_dir as default_data_dir
from pfgen_fast.pfgen.outputs import load_question as load_question
from pfgen_fast.pfgen.outputs import load_questions as load_questions
from pfgen_fast.pfgen.outputs import resolve_data_dir as resolve_data_dir


def metadata_hash(data_dir: str | Path) -> str:
    """SHA-1 of the concatenated SHA-1 hex digests of the Qxx.json files, in sorted path order."""
    digests = "".join(hashlib.sha1(p.read_bytes()).hexdigest() for p in question_files(data_dir))
    return hashlib.sha1(digests.encode()).hexdigest()


def unpublished_files(data_dir: Path, manifest: dict[str, Any]) -> list[str]:
    """Question files the published data does not have, or else a metadata hash that is not
    the published one."""
    present = {p.name for p in data_dir.iterdir() if QUESTION_FILE.fullmatch(p.name)}
    problems = [
        f"{data_dir / name}: not a file of the published data"
        for name in sorted(present - set(manifest["files"]))
    ]
    if not problems and metadata_hash(data_dir) != manifest["metadata_hash"]:
        problems.append(f"{data_dir}: metadata hash differs from {manifest['metadata_hash']}")
    return problems


PUBLISHED = PublishedData(
    name="pfgen-bench",
    manifest="pfgen-bench-data.json",
    cached="data",
    find_default=default_data_dir,
    hint="give DIR (the data/ directory of a pfgen-bench checkout), set PFGEN_DATA_DIR, or run "
    "`python -m pfgen_fast data fetch` first",
    algorithm="sha1",
    folder="data",
    more_problems=unpublished_files,
)
