"""Getting the published benchmark data, and checking a data directory against the manifest
the project ships (`reference_data/pfgen-bench-data.json`: hashes only, no data)."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path, PurePosixPath
from typing import Any

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.files import cache_dir
from pfgen_fast.pfgen.data import QUESTION_FILE, metadata_hash

MANIFEST = Path(__file__).resolve().parents[1] / "reference_data" / "pfgen-bench-data.json"
DOWNLOAD_TIMEOUT_SECONDS = 120


def load_manifest() -> dict[str, Any]:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def verify_data(data_dir: Path, manifest: dict[str, Any] | None = None) -> list[str]:
    """Every difference between the question files of `data_dir` and the manifest."""
    manifest = manifest or load_manifest()
    problems = []
    present = {p.name for p in data_dir.iterdir() if QUESTION_FILE.fullmatch(p.name)}
    for name, expected in manifest["files"].items():
        if name not in present:
            problems.append(f"{data_dir / name}: missing")
            continue
        digest = hashlib.sha1((data_dir / name).read_bytes()).hexdigest()
        if digest != expected:
            problems.append(f"{data_dir / name}: SHA-1 {digest}, expected {expected}")
    for name in sorted(present - set(manifest["files"])):
        problems.append(f"{data_dir / name}: not a file of the published data")
    if not problems and metadata_hash(data_dir) != manifest["metadata_hash"]:
        problems.append(f"{data_dir}: metadata hash differs from {manifest['metadata_hash']}")
    return problems


def default_url(ref: str | None = None) -> str:
    manifest = load_manifest()
    return manifest["archive_url"].format(ref=ref or manifest["ref"])


def download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_SECONDS) as response:
            return response.read()
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise DataError(f"{url}: download failed: {reason}") from None


def extract_data_dir(archive: bytes, url: str, target: Path) -> None:
    """Extracts the `data/` folder of a repository archive (`<top>/data/...`) into `target`."""
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:*") as tar:
            members = []
            for member in tar.getmembers():
                parts = PurePosixPath(member.name).parts
                if len(parts) < 3 or parts[1] != "data" or not member.isfile():
                    continue
                relative = PurePosixPath(*parts[2:])
                if relative.is_absolute() or ".." in relative.parts:
                    raise DataError(f"{url}: unsafe path in archive: {member.name}")
                members.append((member, relative))
            if not members:
                raise DataError(f"{url}: the archive has no data/ folder")
            for member, relative in members:
                source = tar.extractfile(member)
                if source is None:
                    continue
                destination = target.joinpath(*relative.parts)
                destination.parent.mkdir(parents=True, exist_ok=True)
                with source, open(destination, "wb") as out:
                    shutil.copyfileobj(source, out)
    except (tarfile.TarError, EOFError, OSError) as error:
        raise DataError(f"{url}: not a readable .tar.gz archive: {error}") from None


def fetch_data(url: str, destination: Path | None = None) -> Path:
    """Downloads the archive, checks its question files against the manifest and puts its
    `data/` folder in place (the cache by default); a mismatch is an error, nothing replaced."""
    destination = destination or cache_dir() / "data"
    archive = download(url)
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=destination.parent, prefix=".data-"))
    try:
        extract_data_dir(archive, url, staging)
        problems = verify_data(staging)
        if problems:
            raise DataError(
                f"{url}: the data does not match the manifest:\n  " + "\n  ".join(problems)
            )
        if destination.exists():
            shutil.rmtree(destination)
        staging.rename(destination)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return destination
