"""The suite on a machine without the published files (a step of `.ci/run`): it runs in a copy
of the working tree with no `../shared` beside it, none of the variables naming the files, an
empty user cache and the network off. It passes when nothing errs or fails, collection
included, when the tests that need the files are skipped with the reasons that say how to get
them, and when no other skip is about the files. The skipped tests' node ids go to FILE: the
next step of `.ci/run` runs them with the files, so that every test runs once. Arguments after
FILE go to pytest.

    python3 .ci/without_shared.py FILE [PYTEST_ARGUMENT ...]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from published import FILE_SETS  # noqa: E402 (the tests' own list of the published files)

# pytest's status when it collected no test.
NO_TESTS_COLLECTED = 5


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


def run_suite(scratch: Path, skipped: Path, arguments: list[str]) -> tuple[int, Path]:
    """pytest's status and its JUnit report, run with `arguments` in a copy of the tree in
    `scratch`; the skipped tests' node ids written to `skipped`."""
    project = scratch / "project"  # no `shared` beside it
    copy_project(project)
    report = scratch / "report.xml"
    prefix, proxies = network_off()
    unset = {fileset.variable for fileset in FILE_SETS.values()} | {"PFGEN_DATA_DIR"}
    environment = {k: v for k, v in os.environ.items() if k not in unset and "PROXY" not in k}
    environment.update(
        proxies,
        PYTHONPATH=os.pathsep.join([str(project / "python"), str(project / ".ci")]),
        PFGEN_FAST_CACHE=str(scratch / "user-cache"),
        XDG_CACHE_HOME=str(scratch / "xdg-cache"),
    )
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "skipped_ids"]
    command += [f"--junitxml={report}", f"--skipped-ids={skipped.resolve()}", *arguments]
    done = subprocess.run([*prefix, *command], cwd=project, env=environment)
    return done.returncode, report


def problems_in(report: Path, shared: Path) -> list[str]:
    """What the report shows wrong: errors, failures, skips that are not the published files'
    reasons but mention them, or no skip for want of the files."""
    suite = ElementTree.parse(report).getroot().find("testsuite")
    if suite is None:
        return [f"{report}: no testsuite"]
    found = []
    if suite.get("errors") != "0" or suite.get("failures") != "0":
        found.append(f"{suite.get('errors')} errors, {suite.get('failures')} failures")
    reasons = {
        skipped.get("message", "")
        for case in suite.iter("testcase")
        for skipped in case.iter("skipped")
    }
    how_to_get = {fileset.how_to_get(shared) for fileset in FILE_SETS.values()}
    if not reasons & how_to_get:
        found.append("no test was skipped for want of the published files")
    # Other skips are about this machine (a Python version, a device), never about the files.
    mentions = [*{f.variable for f in FILE_SETS.values()}, "shared", "empty parameter set"]
    found += [
        f"a skip about the files with another reason: {reason}"
        for reason in sorted(reasons - how_to_get)
        if any(m in reason for m in mentions)
    ]
    if not int(suite.get("tests", "0")) > int(suite.get("skipped", "0")) > 0:
        found.append(f"{suite.get('tests')} tests, {suite.get('skipped')} skipped")
    return found


def main() -> int:
    if len(sys.argv) < 2:
        usage = "usage: python3 .ci/without_shared.py SKIPPED_IDS_FILE [PYTEST_ARGUMENT ...]"
        print(usage, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="pfgen-fast-without-shared-") as scratch:
        status, report = run_suite(Path(scratch), Path(sys.argv[1]), sys.argv[2:])
        if status == NO_TESTS_COLLECTED:
            print("without ../shared: no test was collected", file=sys.stderr)
            return status
        if not report.exists():
            print(f"without ../shared: pytest stopped (status {status})", file=sys.stderr)
            return status or 1
        problems = problems_in(report, Path(scratch) / "shared")
    for problem in problems:
        print(f"without ../shared: {problem}", file=sys.stderr)
    if status != 0:
        return status
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
