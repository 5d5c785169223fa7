"""The suite on a machine without the published files: run in a copy of the project with no
`../shared` beside it, none of the variables naming the files, an empty user cache and the
network off. Nothing errs or fails, collection included, and every test that needed the files
is skipped with the reason that says how to get them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from cli_runner import ROOT
from published import FILE_SETS

THIS_TEST = Path(__file__).relative_to(ROOT).as_posix()
# Where the copy's suite is stopped if it hangs: well above its run time.
SUITE_TIMEOUT_SECONDS = 1200


def network_off() -> tuple[list[str], dict[str, str]]:
    """A command prefix that runs without network (a new network namespace with only its
    loopback up, where unshare may make one), else proxy variables pointing every outside
    address at a port nothing listens on."""
    namespace = ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-rn"]
    prefix = [*namespace, "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    if shutil.which("unshare") and shutil.which("ip"):
        probe = subprocess.run([*prefix, "true"], capture_output=True)
        if probe.returncode == 0:
            return prefix, {}
    refused = "http://127.0.0.1:9"
    proxies = {name: refused for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")}
    return [], {**proxies, "NO_PROXY": "127.0.0.1,localhost"}


def copy_project(target: Path) -> None:
    """The working tree as it is (the built extension included), without git's folder and
    build and test leftovers."""
    ignored = shutil.ignore_patterns(
        ".git", "target", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"
    )
    shutil.copytree(ROOT, target, symlinks=True, ignore=ignored)


def test_suite_without_published_files(tmp_path: Path) -> None:
    project = tmp_path / "project"  # no `shared` beside it
    copy_project(project)
    report = tmp_path / "report.xml"
    prefix, proxies = network_off()
    unset = {fileset.variable for fileset in FILE_SETS.values()} | {"PFGEN_DATA_DIR"}
    environment = {k: v for k, v in os.environ.items() if k not in unset and "PROXY" not in k}
    environment.update(
        proxies,
        PYTHONPATH=str(project / "python"),
        PFGEN_FAST_CACHE=str(tmp_path / "user-cache"),
        XDG_CACHE_HOME=str(tmp_path / "xdg-cache"),
    )
    # This test is left out of the copy's run: it would run the suite again.
    done = subprocess.run(
        [
            *prefix,
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-x",
            "-q",
            f"--deselect={THIS_TEST}::test_suite_without_published_files",
            f"--junitxml={report}",
        ],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT_SECONDS,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    suite = ElementTree.parse(report).getroot().find("testsuite")
    assert suite is not None
    assert suite.get("errors") == "0" and suite.get("failures") == "0"
    reasons = {
        skipped.get("message", "")
        for case in suite.iter("testcase")
        for skipped in case.iter("skipped")
    }
    how_to_get = {fileset.how_to_get(tmp_path / "shared") for fileset in FILE_SETS.values()}
    assert reasons & how_to_get, "no test was skipped for want of the published files"
    # Other skips are about this machine (a Python version, a device), never about the files.
    mentions = [*{f.variable for f in FILE_SETS.values()}, "shared", "empty parameter set"]
    others = [reason for reason in reasons - how_to_get if any(m in reason for m in mentions)]
    assert not others, others
    assert int(suite.get("tests", "0")) > int(suite.get("skipped", "0")) > 0
