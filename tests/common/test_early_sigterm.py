"""SIGTERM while the command line starts: from the first statement of `python -m pfgen_fast`
on, a terminated run exits 143 with "terminated", never killed by the signal (-15) and never
with a traceback. Before that statement only the interpreter runs: its start-up is the one
window left, as for any Python program."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import published

TRIES = 40
# The delays after the handler is in place, spread over the start-up (imports, argument
# parsing, reading the data) and into the command's own work.
LONGEST_DELAY = 0.6
# Modules that may be loaded before the handler: the package itself, imported by `-m` first,
# and the handler's own (it imports only the standard library's os, signal and threading).
BEFORE_HANDLER = {
    "pfgen_fast",
    "pfgen_fast.common",
    "pfgen_fast.common.errors",
    "pfgen_fast.common.termination",
    "pfgen_fast.__main__",
}

RECORD_ORDER = """
import runpy, signal, sys
installed = []
original = signal.signal
def recording(signum, handler):
    if signum == signal.SIGTERM and not installed:
        installed.append(sorted(m for m in sys.modules if m.startswith("pfgen_fast")))
        print(installed[0], file=sys.stderr, flush=True)
    return original(signum, handler)
signal.signal = recording
sys.argv = ["pfgen_fast", "--version"]
runpy.run_module("pfgen_fast", run_name="__main__", alter_sys=True)
"""


def test_the_handler_comes_before_the_command_line_is_imported() -> None:
    result = subprocess.run(
        [sys.executable, "-c", RECORD_ORDER], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    loaded = set(eval(result.stderr.splitlines()[0]))  # a printed list of names
    assert loaded <= BEFORE_HANDLER, sorted(loaded - BEFORE_HANDLER)


def sigterm_caught(pid: int) -> bool:
    """Whether the process has a handler for SIGTERM (bit 15 of SigCgt)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_many_early_sigterms_exit_143(tmp_path: Path) -> None:
    data = published.require(published.PFGEN_DATA)
    # A server that takes connections and never answers: `generate` waits for it.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
    argv = [sys.executable, "-m", "pfgen_fast", "generate", "--data", str(data),
            "--model", "m", "--mode", "qa", "--base-url", url, "--out", str(tmp_path)]  # fmt: skip
    outcomes = []
    try:
        for attempt in range(TRIES):
            process = subprocess.Popen(
                argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )
            deadline = time.monotonic() + 60
            while not sigterm_caught(process.pid) and process.poll() is None:
                assert time.monotonic() < deadline
                time.sleep(0.0005)
            time.sleep(LONGEST_DELAY * attempt / TRIES)
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=120)
            outcomes.append((process.returncode, stderr))
    finally:
        silent.close()
    wrong = [(code, err) for code, err in outcomes if code != 143 or "Traceback" in err]
    assert not wrong, wrong[:3]
    not_last = [err for _, err in outcomes if err.strip().splitlines()[-1] != "terminated"]
    assert not not_last, not_last[:3]
