"""A run of the LLM client always ends: one request of a concurrent batch failing in any way
(refused for itself, a server error, a malformed or empty body, a dropped connection), a
refusal that stops the run, or a callback's error, repeated many times since a hang depends on
timing. Each run has a time limit that counts a hang as a failure."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from batch_faults import FAULTS, one_fails

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.llm import CompletionRequest, LLMClient, LLMError, LLMReply
from pfgen_fast.testing import Reply, serve

REPEATS = 12  # each fault at several places of the batch; the old client hung in 2 of 3
LIMIT = 20.0  # seconds for one run of 16 requests: far more than it takes


def answer(path: str, request: dict[str, Any]) -> Reply:
    return Reply(text=request["prompt"].upper())


def run_within_limit(
    client: LLMClient, **options: Any
) -> list[LLMReply | LLMError] | BaseException:
    """The client's results (or what it raised) for 16 requests; a hang fails the test."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(client.run([CompletionRequest(f"p{i}") for i in range(16)], **options))
        except Exception as error:  # noqa: BLE001 (what the run raised is the outcome)
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(LIMIT)
    assert not thread.is_alive(), "the run hung"
    return outcome[0]


class Switch:
    """A responder that a test replaces between runs on one server."""

    def __init__(self) -> None:
        self.responder: Any = answer

    def __call__(self, path: str, request: dict[str, Any]) -> Reply:
        reply: Reply = self.responder(path, request)
        return reply


@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_one_failing_request_of_a_batch_is_its_slot_and_the_run_ends(fault: str) -> None:
    switch = Switch()
    with serve(switch) as server:
        for repeat in range(REPEATS):
            switch.responder = one_fails(answer, fault, number=1 + repeat % 8)
            client = LLMClient(server.base_url, "m", cache_path=None, max_retries=0, concurrency=8)
            results = run_within_limit(client)
        assert isinstance(results, list), results
        failed = [r for r in results if isinstance(r, LLMError)]
        assert len(results) == 16 and len(failed) == (0 if fault == "empty" else 1)
        answered = [r.text for r in results if isinstance(r, LLMReply)]
        assert len(answered) == 16 - len(failed)


def test_a_refusal_for_every_request_mid_batch_stops_the_run() -> None:
    forbidden = Reply(status=403, error="no access")
    switch = Switch()
    with serve(switch) as server:
        for repeat in range(REPEATS):

            def respond(path: str, request: dict[str, Any], number: int = 1 + repeat % 8) -> Reply:
                return forbidden if request["prompt"] == f"p{number}" else answer(path, request)

            switch.responder = one_fails(respond, "empty", number=99)
            outcome = run_within_limit(
                LLMClient(server.base_url, "m", cache_path=None, concurrency=8)
            )
            assert isinstance(outcome, LLMError) and "HTTP 403: no access" in str(outcome)


def test_an_error_of_a_callback_mid_batch_stops_the_run(tmp_path: Path) -> None:
    with serve(one_fails(answer, "empty", number=0)) as server:
        for repeat in range(REPEATS):

            def stop(index: int, result: object, number: int = 1 + repeat % 8) -> None:
                if index == number:
                    raise PfgenError("enough")

            client = LLMClient(server.base_url, "m", cache_path=tmp_path / f"{repeat}.sqlite3")
            outcome = run_within_limit(client, on_result=stop)
            assert isinstance(outcome, PfgenError) and str(outcome) == "enough"
