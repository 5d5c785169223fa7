"""SIGTERM and the event loop of the model-calling commands (`cli.on_sigterm`): whenever it
comes, the run ends through the loop's cancelling, and nothing is left behind for the
interpreter to complain about at exit (a coroutine never awaited, a half-made loop). Each case
runs in its own interpreter, with a real signal where one can be placed deterministically."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )


def test_a_task_spawned_just_before_the_cancelling_still_runs() -> None:
    """The cancelling comes after a task spawned an anyio child (httpx's connect does) and
    before the child's first step: the child is left to its task group, which cancels it once
    it has started, so its coroutine is not left never awaited."""
    done = run_python(
        """
        import asyncio
        import anyio
        from pfgen_fast.cli import cancel_every_task

        started = []

        async def child():
            started.append(True)
            await anyio.sleep(10)

        async def parent():
            async with anyio.create_task_group() as group:
                group.start_soon(child)
                cancel_every_task(asyncio.get_running_loop())
                await anyio.sleep(10)

        try:
            asyncio.run(parent())
        except asyncio.CancelledError:
            print("cancelled", started)
        """
    )
    assert (done.stdout, done.stderr) == ("cancelled [True]\n", "")


def test_a_sigterm_while_asyncio_makes_the_loop_ends_it_in_the_loop() -> None:
    """A SIGTERM that comes while `asyncio.run` builds its loop (here: when it asks for the
    selector) comes again once the loop runs, and ends it by cancelling, instead of leaving a
    half-made loop and the coroutine it was given."""
    done = run_python(
        """
        import asyncio, os, selectors, signal
        from pfgen_fast import cli

        signal.signal(signal.SIGTERM, cli.on_sigterm)
        default_selector = selectors.DefaultSelector

        def terminating_selector():
            os.kill(os.getpid(), signal.SIGTERM)
            return default_selector()

        selectors.DefaultSelector = terminating_selector

        async def main():
            await asyncio.sleep(10)

        try:
            asyncio.run(main())
        except asyncio.CancelledError:
            print("cancelled in the loop", cli.TERMINATED_LOOP.is_set())
        """
    )
    assert (done.stdout, done.stderr) == ("cancelled in the loop True\n", "")
