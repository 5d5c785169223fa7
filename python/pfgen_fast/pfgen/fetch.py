"""Getting the published benchmark data, and checking a data directory against the manifest
the project ships (`reference_data/pfgen-bench-data.json`: hashes only, no data)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

from pfgen_fast.common.archive import fetch_archive, verify_files
from pfgen_fast.common.files import cache_dir, output_folder
from pfgen_fast.common.pfgen_data import QUESTION_FILE
from pfgen_fast.pfgen.data import metadata_hash

MANIFEST = Path(__file__).resolve().parents[1] / "reference_data" / "pfgen-bench-data.json"


def load_manifest() -> dict[str, Any]:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def verify_data(data_dir: Path, manifest: dict[str, Any] | None = None) -> list[str]:
    """Every difference between the question files of `data_dir` and the manifest."""
    manifest = manifest or load_manifest()
    problems = verify_files(data_dir, manifest["files"], "sha1")
    present = {p.name for p in data_dir.iterdir() if QUESTION_FILE.fullmatch(p.name)}
    for name in sorted(present - set(manifest["files"])):
        problems.append(f"{data_dir / name}: not a file of the published data")
    if not problems and metadata_hash(data_dir) != manifest["metadata_hash"]:
        problems.append(f"{data_dir}: metadata hash differs from {manifest['metadata_hash']}")
    return problems


def default_url(ref: str | None = None) -> str:
    manifest = load_manifest()
    return manifest["archive_url"].format(ref=ref or manifest["ref"])


def in_data_folder(relative: PurePosixPath) -> bool:
    return len(relative.parts) >= 2 and relative.parts[0] == "data"


def fetch_data(url: str, destination: Path | None = None) -> Path:
    """Downloads the repository archive, checks its question files against the manifest and
    puts its `data/` folder in place (the cache by default); a mismatch is an error, nothing
    replaced."""
    destination = output_folder(destination or cache_dir() / "data")
    # The archive's files keep their `data/` prefix: fetched beside the destination, checked,
    # then the folder itself is moved into place.
    fetched = fetch_archive(
        url,
        destination.with_name(f".{destination.name}-fetched"),
        in_data_folder,
        lambda staging: verify_data(staging / "data"),
    )
    try:
        if destination.exists():
            shutil.rmtree(destination)
        (fetched / "data").rename(destination)
    finally:
        shutil.rmtree(fetched, ignore_errors=True)
    return destination
