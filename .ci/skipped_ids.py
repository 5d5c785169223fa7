"""A pytest plugin of `.ci/without_shared.py`: `--skipped-ids FILE` writes the test function of
every test that was skipped (its node id without parameters: a test parametrized by the
published files has other parameters where they are), one a line, each once, for the run with
the published files to take (pytest reads arguments from `@FILE`)."""

from __future__ import annotations

from pathlib import Path

import pytest

SKIPPED: dict[str, None] = {}  # test functions, in the order met


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--skipped-ids", type=Path, help="write the skipped tests' node ids here")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and report.when in ("setup", "call"):
        SKIPPED[report.nodeid.partition("[")[0]] = None


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A whole module skipped while it was collected."""
    if report.skipped:
        SKIPPED[report.nodeid] = None


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("skipped_ids")
    if path is not None:
        path.write_text("".join(f"{nodeid}\n" for nodeid in SKIPPED), encoding="utf-8")
