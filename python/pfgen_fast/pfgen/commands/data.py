"""`data fetch` and `data verify`: get the published benchmark data and check it."""

from __future__ import annotations

import argparse
from pathlib import Path

from pfgen_fast.common.errors import DataError
from pfgen_fast.pfgen.data import default_data_dir, resolve_data_dir
from pfgen_fast.pfgen.fetch import default_url, fetch_data, verify_data


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    fetch = actions.add_parser("fetch", help="download the published data into the user cache")
    fetch.add_argument("--ref", help="git ref of pfnet-research/pfgen-bench (default: pinned)")
    fetch.add_argument("--url", help="archive URL (a .tar.gz of the repository)")
    fetch.add_argument("--dest", help="directory to write (default: the user cache)")
    verify = actions.add_parser("verify", help="check a data directory against the manifest")
    verify.add_argument("dir", nargs="?", help="data directory (default: ./data or the cache)")


def run(args: argparse.Namespace) -> int:
    if args.action == "fetch":
        url = args.url or default_url(args.ref)
        destination = fetch_data(url, Path(args.dest) if args.dest else None)
        print(f"fetched {url} into {destination} (verified)")
        return 0
    if args.dir is None and default_data_dir() is None:
        raise DataError(
            "no benchmark data found: give DIR (the data/ directory of a pfgen-bench checkout), "
            "set PFGEN_DATA_DIR, or run `python -m pfgen_fast data fetch` first"
        )
    data_dir = resolve_data_dir(args.dir)
    if not data_dir.is_dir():
        raise DataError(f"{data_dir}: not a directory")
    problems = verify_data(data_dir)
    if problems:
        listing = "\n  ".join(problems)
        raise DataError(f"{data_dir} does not match the published data:\n  {listing}")
    print(f"{data_dir}: all question files match the published data")
    return 0
