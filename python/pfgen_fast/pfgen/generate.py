"""Generating trials with the published protocol (docs/generation.md): the run's parameters and
directory, an OpenAI-compatible backend, answers asked concurrently across trials, each trial
written atomically once complete (so a run resumes), then packed as trials.jsonl.xz."""

from __future__ import annotations

import datetime
import hashlib
import http.client
import json
import lzma
import threading
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.pfgen.prompts import Example, build_task, unescape_prefix

# How often a question is asked when its answer comes back empty or fails, before the run
# gives up.
ANSWER_ATTEMPTS = 5
# Exponential backoff between retries of a failed request, in seconds.
FIRST_BACKOFF = 0.5
MAX_BACKOFF = 16.0
# Statuses that retrying cannot change.
AUTH_STATUSES = (401, 403)
REQUEST_STATUSES = (400, 404, 422)


class GenerationError(PfgenError):
    """The server cannot produce the answers (unreachable, refusing, never answering)."""


class FatalServerError(GenerationError):
    """A reply that retrying cannot change (authentication, unknown model, bad request)."""


@dataclass(frozen=True)
class RunParameters:
    """What defines a run: its config.json and directory hash (private settings such as the
    server address, timeouts and concurrency are not part of it)."""

    engine: str
    model: str
    mode: str
    temperature: float
    top_p: float | None  # None: not sent, the server's default (as the published API runs)
    max_tokens: int = 300
    num_examples: int = 20
    prefix: str = ""  # as typed, escapes not yet interpreted, as the published runners store it
    seed: str = ""

    @property
    def stop(self) -> list[str]:
        return ["Q:", "\n\n"] if self.mode == "completion" else ["Q:"]

    def config_text(self) -> str:
        """`json.dumps` of the parameters sorted by name, as config.json holds it."""
        params: dict[str, Any] = {
            "engine": self.engine,
            "model": self.model,
            "mode": self.mode,
            "num_examples": self.num_examples,
            "stop": self.stop,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        if self.top_p is not None:
            params["top_p"] = self.top_p
        if self.prefix:
            params["prefix"] = self.prefix
        if self.seed:
            # Not a published parameter (the runners offer no seed); keeps runs apart.
            params["seed"] = self.seed
        return json.dumps(dict(sorted(params.items())), ensure_ascii=False)

    def run_directory(self, out: Path) -> Path:
        """{out}/{model}/{first 7 hex digits of the SHA-1 of the config}."""
        digest = hashlib.sha1(self.config_text().encode("utf-8")).hexdigest()[:7]
        return out / self.model / digest


class Backend(Protocol):
    """Something that answers one task (a local engine would be another implementation)."""

    engine: str  # the `engine` parameter of runs made with it

    def complete(self, parameters: RunParameters, task: dict[str, Any]) -> str: ...


class OpenAIBackend:
    """An OpenAI-compatible server (vLLM's, OpenAI, ...), as the published API runner uses it:
    completions for `completion` mode, chat completions for `qa` (one user message) and `chat`
    (system and user messages). Failed requests are retried with exponential backoff."""

    engine = "openai-api"

    def __init__(
        self,
        base_url: str,
        api_key: str,
        timeout: float,
        max_retries: int,
        cancelled: threading.Event,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.cancelled = cancelled  # set when the run stops: no more retries

    def request_body(self, parameters: RunParameters, task: dict[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": parameters.model,
            "max_tokens": parameters.max_tokens,
            "temperature": parameters.temperature,
            "stop": parameters.stop,
            "seed": task["seed"],
        }
        if parameters.top_p is not None:
            body["top_p"] = parameters.top_p
        if parameters.mode == "completion":
            body["prompt"] = task["prompt"]
        elif parameters.mode == "qa":
            body["messages"] = [{"role": "user", "content": task["prompt"]}]
        else:
            body["messages"] = [
                {"role": "system", "content": task["system_prompt"]},
                {"role": "user", "content": task["user_prompt"]},
            ]
        return body

    def complete(self, parameters: RunParameters, task: dict[str, Any]) -> str:
        endpoint = "/completions" if parameters.mode == "completion" else "/chat/completions"
        url = self.base_url + endpoint
        data = json.dumps(self.request_body(parameters, task), ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        delay = FIRST_BACKOFF
        failure = ""
        tries = 0
        while tries <= self.max_retries:
            if tries > 0:
                if self.cancelled.wait(delay):
                    break
                delay = min(delay * 2, MAX_BACKOFF)
            tries += 1
            request = urllib.request.Request(url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    reply = json.loads(response.read())
                return reply_text(reply, parameters.mode)
            except urllib.error.HTTPError as error:
                detail = error_detail(error)
                if error.code in AUTH_STATUSES:
                    hint = "check" if self.api_key else "set"
                    raise FatalServerError(
                        f"{url}: authentication failed (HTTP {error.code}{detail}); "
                        f"{hint} OPENAI_API_KEY"
                    ) from None
                if error.code in REQUEST_STATUSES:
                    raise FatalServerError(f"{url}: HTTP {error.code}{detail}") from None
                failure = f"HTTP {error.code}{detail}"
            except (OSError, http.client.HTTPException) as error:
                # URLError (refused, unknown host), timeouts, dropped connections.
                failure = str(getattr(error, "reason", "") or error) or type(error).__name__
            except (ValueError, KeyError, IndexError, TypeError):
                failure = "malformed reply"
        raise GenerationError(f"{url}: no answer after {tries} tries ({failure})")


def reply_text(reply: Any, mode: str) -> str:
    """The generated text of a (chat) completion reply; a missing text is empty."""
    choice = reply["choices"][0]
    text = choice["text"] if mode == "completion" else choice["message"]["content"]
    if text is None:
        return ""
    if not isinstance(text, str):
        raise TypeError("the generated text is not a string")
    return text


def error_detail(error: urllib.error.HTTPError) -> str:
    """The start of an error reply's body, which usually says what is wrong."""
    try:
        body = error.read(300).decode("utf-8", "replace").strip()
    except (OSError, http.client.HTTPException):
        body = ""
    return f": {' '.join(body.split())}" if body else ""


def clean_answer(answer: str, mode: str) -> str:
    """qa and chat: keep only what follows the first `A:`; always stripped."""
    if mode != "completion" and "A:" in answer:
        answer = answer.split("A:", 1)[1]
    return answer.strip()


def trial_path(run_dir: Path, trial: int) -> Path:
    return run_dir / f"trial_{trial:03d}.jsonl"


@dataclass
class TrialInProgress:
    """The tasks of one trial and the answer records received so far."""

    tasks: list[dict[str, Any]]
    records: list[dict[str, Any] | None]
    attempts: list[int]  # empty or failed answers so far, per question

    @classmethod
    def start(
        cls, parameters: RunParameters, examples: list[Example], prefix: str, trial: int
    ) -> TrialInProgress:
        tasks = [
            build_task(
                examples,
                example.question,
                parameters.mode,
                trial,
                parameters.num_examples,
                prefix,
                parameters.seed,
            )
            for example in examples
        ]
        return cls(tasks, [None] * len(tasks), [0] * len(tasks))

    def finished(self) -> bool:
        return all(record is not None for record in self.records)


def answer_trials(
    parameters: RunParameters,
    backend: Backend,
    examples: list[Example],
    trials: list[int],
    concurrency: int,
    cancelled: threading.Event,
    on_answer: Callable[[], None],
    on_trial: Callable[[int, list[dict[str, Any]]], None],
) -> None:
    """Asks every question of the given trials, `concurrency` requests at a time, in trial
    order so that trials finish one after the other; `on_trial` gets each trial's records
    (in questions.jsonl order) as soon as it is complete. Empty or failed answers are asked
    again, up to ANSWER_ATTEMPTS times per question."""
    prefix = unescape_prefix(parameters.prefix)
    in_progress: dict[int, TrialInProgress] = {}
    again: deque[tuple[int, int]] = deque()  # (trial, question index) to ask once more
    fresh: Iterator[tuple[int, int]] = ((t, i) for t in trials for i in range(len(examples)))
    in_flight: dict[Future[str], tuple[int, int]] = {}
    failures_in_a_row = 0

    def ask(task: dict[str, Any]) -> str:
        return clean_answer(backend.complete(parameters, task), parameters.mode)

    def fill(pool: ThreadPoolExecutor) -> None:
        # A short queue beyond the running requests: retries go first, and nothing much is
        # left to cancel when the run stops.
        while len(in_flight) < 2 * concurrency:
            job = again.popleft() if again else next(fresh, None)
            if job is None:
                return
            trial, index = job
            if trial not in in_progress:
                in_progress[trial] = TrialInProgress.start(parameters, examples, prefix, trial)
            in_flight[pool.submit(ask, in_progress[trial].tasks[index])] = job

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        try:
            fill(pool)
            while in_flight:
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in done:
                    trial, index = in_flight.pop(future)
                    state = in_progress[trial]
                    try:
                        answer = future.result()
                    except FatalServerError:
                        raise
                    except GenerationError as error:
                        # Retried already: the server is down when nothing but failures came
                        # back since the last answer, else it is flaky and the question waits.
                        failures_in_a_row += 1
                        if failures_in_a_row >= concurrency:
                            raise
                        answer, reason = "", str(error)
                    else:
                        failures_in_a_row = 0
                        reason = "empty answer"
                    if not answer:
                        state.attempts[index] += 1
                        if state.attempts[index] >= ANSWER_ATTEMPTS:
                            question = state.tasks[index]["question"]
                            raise GenerationError(
                                f"trial {trial}: no answer to {question!r} after "
                                f"{ANSWER_ATTEMPTS} attempts (last: {reason})"
                            )
                        again.append((trial, index))
                        continue
                    state.records[index] = {
                        "question": state.tasks[index]["question"],
                        "answer": answer,
                        "timestamp": datetime.datetime.now().isoformat(),
                    }
                    on_answer()
                    if state.finished():
                        del in_progress[trial]
                        on_trial(trial, [r for r in state.records if r is not None])
                fill(pool)
        except BaseException:
            # Stop quickly: no new requests, no more retries; running ones end by their timeout.
            cancelled.set()
            for future in in_flight:
                future.cancel()
            raise


def write_file(path: Path, data: bytes) -> None:
    """Atomically (folders made as needed); a failure is an error naming the file."""
    try:
        write_atomically(path, data)
    except OSError as error:
        raise PfgenError(f"{path}: cannot write: {error.strerror or error}") from None


def write_trial(path: Path, records: list[dict[str, Any]]) -> None:
    """One JSON line per question, written to a temporary file and renamed into place; an
    existing trial file is never rewritten."""
    if path.exists():
        return
    text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    write_file(path, text.encode("utf-8"))


def pack_trials(run_dir: Path) -> Path:
    """trials.jsonl.xz: every trial file's lines, sorted bytewise (`LC_ALL=C sort`), xz -9."""
    lines: list[bytes] = []
    for path in sorted(run_dir.glob("trial_[0-9][0-9][0-9].jsonl")):
        lines.extend(line for line in path.read_bytes().splitlines() if line.strip())
    lines.sort()
    target = run_dir / "trials.jsonl.xz"
    write_file(target, lzma.compress(b"".join(line + b"\n" for line in lines), preset=9))
    return target


def generate(
    parameters: RunParameters,
    backend: Backend,
    examples: list[Example],
    out: Path,
    num_trials: int,
    concurrency: int,
    cancelled: threading.Event,
    on_answer: Callable[[], None],
    on_trial: Callable[[], None],
) -> Path:
    """Writes config.json and every missing trial file of trials 1..num_trials, then packs
    them; returns the run directory. Finished trials are kept and never rewritten."""
    run_dir = parameters.run_directory(out)
    write_file(run_dir / "config.json", (parameters.config_text() + "\n").encode("utf-8"))
    missing = []
    for trial in range(1, num_trials + 1):
        if trial_path(run_dir, trial).exists():
            on_trial()
        else:
            missing.append(trial)

    def finish_trial(trial: int, records: list[dict[str, Any]]) -> None:
        write_trial(trial_path(run_dir, trial), records)
        on_trial()

    try:
        answer_trials(
            parameters, backend, examples, missing, concurrency, cancelled, on_answer, finish_trial
        )
    except GenerationError as error:
        kept = sum(trial_path(run_dir, t).exists() for t in range(1, num_trials + 1))
        raise GenerationError(
            f"{error}; {kept} of {num_trials} trials finished in {run_dir} "
            "(run the same command again to resume)"
        ) from None
    pack_trials(run_dir)
    return run_dir
