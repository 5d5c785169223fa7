"""Published files of the benchmarks, fetched from their repositories' archives and checked
against the digests the project ships in `reference_data/` (hashes only, never the files).
Downloads go through httpx with the retry policy of `common.retries`, as model calls do."""

from __future__ import annotations

import hashlib
import io
import shutil
import tarfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import httpx

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.files import output_folder, temporary_folder
from pfgen_fast.common.retries import backoffs, retry_after, retryable

DOWNLOAD_TIMEOUT_SECONDS = 120.0
# Tries after the first, for a status worth another try, a timeout or a dropped connection.
DOWNLOAD_RETRIES = 5
ALGORITHM_NAMES = {"sha1": "SHA-1", "sha256": "SHA-256"}


def download(url: str) -> bytes:
    """The body at `url` (redirects followed, as GitHub's archive links need), or the file a
    file:// URL names; a DataError once the tries are used up, or at once for a status that
    retrying cannot change."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "file":
        try:
            return Path(urllib.request.url2pathname(parts.path)).read_bytes()
        except OSError as error:
            raise DataError(f"{url}: download failed: {error.strerror or error}") from None
    waits = backoffs()
    failure = ""
    with httpx.Client(follow_redirects=True, timeout=DOWNLOAD_TIMEOUT_SECONDS) as http:
        for tries in range(1, DOWNLOAD_RETRIES + 2):
            wait: float | None = None
            try:
                response = http.get(url)
            except (httpx.InvalidURL, httpx.UnsupportedProtocol) as error:
                raise DataError(f"{url}: download failed: {error}") from None
            except httpx.HTTPError as error:  # refused, reset, timed out, protocol errors
                failure = str(error) or type(error).__name__
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return response.content
                failure = f"HTTP {status}"
                if not retryable(status):
                    raise DataError(f"{url}: download failed: {failure}")
                if status == 429:
                    wait = retry_after(response.headers.get("Retry-After"))
            if tries <= DOWNLOAD_RETRIES:
                backoff = next(waits)
                time.sleep(backoff if wait is None else wait)
    raise DataError(f"{url}: download failed after {tries} tries: {failure}")


def extract_members(
    archive: bytes, url: str, target: Path, place: Callable[[PurePosixPath], PurePosixPath | None]
) -> None:
    """Extracts the regular files of a repository archive (`<top>/...`) into `target`, each
    at the path `place` gives for its path below the top folder (None: not extracted)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:*") as tar:
            members = []
            for member in tar.getmembers():
                parts = PurePosixPath(member.name).parts
                if len(parts) < 2 or not member.isfile():
                    continue
                relative = place(PurePosixPath(*parts[1:]))
                if relative is None:
                    continue
                if relative.is_absolute() or ".." in relative.parts:
                    raise DataError(f"{url}: unsafe path in archive: {member.name}")
                members.append((member, relative))
            if not members:
                raise DataError(f"{url}: the archive holds none of the expected files")
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


def fetch_archive(
    url: str,
    destination: Path,
    place: Callable[[PurePosixPath], PurePosixPath | None],
    verify: Callable[[Path], list[str]],
) -> Path:
    """Downloads a repository archive, extracts the files `place` places into a staging folder
    beside `destination`, checks them with `verify` (a list of problems) and only then puts
    the folder in place of `destination`; on any problem nothing is replaced."""
    destination = output_folder(destination)
    archive = download(url)
    destination.parent.mkdir(parents=True, exist_ok=True)
    # Named after this process: a later fetch removes what a killed one left.
    with temporary_folder(f".{destination.name}-", destination.parent) as staging:
        extract_members(archive, url, staging, place)
        problems = verify(staging)
        if problems:
            raise DataError(
                f"{url}: the files do not match the manifest:\n  " + "\n  ".join(problems)
            )
        if destination.exists():
            shutil.rmtree(destination)
        staging.rename(destination)
    return destination


def file_digest(path: Path, algorithm: str = "sha256") -> str:
    return hashlib.new(algorithm, path.read_bytes()).hexdigest()


def verify_files(directory: Path, expected: dict[str, str], algorithm: str = "sha256") -> list[str]:
    """Every difference between the files of `directory` named (by relative path) in
    `expected` and their expected digests."""
    problems = []
    name = ALGORITHM_NAMES.get(algorithm, algorithm)
    for relative, digest in expected.items():
        path = directory / relative
        if not path.is_file():
            problems.append(f"{path}: {'not a file' if path.exists() else 'missing'}")
            continue
        try:
            actual = file_digest(path, algorithm)
        except OSError as error:
            problems.append(f"{path}: cannot read: {error.strerror or error}")
            continue
        if actual != digest:
            problems.append(f"{path}: {name} {actual}, expected {digest}")
    return problems
