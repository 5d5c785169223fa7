"""How many worker threads to start: one per CPU this process may run on."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """The CPUs this process may run on (`taskset` and container CPU sets narrow them), as
    the core's own thread pool counts them; `os.cpu_count()` counts every CPU of the
    machine, and more threads than CPUs only take turns on them."""
    if hasattr(os, "sched_getaffinity"):  # not on macOS or Windows
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1
