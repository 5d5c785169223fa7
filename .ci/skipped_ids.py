"""A pytest plugin of `.ci/without_shared.py`: `--skipped-ids FILE` writes the node id of every
test that was skipped, one a line, for the run with the published files to take (pytest reads
arguments from `@FILE`)."""

from __future__ import annotations

from pathlib import Path

import pytest

SKIPPED: list[str] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--skipped-ids", type=Path, help="write the skipped tests' node ids here")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and report.when in ("setup", "call"):
        SKIPPED.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("skipped_ids")
    if path is not None:
        path.write_text("".join(f"{nodeid}\n" for nodeid in SKIPPED), encoding="utf-8")
