"""A pytest plugin of `.ci/without_shared.py`: `--skipped-ids FILE` writes the test function of
every test that was skipped (its node id without parameters: a test parametrized by the
published files has other parameters where they are), one a line, each once, for the run with
the published files to take (pytest reads arguments from `@FILE`). Under pytest-xdist each
worker sends what it skipped to the controller, which writes the file: the controller sees
the workers' test reports but only the first of several module skips with the same reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """An xdist worker is done: what it skipped."""
    for nodeid in getattr(node, "workeroutput", {}).get("skipped_ids", ()):
        SKIPPED[nodeid] = None


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker
        workeroutput["skipped_ids"] = list(SKIPPED)
        return
    path = session.config.getoption("skipped_ids")
    if path is not None:
        path.write_text("".join(f"{nodeid}\n" for nodeid in SKIPPED), encoding="utf-8")
