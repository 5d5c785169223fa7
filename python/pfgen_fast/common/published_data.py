"""A benchmark's published files as pfgen_fast gets them: fetched from the benchmark's
repository archive at the pinned commit, checked against the manifest the project ships in
`reference_data/` (digests only, never the files), and found without a directory being given.
Each room with published files declares one PublishedData in its `data` module; its `data
fetch|verify` command is this module's. The archive module (HTTP, tar) is imported only when
files are fetched or verified: every pfgen command imports its room's data module."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.files import cache_dir

REFERENCE_DATA = Path(__file__).resolve().parents[1] / "reference_data"


@dataclass(frozen=True)
class PublishedData:
    """`manifest`: a file of `reference_data/` with `repository`, `ref`, `archive_url` (with
    `{ref}`) and `files` (relative path -> digest). Without a folder given the files are
    looked for in the folder `variable` names, else in the fetched copy; `find_default`
    replaces that search where a benchmark has its own. `folder`: the archive's folder that
    is the data directory (its files are all kept), or None to keep the manifest's files at
    their paths. `more_problems`: checks beyond the digests, once those match."""

    name: str  # as messages name the benchmark
    manifest: str  # file name in reference_data/
    cached: str  # the folder below the user cache where `data fetch` writes without --dest
    hint: str  # how to get the files, for errors
    variable: str | None = None  # the environment variable that names the folder
    find_default: Callable[[], Path | None] | None = None
    algorithm: str = "sha256"
    folder: str | None = None
    more_problems: Callable[[Path, dict[str, Any]], list[str]] | None = None

    def fetched_dir(self) -> Path:
        return cache_dir() / self.cached

    def named_or_fetched_dir(self) -> Path:
        """The folder `variable` names, else the fetched copy."""
        named = os.environ.get(self.variable) if self.variable else None
        return Path(named) if named else self.fetched_dir()

    def default_dir(self) -> Path | None:
        """Where the files are looked for when no folder is given."""
        if self.find_default is not None:
            return self.find_default()
        return self.named_or_fetched_dir()

    def load_manifest(self) -> dict[str, Any]:
        return json.loads((REFERENCE_DATA / self.manifest).read_text(encoding="utf-8"))

    def default_url(self, ref: str | None = None) -> str:
        """The repository archive's URL at `ref` (default: the pinned commit)."""
        manifest = self.load_manifest()
        return manifest["archive_url"].format(ref=ref or manifest["ref"])

    def verify(self, directory: Path, names: list[str] | None = None) -> list[str]:
        """Every difference between the files of `directory` (the manifest's, or only
        `names`) and the manifest."""
        from pfgen_fast.common.archive import verify_files

        manifest = self.load_manifest()
        expected = manifest["files"]
        if names is not None:
            return verify_files(directory, {name: expected[name] for name in names}, self.algorithm)
        problems = verify_files(directory, expected, self.algorithm)
        if not problems and self.more_problems is not None:
            problems = self.more_problems(directory, manifest)
        return problems

    def fetch(self, url: str, destination: Path | None = None) -> Path:
        """Downloads the archive and puts the verified files in place (the user cache by
        default); on a mismatch nothing is replaced."""
        from pfgen_fast.common.archive import fetch_archive

        manifest = self.load_manifest()
        names = set(manifest["files"])
        folder = self.folder

        def place(relative: PurePosixPath) -> PurePosixPath | None:
            if folder is None:
                return relative if str(relative) in names else None
            inside = len(relative.parts) >= 2 and relative.parts[0] == folder
            return PurePosixPath(*relative.parts[1:]) if inside else None

        return fetch_archive(url, destination or self.fetched_dir(), place, self.verify)

    def find_dir(self, directory: Path | None) -> Path:
        """The directory given, else the default one; a DataError with the hint when there
        is none."""
        found = directory if directory is not None else self.default_dir()
        if found is None or not found.is_dir():
            where = f" at {found}" if found is not None else ""
            raise DataError(f"{self.name} data not found{where}: {self.hint}")
        return found

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """`data fetch [--ref REF | --url URL] [--dest DIR]` and `data verify [DIR]`."""
        repository = self.load_manifest()["repository"]
        steps = parser.add_subparsers(dest="step", required=True, metavar="STEP")
        fetch = steps.add_parser("fetch", help="download the pinned files into the user cache")
        fetch.add_argument("--ref", help=f"git ref of {repository} (default: pinned)")
        fetch.add_argument("--url", help="archive URL (a .tar.gz of the repository)")
        fetch.add_argument("--dest", type=Path, help="directory to write (default: the user cache)")
        verify = steps.add_parser("verify", help="check a directory against the manifest")
        verify.add_argument("dir", nargs="?", type=Path, help="the directory (default: found)")

    def run(self, args: argparse.Namespace) -> int:
        if args.step == "fetch":
            url = args.url or self.default_url(args.ref)
            destination = self.fetch(url, args.dest)
            print(f"fetched {url} into {destination} (verified)")
            return 0
        directory = self.find_dir(args.dir)
        problems = self.verify(directory)
        if problems:
            listing = "\n  ".join(problems)
            raise DataError(f"{directory} does not match {self.name}'s manifest:\n  {listing}")
        print(f"{directory}: every file matches {self.name}'s manifest")
        return 0
