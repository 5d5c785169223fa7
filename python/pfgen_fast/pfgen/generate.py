"""Generating trials with the published protocol (docs/generation.md): the run's parameters and
directory, the published OpenAI-compatible runner's requests sent through the shared LLM client
(concurrently across trials), each trial written atomically once complete, then packed as
trials.jsonl.xz. A run resumes from its finished trial files and, within the others, from the
client's response cache (every reply is stored as it comes): an interrupted run repeats only
the calls that were in flight. An empty answer is asked again with the same request, which
the cache would answer with the same empty reply: those second asks go through a client
without the cache (`Clients.fresh`), so a resumed run asks them once more."""

from __future__ import annotations

import datetime
import hashlib
import json
import lzma
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.llm import ChatRequest, CompletionRequest, LLMClient, LLMError, LLMReply
from pfgen_fast.pfgen.prompts import Example, Mode, build_task, unescape_prefix

# The `engine` parameter of runs asked through an OpenAI-compatible server.
ENGINE = "openai-api"
# How often a question is asked when its answer comes back empty or fails, before the run
# gives up.
ANSWER_ATTEMPTS = 5
# Requests handed to the client at once, per allowed concurrent request (rounded up to whole
# trials): enough that connections rarely wait for the last answers of a batch.
BATCH_PER_CONNECTION = 16


class GenerationError(PfgenError):
    """The server cannot produce the answers (unreachable, refusing, never answering)."""


@dataclass(frozen=True)
class Clients:
    """The client of a run (`cached`: with the response cache unless --no-cache) and one for
    the questions asked again after an empty answer (`fresh`: never the cache)."""

    cached: LLMClient
    fresh: LLMClient

    @property
    def concurrency(self) -> int:
        return self.cached.concurrency


@dataclass(frozen=True)
class RunParameters:
    """What defines a run: its config.json and directory hash (private settings such as the
    server address, timeouts and concurrency are not part of it)."""

    engine: str
    model: str
    mode: Mode
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


def request_for(parameters: RunParameters, task: dict[str, Any]) -> ChatRequest | CompletionRequest:
    """The published API runner's request for a task: completions for `completion` mode, chat
    completions for `qa` (one user message) and `chat` (system and user messages)."""
    params: dict[str, Any] = {
        "max_tokens": parameters.max_tokens,
        "temperature": parameters.temperature,
        "stop": parameters.stop,
        "seed": task["seed"],
        "top_p": parameters.top_p,  # None: not sent
    }
    if parameters.mode == "completion":
        return CompletionRequest(task["prompt"], params)
    if parameters.mode == "qa":
        return ChatRequest([{"role": "user", "content": task["prompt"]}], params)
    messages = [
        {"role": "system", "content": task["system_prompt"]},
        {"role": "user", "content": task["user_prompt"]},
    ]
    return ChatRequest(messages, params)


def clean_answer(answer: str, mode: Mode) -> str:
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


class TrialAnswers:
    """The trials being answered: their tasks, the answers received so far, and the questions
    to ask again."""

    def __init__(
        self,
        parameters: RunParameters,
        examples: list[Example],
        on_answer: Callable[[], None],
        on_trial: Callable[[int, list[dict[str, Any]]], None],
    ) -> None:
        self.parameters = parameters
        self.examples = examples
        self.prefix = unescape_prefix(parameters.prefix)
        self.on_answer = on_answer
        self.on_trial = on_trial
        self.in_progress: dict[int, TrialInProgress] = {}
        # (trial, question index, after an empty answer) to ask once more.
        self.again: list[tuple[int, int, bool]] = []

    def start(self, trial: int) -> list[tuple[int, int, bool]]:
        """The trial's questions, as (trial, question index, False)."""
        self.in_progress[trial] = TrialInProgress.start(
            self.parameters, self.examples, self.prefix, trial
        )
        return [(trial, index, False) for index in range(len(self.examples))]

    def ask(self, clients: Clients, jobs: list[tuple[int, int, bool]]) -> None:
        """Asks the questions at once, taking each result as it comes: those asked again after
        an empty answer without the cache, the others through it."""
        for fresh in (False, True):
            chosen = [(trial, index) for trial, index, empty in jobs if empty == fresh]
            if not chosen:
                continue
            requests = [
                request_for(self.parameters, self.in_progress[t].tasks[i]) for t, i in chosen
            ]

            def take(position: int, result: LLMReply | LLMError) -> None:
                self.take(*chosen[position], result)  # noqa: B023 (run before the next loop)

            (clients.fresh if fresh else clients.cached).run(requests, on_result=take)

    def take(self, trial: int, index: int, result: LLMReply | LLMError) -> None:
        """Keeps an answer (handing on the trial once complete), or queues the question again;
        a question left without an answer ANSWER_ATTEMPTS times is an error."""
        state = self.in_progress[trial]
        failed = isinstance(result, LLMError)
        if isinstance(result, LLMError):
            answer, reason = "", str(result)
        else:
            answer, reason = clean_answer(result.text, self.parameters.mode), "empty answer"
        if not answer:
            state.attempts[index] += 1
            if state.attempts[index] >= ANSWER_ATTEMPTS:
                question = state.tasks[index]["question"]
                raise GenerationError(
                    f"trial {trial}: no answer to {question!r} after "
                    f"{ANSWER_ATTEMPTS} attempts (last: {reason})"
                )
            self.again.append((trial, index, not failed))
            return
        state.records[index] = {
            "question": state.tasks[index]["question"],
            "answer": answer,
            "timestamp": datetime.datetime.now().isoformat(),
        }
        self.on_answer()
        if state.finished():
            del self.in_progress[trial]
            self.on_trial(trial, [r for r in state.records if r is not None])


def answer_trials(
    parameters: RunParameters,
    clients: Clients,
    examples: list[Example],
    trials: list[int],
    on_answer: Callable[[], None],
    on_trial: Callable[[int, list[dict[str, Any]]], None],
) -> None:
    """Asks every question of the given trials through the client, in trial order and in
    batches of whole trials, so that trials finish one after the other; `on_trial` gets each
    trial's records (in questions.jsonl order) as soon as it is complete. Empty or failed
    answers are asked again in the next batch, first. A server that the client finds down, or
    refusing the requests, ends the run with an LLMError."""
    answers = TrialAnswers(parameters, examples, on_answer, on_trial)
    fresh = deque(trials)
    batch = BATCH_PER_CONNECTION * clients.concurrency
    while answers.again or fresh:
        jobs, answers.again = answers.again, []
        while fresh and len(jobs) < batch:
            jobs += answers.start(fresh.popleft())
        answers.ask(clients, jobs)


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
    clients: Clients,
    examples: list[Example],
    out: Path,
    num_trials: int,
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
        answer_trials(parameters, clients, examples, missing, on_answer, finish_trial)
    except (GenerationError, LLMError) as error:
        kept = sum(trial_path(run_dir, t).exists() for t in range(1, num_trials + 1))
        raise GenerationError(
            f"{error}; {kept} of {num_trials} trials finished in {run_dir} "
            "(run the same command again to resume)"
        ) from None
    pack_trials(run_dir)
    return run_dir
